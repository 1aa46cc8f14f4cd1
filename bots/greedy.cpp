// greedy, in C++: play the heaviest tile that fits (as bots/greedy.py does, move for move).
//
// Shedding the tiles with the most pips first keeps the hand's count low. Ties go to the
// first of the tied moves in legal_moves order, so greedy is deterministic.
#define ARENA_NAME "greedy-cpp"
#include "arena.hpp"

arena::Move play(const arena::Observation& observation) {
    const arena::Move* best = &observation.legal_moves.front();
    for (const arena::Move& move : observation.legal_moves) {
        if (move.tile.pips() > best->tile.pips()) best = &move;  // the first of equals stays
    }
    return *best;
}
