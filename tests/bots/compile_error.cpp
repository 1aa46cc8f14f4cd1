// A C++ bot that does not compile: every game is forfeited (a crash), the compiler's
// message in the verdict.
#include "arena.hpp"

arena::Move play(const arena::Observation& observation) {
    return observation.legal_moves[0] + undeclared;
}
