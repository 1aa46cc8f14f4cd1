package arena;

import java.util.Map;

/**
 * A game as it starts: its id, your seat, the number of seats, team play, and the rule set's
 * name and parameters ({@code params.get("target")}: docs/rules.md).
 */
public record GameInfo(
        String game, int seat, int players, boolean teams, String rules, Map<String, Object> params) {}
