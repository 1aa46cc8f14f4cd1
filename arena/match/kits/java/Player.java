package arena;

import java.util.Map;

/**
 * A bot: a public class implementing this, with a public constructor taking nothing. The kit
 * makes one instance a game (its fields live for that game, all its rounds).
 */
public interface Player {
    /** Returns one of {@code observation.legalMoves}. */
    Move play(Observation observation);

    /** Optional: the game's setup, before its first move. */
    default void start(GameInfo game) {}

    /** Optional: the game's result ({@code "winners"}, {@code "scores"}, ...). */
    default void end(Map<String, Object> result) {}
}
