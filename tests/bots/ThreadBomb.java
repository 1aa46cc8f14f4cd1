import arena.*;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts threads until it cannot, at every move: the sandbox's process limit (RLIMIT_NPROC,
 * which counts threads) stops it, Java says "unable to create native thread", and the game
 * is its crash.
 */
public class ThreadBomb implements Player {
    private static final List<Thread> STARTED = new ArrayList<>();

    @Override
    public Move play(Observation observation) {
        while (true) {
            Thread thread = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException exc) {
                    // asleep for ever
                }
            });
            thread.setDaemon(true);
            thread.start();
            STARTED.add(thread);
        }
    }
}
