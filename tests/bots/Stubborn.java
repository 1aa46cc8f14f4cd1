import arena.*;

/**
 * Ignores SIGTERM, and its shutdown hook never returns (the kit's exit at "quit" runs it):
 * it plays legally, and its process must still be gone when the match is over.
 */
public class Stubborn implements Player {
    static {
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), signal -> { });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            while (true) {
                Thread.onSpinWait();
            }
        }));
    }

    @Override
    public Move play(Observation observation) {
        return observation.legalMoves.get(0);
    }
}
