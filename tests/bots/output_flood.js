// Writes 64 MiB to stdout (the kit sends it to stderr) and 64 MiB to stderr every move, as
// output_flood.py does: PROTOCOL_ERROR once past the match's output cap, within its first
// move. (Before the kit wrote its output synchronously, node queued in memory what its full
// stderr pipe did not take, played on, and died when V8 ran out of memory: a crash.)
const BLOCK = "x".repeat(1 << 20);

function play(observation) {
  for (let i = 0; i < 64; i++) {
    process.stdout.write(BLOCK);
    console.error(BLOCK);
  }
  return observation.legal_moves[0];
}
