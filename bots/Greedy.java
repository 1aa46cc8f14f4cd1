import arena.Move;
import arena.Observation;
import arena.Player;

/**
 * greedy, in Java: play the heaviest tile that fits, exactly as bots/greedy.py does.
 *
 * <p>Ties go to the first of the tied moves in legalMoves order (sorted by tile, then lead,
 * left, right), so it is deterministic and plays the same moves as greedy.py on the same
 * seeds.
 */
public class Greedy implements Player {
    public static final String NAME = "greedy-java";

    @Override
    public Move play(Observation observation) {
        Move best = observation.legalMoves.get(0);
        for (Move move : observation.legalMoves) {
            if (move.tile().pips() > best.tile().pips()) {
                best = move;
            }
        }
        return best;
    }
}
