package arena;

import java.util.List;
import java.util.Map;

/**
 * Everything your seat may know at a decision (docs/writing-a-bot.md, section 3), a fresh
 * object at each: never another seat's tiles, never the boneyard's order.
 */
public final class Observation {
    /** Your seat, 0 to players - 1 (play passes to seat + 1). */
    public final int seat;
    /** The number of seats. */
    public final int players;
    /** Whether seats 0 + 2 play against 1 + 3. */
    public final boolean teams;
    /** The rule set's name ({@code "draw"}). */
    public final String rules;
    /** Its parameters (docs/rules.md): numbers are Long, lists List, tables Map. */
    public final Map<String, Object> params;
    /** The round (deal) of this game, from 1. */
    public final int round;
    /** The seat that played the round's first tile. */
    public final int leader;
    /** Your tiles, ascending. */
    public final List<Tile> hand;
    /** The tiles played, left to right, each as {left half, right half}. */
    public final List<int[]> line;
    /** The open ends {left, right}; null when you play the round's first tile. */
    public final int[] ends;
    /** How many tiles each seat holds. */
    public final int[] handSizes;
    /** Tiles in the boneyard. */
    public final int boneyardSize;
    /** How many of them may still be drawn. */
    public final int drawable;
    /** The game's scores, per seat (per team in team play). */
    public final int[] scores;
    /** This round's public events, in order. */
    public final List<Event> history;
    /** Your legal moves, sorted (by tile, then lead, left, right): return one of them. */
    public final List<Move> legalMoves;

    Observation(
            GameInfo info,
            int round,
            int leader,
            List<Tile> hand,
            List<int[]> line,
            int[] ends,
            int[] handSizes,
            int boneyardSize,
            int drawable,
            int[] scores,
            List<Event> history,
            List<Move> legalMoves) {
        this.seat = info.seat();
        this.players = info.players();
        this.teams = info.teams();
        this.rules = info.rules();
        this.params = info.params();
        this.round = round;
        this.leader = leader;
        this.hand = hand;
        this.line = line;
        this.ends = ends;
        this.handSizes = handSizes;
        this.boneyardSize = boneyardSize;
        this.drawable = drawable;
        this.scores = scores;
        this.history = history;
        this.legalMoves = legalMoves;
    }

    /** Your index into {@code scores}: your team in team play, else your seat. */
    public int side() {
        return teams ? seat % 2 : seat;
    }

    /** Your partner's seat in team play, else -1. */
    public int partner() {
        return teams ? (seat + 2) % players : -1;
    }

    /** A whole-number parameter of the rules ({@code intParam("target")}), or {@code otherwise}. */
    public int intParam(String name, int otherwise) {
        return params.get(name) instanceof Number number ? number.intValue() : otherwise;
    }

    /** The observation as the protocol's version 1 JSON object (docs/protocol.md). */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(512);
        out.append("{\"seat\":").append(seat).append(",\"players\":").append(players);
        out.append(",\"teams\":").append(teams).append(",\"rules\":{\"name\":");
        Json.write(out, rules);
        out.append(",\"params\":");
        Json.write(out, params);
        out.append("},\"round\":").append(round).append(",\"leader\":").append(leader);
        out.append(",\"to_move\":").append(seat).append(",\"hand\":[");
        for (int i = 0; i < hand.size(); i++) {
            out.append(i > 0 ? ",\"" : "\"").append(hand.get(i)).append('"');
        }
        out.append("],\"line\":[");
        for (int i = 0; i < line.size(); i++) {
            int[] pair = line.get(i);
            out.append(i > 0 ? ",[" : "[").append(pair[0]).append(',').append(pair[1]).append(']');
        }
        out.append("],\"ends\":");
        out.append(ends == null ? "null" : "[" + ends[0] + "," + ends[1] + "]");
        out.append(",\"hand_sizes\":");
        numbers(out, handSizes);
        out.append(",\"boneyard_size\":").append(boneyardSize);
        out.append(",\"drawable\":").append(drawable).append(",\"scores\":");
        numbers(out, scores);
        out.append(",\"history\":[");
        for (int i = 0; i < history.size(); i++) {
            Event event = history.get(i);
            out.append(i > 0 ? "," : "");
            if (event instanceof Play play) {
                out.append("{\"type\":\"play\",\"seat\":").append(play.seat());
                out.append(",\"move\":\"").append(play.move()).append('"');
                out.append(play.points() > 0 ? ",\"points\":" + play.points() : "").append('}');
            } else if (event instanceof Draw draw) {
                out.append("{\"type\":\"draw\",\"seat\":").append(draw.seat()).append(",\"tile\":");
                out.append(draw.tile() == null ? "null" : "\"" + draw.tile() + "\"").append('}');
            } else {
                out.append("{\"type\":\"pass\",\"seat\":").append(event.seat()).append('}');
            }
        }
        out.append("],\"legal_moves\":[");
        for (int i = 0; i < legalMoves.size(); i++) {
            out.append(i > 0 ? ",\"" : "\"").append(legalMoves.get(i)).append('"');
        }
        return out.append("]}").toString();
    }

    private static void numbers(StringBuilder out, int[] values) {
        out.append('[');
        for (int i = 0; i < values.length; i++) {
            out.append(i > 0 ? "," : "").append(values[i]);
        }
        out.append(']');
    }
}
