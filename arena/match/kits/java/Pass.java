package arena;

/** {@code seat} could neither play nor draw, and passed. */
public record Pass(int seat) implements Event {
    @Override
    public String toString() {
        return "pass " + seat;
    }
}
