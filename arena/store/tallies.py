"""A tournament's stored tally (``tournament_tallies``, migration 0026): its done games
grouped as its page counts them (the entrant label at each seat, the places, the forfeiting
seat, the ending), each group's number of games and each seat's points summed.

:func:`add_match` adds a match's games in the transaction that stores its result
(:func:`arena.store.queue.complete_match`), an upsert a group, so that the page reads a few
rows a tournament (:func:`arena.store.boards.stored_tally`), never its games.
:func:`fill` counts matches stored otherwise (the migration's fill of the tournaments played
before it, a benchmark's bulk insert), a batch of matches a statement.

Beside it, the figures a tournament's page shows, fitted from the tally
(``tournament_figures``, migration 0029: :mod:`arena.service.board_views` fits them), stored
with the tally's version they were fitted at, so that every web process reads them: when the
tally has moved on, one caller claims the fit (:func:`claim_figures`, a lease any process
sees), fits and stores them (:func:`store_figures`), and the others meanwhile read the
figures before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, func, or_, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from arena.engine.rules import MAX_PLAYERS
from arena.store.db import Store, as_utc
from arena.store.models import Match, Tournament
from arena.store.models import TournamentFigures as Figures

__all__ = [
    "FILL_BATCH",
    "NO_SEAT",
    "StoredFigures",
    "add_match",
    "claim_figures",
    "fill",
    "grouped_sql",
    "release_figures",
    "stale_figures",
    "store_figures",
    "stored_figures",
]

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


# --- the figures fitted from a tally, shared by every web process ----------------------------


@dataclass(frozen=True, slots=True)
class StoredFigures:
    """A tournament's stored figures (``tournament_figures``).

    Attributes:
        version: the tally's version they were fitted at (its done and void matches);
            (-1, -1) while never fitted.
        figures: their JSON text (None: never fitted yet).
        claimed_until: until when a process fitting them again holds its claim (None:
            none does).
    """

    version: tuple[int, int]
    figures: str | None
    claimed_until: datetime | None


def stored_figures(store: Store, tournament_id: int) -> StoredFigures | None:
    """The tournament's stored figures, or None (never asked for): one primary key read."""
    with store.read() as session:
        row = session.execute(
            select(Figures.done, Figures.void, Figures.figures, Figures.claimed_until).where(
                Figures.tournament_id == tournament_id
            )
        ).first()
    if row is None:
        return None
    until = None if row.claimed_until is None else as_utc(row.claimed_until)
    return StoredFigures((int(row.done), int(row.void)), row.figures, until)


def claim_figures(store: Store, tournament_id: int, now: datetime, seconds: float) -> bool:
    """Claim the fit of the tournament's figures for ``seconds`` from ``now``: True for the
    one caller that gets it while no claim holds (none, or one expired), False for every
    other, in any process (one conditional update)."""
    insert = (postgresql if store.dialect == "postgresql" else sqlite).insert
    with store.write() as session:
        session.execute(
            insert(Figures)
            .values(tournament_id=tournament_id, done=-1, void=-1)
            .on_conflict_do_nothing(index_elements=["tournament_id"])
        )
        claimed = session.execute(
            update(Figures)
            .where(
                Figures.tournament_id == tournament_id,
                or_(Figures.claimed_until.is_(None), Figures.claimed_until < now),
            )
            .values(claimed_until=now + timedelta(seconds=seconds))
        )
        return bool(claimed.rowcount == 1)  # type: ignore[attr-defined]


def store_figures(
    store: Store, tournament_id: int, version: tuple[int, int], figures: str, now: datetime
) -> None:
    """Store the tournament's figures fitted at the tally's ``version`` and end the claim
    (:func:`claim_figures`)."""
    with store.write() as session:
        session.execute(
            update(Figures)
            .where(Figures.tournament_id == tournament_id)
            .values(
                done=version[0],
                void=version[1],
                figures=figures,
                claimed_until=None,
                computed=now,
            )
        )


def release_figures(store: Store, tournament_id: int) -> None:
    """End the claim on the tournament's figures without storing any (the fit failed)."""
    with store.write() as session:
        session.execute(
            update(Figures).where(Figures.tournament_id == tournament_id).values(claimed_until=None)
        )


def stale_figures(store: Store, rule_set_id: int) -> list[tuple[int, tuple[int, int]]]:
    """The tournaments under the rule set whose stored figures lag their tally, with the
    tally's version (done and void matches): those with a done match, still playing or
    finished since their figures were fitted (or never fitted); a tournament finished
    before its last fit is not counted again."""
    done = func.count().filter(Match.status == "done")
    void = func.count().filter(Match.status == "void")
    with store.read() as session:
        rows = session.execute(
            select(Match.tournament_id, done, void, Figures.done, Figures.void)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .outerjoin(Figures, Figures.tournament_id == Tournament.id)
            .where(
                Tournament.rule_set_id == rule_set_id,
                or_(
                    Tournament.status != "done",
                    Figures.computed.is_(None),
                    Figures.computed < Tournament.finished,
                ),
            )
            .group_by(Match.tournament_id, Figures.done, Figures.void)
            .having(done > 0)
        ).all()
    return [
        (int(tournament), (int(d), int(v)))
        for tournament, d, v, fitted_done, fitted_void in rows
        if (fitted_done, fitted_void) != (d, v)
    ]
