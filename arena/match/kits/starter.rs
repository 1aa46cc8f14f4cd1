// @NAME@: my domino bot, in Rust (the rust runtime: Debian's rustc 1.63), written from the
// arena's starter (`arena new-bot NAME --runtime rust`; docs/writing-a-bot.md). The arena
// compiles it (rustc --edition 2021 -O, static) in the sandbox, and shows the compiler's
// errors as it printed them. Check it and play it with:
//
//     ./run arena check @FILE@
//     ./run arena play --rules draw --bots @FILE@,greedy --games 200
//
// As it is, it plays the heaviest tile that fits (as bots/greedy.py does, move for move).
// The rust runtime has no kit and no crates (the standard library only): a Rust bot is a
// program speaking the protocol itself (docs/protocol.md), here version 3 with the least
// reading it needs: each request's "legal_moves":["6-4L","6-4R"] (sorted), answered in one
// "moves" reply echoing the request's "seq". The referee writes its JSON without spaces,
// one message a line. A bot that tracks the round folds each request's "round" and
// "events" in, as the kits do.
use std::io::{self, BufRead, Write};

/// The pips of a move's notation ("6-4L": 10).
fn pips(notation: &str) -> i32 {
    let tile = notation.trim_end_matches(|c| c == 'L' || c == 'R');
    tile.split('-').map(|half| half.parse::<i32>().unwrap_or(0)).sum()
}

/// The move to play among the legal moves (the text after `"legal_moves":[`): the first of
/// those with the most pips, quoted.
fn play(list: &str) -> String {
    let moves = &list[..list.find(']').unwrap_or(list.len())];
    let mut best = "";
    for quoted in moves.split(',') {
        let notation = quoted.trim_matches('"');
        if best.is_empty() || pips(notation) > pips(best) {
            best = notation;
        }
    }
    format!("\"{}\"", best)
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => break,
        };
        if line.contains("\"type\":\"hello\"") {
            writeln!(out, "{{\"type\":\"hello\",\"protocol\":3,\"bot\":\"@NAME@\"}}").unwrap();
        } else if line.contains("\"type\":\"act\"") {
            let seq = line
                .split("\"seq\":")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .unwrap_or("0");
            let moves: Vec<String> = line.split("\"legal_moves\":[").skip(1).map(play).collect();
            writeln!(out, "{{\"type\":\"moves\",\"seq\":{},\"moves\":[{}]}}", seq, moves.join(","))
                .unwrap();
        } else if line.contains("\"type\":\"quit\"") {
            break;
        }
        out.flush().unwrap(); // start and end messages need no reply
    }
}
