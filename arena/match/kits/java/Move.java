package arena;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A move: a tile and the end of the line it goes on, {@code "L"} or {@code "R"}, or null for
 * the round's first tile. Written {@code "6-4L"}, {@code "6-4R"}, {@code "6-6"}.
 */
public record Move(Tile tile, String end) {
    private static final Map<String, Move> PARSED = new ConcurrentHashMap<>();

    public Move {
        if (tile == null || !(end == null || end.equals("L") || end.equals("R"))) {
            throw new IllegalArgumentException("not a move: " + tile + " on " + end);
        }
        end = end == null ? null : end.equals("L") ? "L" : "R";
    }

    /** Parses {@code "6-4L"}, {@code "6-4R"} or {@code "6-6"} (a round's first tile). */
    public static Move parse(String text) {
        Move move = PARSED.get(text);
        if (move == null) {
            char last = text.isEmpty() ? ' ' : text.charAt(text.length() - 1);
            boolean onEnd = last == 'L' || last == 'R';
            String tile = onEnd ? text.substring(0, text.length() - 1) : text;
            move = new Move(Tile.parse(tile), onEnd ? String.valueOf(last) : null);
            if (PARSED.size() < 4096) {
                PARSED.put(text, move);
            }
        }
        return move;
    }

    /** Whether this move plays the round's first tile. */
    public boolean isLead() {
        return end == null;
    }

    /** Whether this move goes on the left end. */
    public boolean onLeft() {
        return "L".equals(end);
    }

    /** Whether this move goes on the right end. */
    public boolean onRight() {
        return "R".equals(end);
    }

    @Override
    public String toString() {
        return end == null ? tile.toString() : tile + end;
    }
}
