package arena;

/** One event of a round's history: a {@link Play}, a {@link Draw} or a {@link Pass}. */
public sealed interface Event permits Play, Draw, Pass {
    /** The seat it happened to. */
    int seat();
}
