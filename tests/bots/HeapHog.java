import arena.*;
import java.util.ArrayList;
import java.util.List;

/** Keeps every array it allocates, at every move: the heap's cap (-Xmx) stops it with an
 * OutOfMemoryError, and the game is its crash. */
public class HeapHog implements Player {
    @Override
    public Move play(Observation observation) {
        List<long[]> kept = new ArrayList<>();
        while (true) {
            kept.add(new long[1 << 20]);
        }
    }
}
