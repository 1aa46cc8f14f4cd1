package arena;

/**
 * A tile, high half first: {@code Tile.of(6, 4)}, written {@code "6-4"}. Tiles sort by their
 * high half, then their low half (as a hand and the legal moves are sorted).
 */
public record Tile(int high, int low) implements Comparable<Tile> {
    private static final Tile[][] MADE = new Tile[64][64];

    public Tile {
        if (low < 0 || high < low) {
            throw new IllegalArgumentException("not a tile: " + high + "-" + low);
        }
    }

    /** The tile with halves {@code a} and {@code b}, in either order. */
    public static Tile of(int a, int b) {
        int high = Math.max(a, b);
        int low = Math.min(a, b);
        if (low < 0 || high >= MADE.length) {
            return new Tile(high, low);
        }
        Tile made = MADE[high][low];
        if (made == null) {
            made = MADE[high][low] = new Tile(high, low);
        }
        return made;
    }

    /** Parses {@code "6-4"} (either order). */
    public static Tile parse(String text) {
        int dash = text.indexOf('-');
        if (dash <= 0) {
            throw new IllegalArgumentException("not a tile: \"" + text + "\"");
        }
        return of(Integer.parseInt(text.substring(0, dash)), Integer.parseInt(text.substring(dash + 1)));
    }

    /** Both halves added: 6-4 has 10. */
    public int pips() {
        return high + low;
    }

    /** Whether both halves are equal. */
    public boolean isDouble() {
        return high == low;
    }

    /** Whether either half shows {@code pip}. */
    public boolean matches(int pip) {
        return high == pip || low == pip;
    }

    /** The half opposite a half showing {@code pip}. */
    public int other(int pip) {
        if (high == pip) {
            return low;
        }
        if (low == pip) {
            return high;
        }
        throw new IllegalArgumentException(this + " has no " + pip);
    }

    @Override
    public int compareTo(Tile that) {
        return high != that.high ? Integer.compare(high, that.high) : Integer.compare(low, that.low);
    }

    @Override
    public String toString() {
        return high + "-" + low;
    }
}
