"""A tournament's stored tally (``tournament_tallies``, migration 0026): its done games
grouped as its page counts them (the entrant label at each seat, the places, the forfeiting
seat, the ending), each group's number of games and each seat's points summed.

:func:`add_match` adds a match's games in the transaction that stores its result
(:func:`arena.store.queue.complete_match`), an upsert a group, so that the page reads a few
rows a tournament (:func:`arena.store.boards.stored_tally`), never its games.
:func:`fill` counts matches stored otherwise (the migration's fill of the tournaments played
before it, a benchmark's bulk insert), a batch of matches a statement.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from arena.engine.rules import MAX_PLAYERS

__all__ = ["FILL_BATCH", "NO_SEAT", "add_match", "fill", "grouped_sql"]

#: ``fault_seat`` of a group without a forfeit (a unique index treats NULLs as distinct,
#: so the group's key columns hold no NULL: no places is '', no ending '').
NO_SEAT = -1
#: Matches a statement of :func:`fill` counts at most (by id range).
FILL_BATCH = 2000

_POINTS = tuple(f"points{seat}" for seat in range(MAX_PLAYERS))
_KEY = "tournament_id, labels, places, fault_seat, termination"

# The done games of the matches ``{where}`` picks (on ``m``, the matches) grouped by
# tournament and the page's key, each group's count and its seats' points summed.
_GROUPED = {
    "sqlite": """
        WITH played AS MATERIALIZED (
            SELECT m.tournament_id AS tournament_id,
                   coalesce(m.labels, m.seats) AS labels,
                   json_extract(m.result, g.fullkey || '.places') AS places,
                   json_extract(m.result, g.fullkey || '.verdict.seat') AS fault_seat,
                   json_extract(m.result, g.fullkey || '.termination') AS termination,
                   json_extract(m.result, g.fullkey || '.points') AS points
            FROM matches AS m, json_each(m.result, '$.games') AS g
            WHERE {where}
        )
        SELECT tournament_id, labels, coalesce(places, '') AS places,
               coalesce(fault_seat, {none}) AS fault_seat,
               coalesce(termination, '') AS termination, count(*) AS count, {points}
        FROM played WHERE true GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    """,
    "postgresql": """
        SELECT m.tournament_id AS tournament_id, coalesce(m.labels, m.seats)::text AS labels,
               coalesce((g.value -> 'places')::text, '') AS places,
               coalesce((g.value -> 'verdict' ->> 'seat')::int, {none}) AS fault_seat,
               coalesce(g.value ->> 'termination', '') AS termination, count(*) AS count,
               {points}
        FROM matches AS m CROSS JOIN LATERAL json_array_elements(m.result -> 'games') AS g(value)
        WHERE {where}
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    """,
}
_SUM = {
    "sqlite": "coalesce(sum(json_extract(points, '$[{seat}]')), 0) AS points{seat}",
    "postgresql": "coalesce(sum((g.value -> 'points' ->> {seat})::bigint), 0) AS points{seat}",
}


def grouped_sql(dialect: str, where: str) -> str:
    """The query grouping the done games of the matches ``where`` picks (a condition on
    ``m``, the matches), as columns: tournament_id, labels (JSON text), places (JSON text,
    '' none), fault_seat (:data:`NO_SEAT` none), termination, count, points0...points8."""
    points = ", ".join(_SUM[dialect].format(seat=seat) for seat in range(MAX_PLAYERS))
    return _GROUPED[dialect].format(where=where, points=points, none=NO_SEAT)


def _upsert(dialect: str, where: str) -> str:
    """Add the groups of :func:`grouped_sql` to the stored tallies (a new group inserted,
    a known one's count and sums increased; the groups in key order, so that two writers
    lock them in the same order)."""
    added = ", ".join(
        f"{column} = tournament_tallies.{column} + excluded.{column}"
        for column in ("count", *_POINTS)
    )
    columns = f"{_KEY}, count, {', '.join(_POINTS)}"
    grouped = grouped_sql(dialect, where)
    if dialect == "sqlite":  # SQLite's WITH comes before its INSERT
        head, _, select = grouped.partition(")\n        SELECT")
        return (
            f"{head})\nINSERT INTO tournament_tallies ({columns})\nSELECT{select}"
            f"ON CONFLICT ({_KEY}) DO UPDATE SET {added}"
        )
    return (
        f"INSERT INTO tournament_tallies ({columns})\n{grouped}\n"
        f"ON CONFLICT ({_KEY}) DO UPDATE SET {added}"
    )


def add_match(session: Session, dialect: str, match_id: int) -> None:
    """Add the games of the done match ``match_id`` to its tournament's stored tally (in
    the caller's transaction: the one storing its result)."""
    sql = _upsert(dialect, "m.id = :match AND m.status = 'done'")
    session.execute(text(sql), {"match": match_id})


def fill(connection: Connection | Session, dialect: str, tournament_id: int | None = None) -> int:
    """Count the done matches (``tournament_id``: that tournament's only) into the stored
    tallies from scratch (their groups replaced), :data:`FILL_BATCH` matches a statement;
    return the number of matches counted. For matches stored without
    :func:`add_match` (the tournaments played before migration 0026, a bulk insert)."""
    scope = "" if tournament_id is None else " AND tournament_id = :tournament"
    values: dict[str, int] = {} if tournament_id is None else {"tournament": tournament_id}
    connection.execute(text(f"DELETE FROM tournament_tallies WHERE true{scope}"), values)
    ids = [
        int(row[0])
        for row in connection.execute(
            text(f"SELECT id FROM matches WHERE status = 'done'{scope} ORDER BY id"), values
        )
    ]
    within = "" if tournament_id is None else " AND m.tournament_id = :tournament"
    sql = text(_upsert(dialect, f"m.status = 'done' AND m.id >= :low AND m.id <= :high{within}"))
    for start in range(0, len(ids), FILL_BATCH):
        batch = ids[start : start + FILL_BATCH]
        connection.execute(sql, {**values, "low": batch[0], "high": batch[-1]})
    return len(ids)
