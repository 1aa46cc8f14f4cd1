package arena;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * One game as this bot has seen it over protocol version 3: the round's state, kept up to date
 * by folding in each request's new events (docs/protocol.md, "Version 3").
 */
final class GameView {
    private final GameInfo info;
    private final Map<String, Event> parsed;
    private int round = -1;
    private int leader;
    private final List<Tile> hand = new ArrayList<>();
    private final ArrayDeque<int[]> line = new ArrayDeque<>();
    private int left = -1;
    private int right = -1;
    private int[] sizes = new int[0];
    private int boneyard;
    private int drawable;
    private int[] scores = new int[0];
    private final List<Event> history = new ArrayList<>();

    GameView(GameInfo info, Map<String, Event> parsed) {
        this.info = info;
        this.parsed = parsed;
    }

    /** The observation a request stands for: a new round's state, then each event folded in. */
    Observation fold(Map<?, ?> request) {
        Object start = request.get("round");
        if (start != null) {
            begin((Map<?, ?>) start);
        }
        for (Object text : (List<?>) request.get("events")) {
            Event event = event((String) text);
            history.add(event);
            if (event instanceof Play play) {
                play(play);
            } else if (event instanceof Draw draw) {
                int who = draw.seat();
                sizes[who]++;
                boneyard--;
                drawable--;
                if (who == info.seat() && draw.tile() != null) {
                    int at = Collections.binarySearch(hand, draw.tile());
                    hand.add(at < 0 ? -at - 1 : at, draw.tile());
                }
            }
        }
        List<?> given = (List<?>) request.get("legal_moves");
        Move[] legal = new Move[given.size()];
        for (int i = 0; i < legal.length; i++) {
            legal[i] = Move.parse((String) given.get(i));
        }
        List<int[]> pairs = new ArrayList<>(line.size());
        for (int[] pair : line) {
            pairs.add(new int[] {pair[0], pair[1]});
        }
        return new Observation(
                info,
                round,
                leader,
                List.copyOf(hand),
                Collections.unmodifiableList(pairs),
                left < 0 ? null : new int[] {left, right},
                sizes.clone(),
                boneyard,
                drawable,
                scores.clone(),
                List.copyOf(history),
                List.of(legal));
    }

    private void begin(Map<?, ?> start) {
        round = number(start.get("number"));
        leader = number(start.get("leader"));
        hand.clear();
        for (Object text : (List<?>) start.get("hand")) {
            hand.add(Tile.parse((String) text));
        }
        Collections.sort(hand);
        sizes = numbers((List<?>) start.get("hand_sizes"));
        boneyard = number(start.get("boneyard_size"));
        drawable = number(start.get("drawable"));
        scores = numbers((List<?>) start.get("scores"));
        line.clear();
        left = right = -1;
        history.clear();
    }

    private void play(Play event) {
        int who = event.seat();
        Tile tile = event.move().tile();
        String end = event.move().end();
        if (end == null) {
            left = tile.high();
            right = tile.low();
            line.addLast(new int[] {left, right});
        } else if (end.equals("L")) {
            int old = left;
            left = tile.other(old);
            line.addFirst(new int[] {left, old});
        } else {
            int old = right;
            right = tile.other(old);
            line.addLast(new int[] {old, right});
        }
        sizes[who]--;
        if (who == info.seat() && !hand.remove(tile)) {
            throw new IllegalArgumentException(event + ": seat " + who + " does not hold " + tile);
        }
        if (event.points() != 0) {
            scores[info.teams() ? who % 2 : who] += event.points();
        }
    }

    /** An event's notation parsed: "play 0 6-4L" ("play 0 5-0R 1" with points), "draw 1",
     * "draw 0 6-4", "pass 1". */
    private Event event(String text) {
        Event event = parsed.get(text);
        if (event != null) {
            return event;
        }
        String[] parts = text.split(" ");
        int seat = parts.length > 1 ? Integer.parseInt(parts[1]) : -1;
        if (seat >= 0 && parts[0].equals("play") && (parts.length == 3 || parts.length == 4)) {
            int points = parts.length == 4 ? Integer.parseInt(parts[3]) : 0;
            event = new Play(seat, Move.parse(parts[2]), points);
        } else if (seat >= 0 && parts[0].equals("draw") && (parts.length == 2 || parts.length == 3)) {
            event = new Draw(seat, parts.length == 3 ? Tile.parse(parts[2]) : null);
        } else if (seat >= 0 && parts[0].equals("pass") && parts.length == 2) {
            event = new Pass(seat);
        } else {
            throw new IllegalArgumentException("not an event: \"" + text + "\"");
        }
        if (parsed.size() < 4096) {
            parsed.put(text, event);
        }
        return event;
    }

    private static int number(Object value) {
        return ((Number) value).intValue();
    }

    private static int[] numbers(List<?> values) {
        int[] out = new int[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = number(values.get(i));
        }
        return out;
    }
}
