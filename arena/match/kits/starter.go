// @NAME@: my domino bot, in Go (the go runtime: Debian's Go 1.19), written from the arena's
// starter (`arena new-bot NAME --runtime go`; docs/writing-a-bot.md). The arena builds it
// (go build, static: no cgo) in the sandbox, and shows the compiler's errors as it printed
// them. Check it and play it with:
//
//	./run arena check @FILE@
//	./run arena play --rules draw --bots @FILE@,greedy --games 200
//
// As it is, it plays the heaviest tile that fits (as bots/greedy.py does, move for move).
// The go runtime has no kit: a Go bot is a program speaking the protocol itself
// (docs/protocol.md) with encoding/json, here version 3, reading only each request's
// legal moves (sorted notations such as "6-4L"). A bot that tracks the round folds each
// request's "round" and "events" in, as the kits do. Standard library only.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type request struct {
	Game       string   `json:"game"`
	LegalMoves []string `json:"legal_moves"`
}

type message struct {
	Type     string    `json:"type"`
	Seq      int64     `json:"seq"`
	Requests []request `json:"requests"`
}

// pips is the number of pips of a move's notation ("6-4L": 10).
func pips(move string) int {
	halves := strings.SplitN(strings.TrimRight(move, "LR"), "-", 2)
	high, _ := strconv.Atoi(halves[0])
	low, _ := strconv.Atoi(halves[len(halves)-1])
	return high + low
}

// play returns one of the legal moves: the first of those with the most pips.
func play(legal []string) string {
	best := legal[0]
	for _, move := range legal {
		if pips(move) > pips(best) {
			best = move
		}
	}
	return best
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<24)
	out := json.NewEncoder(os.Stdout) // one write a message: nothing to flush
	for in.Scan() {
		var m message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "not a message:", err)
			os.Exit(3)
		}
		switch m.Type {
		case "hello":
			out.Encode(map[string]any{"type": "hello", "protocol": 3, "bot": "@NAME@"})
		case "act":
			moves := make([]string, 0, len(m.Requests))
			for _, r := range m.Requests {
				moves = append(moves, play(r.LegalMoves))
			}
			out.Encode(map[string]any{"type": "moves", "seq": m.Seq, "moves": moves})
		case "quit":
			return
		}
	}
}
