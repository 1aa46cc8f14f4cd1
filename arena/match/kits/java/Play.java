package arena;

/** {@code seat} played {@code move}; {@code points}: what it scored in play (muggins), else 0. */
public record Play(int seat, Move move, int points) implements Event {
    @Override
    public String toString() {
        return "play " + seat + " " + move + (points > 0 ? " " + points : "");
    }
}
