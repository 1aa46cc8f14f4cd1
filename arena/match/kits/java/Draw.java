package arena;

/** {@code seat} drew a tile: {@code tile} is yours when you drew it, else null (hidden). */
public record Draw(int seat, Tile tile) implements Event {
    @Override
    public String toString() {
        return "draw " + seat + (tile == null ? "" : " " + tile);
    }
}
