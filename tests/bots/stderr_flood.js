// Writes 1.2 MB to stderr every move, as stderr_flood.py does: PROTOCOL_ERROR once its
// output passes the match's cap (16 MiB + 1 MiB a game), some twenty moves in.
function play(observation) {
  console.log("noise ".repeat(200000));
  return observation.legal_moves[0];
}
