"""What a competition's pages, its API and ``arena competition`` show: the list, one
competition with its ladder, the actor's entries and the final, the exports (ladder and
final as rows for CSV and JSON) and an entrant's rating history. arena.service.competitions
re-exports every name here; nothing here writes.

The ladder's standings are the scheduler's latest fit (``competitions.standings``, written
by arena.service.clock): one object an entrant, best first, read by these keys (any may be
missing): ``version_id``, ``label``, ``rating``, ``low``, ``high``, ``games``, ``rank``,
``rank_best``, ``rank_worst``, ``provisional``, ``last_game`` (ISO 8601). The final table
(``final_table``) likewise: ``version_id``, ``label``, ``place``, ``rating``, ``low``,
``high``, ``games``, ``separated_from_next``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from arena.errors import NotFound
from arena.service.accounts import Account
from arena.service.board_views import tournament_view
from arena.service.display import display_name
from arena.service.matches import MatchSettings
from arena.service.permissions import OPERATOR, Actor, Target, allowed
from arena.service.shapes import ELO, HIDDEN, about
from arena.store import competitions as stored
from arena.store.bots import version_names
from arena.store.competitions import CompetitionRow, EntryRow, RatingPoint
from arena.store.db import Store

__all__ = [
    "CompetitionSummary",
    "CompetitionView",
    "EarlierFinal",
    "EntryView",
    "FinalRow",
    "FinalView",
    "LadderRow",
    "RatingPoint",
    "RecentGame",
    "competition_list",
    "competition_view",
    "entry_view",
    "final_promise",
    "final_rows",
    "find_competition",
    "is_open",
    "ladder_ranks",
    "ladder_rows",
    "local_time",
    "next_entry_at",
    "rank_label",
    "rating_history",
    "shown_status",
    "time_rule",
]

#: The entry statuses the ladder shows, in the order its unranked rows come: the versions
#: playing it (a placing one too: unranked until it displaces the active one), the
#: disqualified ones, and a withdrawn entrant's (its row says so).
LADDER_STATUSES = ("active", "placing", "disqualified", "withdrawn")
#: What stands for no rank, and between the ends of a rank range (an en dash).
DASH = "\u2013"
#: Games after which an entrant's rating is no longer marked provisional (when the fit
#: does not say).
PROVISIONAL_GAMES = 20


@dataclass(frozen=True, slots=True)
class EntryView:
    """An entry as its entrant sees it.

    Attributes:
        name: its version's display name (None while its upload is checked, or rejected).
        notices: what happened to it, for its entrant (accepted, first rated, ...).
    """

    id: int
    competition: str
    status: str = field(
        metadata=about("pending, active, placing, superseded, disqualified, rejected, late")
    )
    name: str | None
    version_id: int | None
    label: str | None
    upload_id: int | None
    upload_status: str | None
    reason: str | None
    created: datetime
    accepted: datetime | None
    first_rated: datetime | None
    notices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CompetitionSummary:
    """A competition as the list shows it; ``status`` is the shown one (:func:`shown_status`)."""

    name: str
    status: str = field(metadata=about("upcoming, open, final or done"))
    rules: str
    players: int
    teams: bool
    opens: datetime
    deadline: datetime
    time_zone: str
    entrants: int
    owner: str | None


@dataclass(frozen=True, slots=True)
class LadderRow:
    """An entrant's row on the ladder (a rank range from the intervals; ``rating`` None
    until it is rated). ``status``: ``active`` or ``disqualified`` (``reason``)."""

    rank: int | None
    rank_best: int | None
    rank_worst: int | None
    name: str = field(metadata=about("owner/bot vN"))
    version_id: int
    label: str | None
    owner: str
    bot: str
    version: int
    rating: float | None = field(metadata=ELO)
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)
    games: int
    provisional: bool
    last_game: datetime | None
    status: str = field(metadata=about("active, placing, disqualified or withdrawn"))
    reason: str | None


@dataclass(frozen=True, slots=True)
class FinalRow:
    """A finalist's row: its place (tied finalists share it: ``tie``) and its final
    rating; while the final plays, its live standing (``place``: the rank so far)."""

    place: int | None
    tie: bool = field(metadata=about("the place is shared (not separated at the cap)"))
    name: str
    version_id: int
    label: str | None
    owner: str
    rating: float | None = field(metadata=ELO)
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)
    games: int
    separated_from_next: bool | None
    final: int = field(default=1, metadata=about("the final's number: 1, 2 after a rerun..."))
    replaced: str | None = field(
        default=None,
        metadata=about(
            "the organiser's reason when a rerun replaced this table (it stays in force "
            "until the rerun's table is published)"
        ),
    )


@dataclass(frozen=True, slots=True)
class EarlierFinal:
    """A final a rerun replaced: its table (None: stopped before one was published), when
    it was published and replaced, by whom and why."""

    number: int
    tournament: str | None
    rows: tuple[FinalRow, ...] | None
    published: datetime | None
    replaced: datetime | None
    reason: str
    by: str | None


@dataclass(frozen=True, slots=True)
class FinalView:
    """The final: its tournament and number, whether its table is published, and the rows
    shown: the published table; while it plays, its live standings (``live``; the
    tournament page's); ``replaced``: the earlier table still in force while a rerun plays
    (its rows marked with the reason); ``earlier``: every final a rerun replaced."""

    tournament: str | None
    number: int
    published: bool
    live: bool
    rows: tuple[FinalRow, ...]
    replaced: EarlierFinal | None = None
    earlier: tuple[EarlierFinal, ...] = ()


@dataclass(frozen=True, slots=True)
class RecentGame:
    """A finished match of the ladder or the final: its id, its players' display names."""

    match_id: int = field(metadata=about(name="match"))
    tournament: str
    players: tuple[str, ...]
    finished: datetime | None


@dataclass(frozen=True, slots=True)
class CompetitionView:
    """One competition for its page (``settings``: move_seconds, memory_mb, runtimes,
    games_per_deal ...; ``next_entry``: when the actor may enter next, None: now)."""

    summary: CompetitionSummary
    description: str
    settings: dict[str, Any]
    daily_submissions: int
    sources_public: bool
    final_top: int
    final_confidence: float
    final_max_games: int
    ladder: str = field(metadata=about("the ladder's tournament"))
    final_tournament: str | None = field(metadata=HIDDEN)
    standings_computed: datetime | None
    can_manage: bool
    can_enter: bool
    next_entry: datetime | None = field(metadata=about("when you may enter next (null: now)"))
    standings: tuple[LadderRow, ...]
    entries: tuple[EntryView, ...] = field(metadata=about("your own entries"))
    final: FinalView | None
    recent: tuple[RecentGame, ...]
    time_rule: str = field(
        default="",
        metadata=about("the time control its matches are played under, as enforced"),
    )


def final_promise(confidence: float, max_games: int) -> str:
    """What a final's confidence covers, as the page says it (docs/competitions.md, "The
    final's confidence and its cap"): the whole published order, all its finals together
    (arena.compete.final: Holm over the neighbour pairs, anytime-valid over the looks, a
    share of the error a rerun)."""
    shown, error = f"{100 * confidence:g}%", f"{100 * (1 - confidence):.3g}%"
    return (
        f"{shown} confidence covers the whole table: every pair of neighbours shown "
        "separated is in the right order, all of them at once (corrected for the number of "
        "pairs and for looking after every round), and for every table this competition "
        "publishes, reruns included (each rerun spends a share of the error), so a rerun "
        "separates a pair of an earlier table's separated neighbours in the opposite order "
        f"with probability at most {error}. Neighbours not separated once {max_games} "
        "games are played share a place (a tie, marked =)."
    )


def _now(now: datetime | None = None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


def local_time(moment: datetime, time_zone: str) -> str:
    """``moment`` as the competition shows it: ``2026-05-01 18:00 Europe/Paris``."""
    try:
        zone = ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        zone, time_zone = ZoneInfo("UTC"), "UTC"
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M} {time_zone}"


def find_competition(store: Store, name: str) -> CompetitionRow:
    """The competition called ``name``.

    Raises:
        NotFound: there is none.
    """
    row = None if "\x00" in name else stored.competition_row(store, name)
    if row is None:
        raise NotFound(f"no competition called {name!r}")
    return row


def is_open(row: CompetitionRow, now: datetime) -> bool:
    """Whether the competition takes entries at ``now``."""
    return row.status == "open" and row.opens <= now < row.deadline


def shown_status(row: CompetitionRow, now: datetime) -> str:
    """``upcoming`` (before it opens), ``open``, ``final`` (from the deadline on, while the
    final plays), ``done``."""
    if row.status == "open":
        if now < row.opens:
            return "upcoming"
        return "open" if now < row.deadline else "final"
    return row.status


def next_entry_at(
    store: Store, row: CompetitionRow, user_id: int, now: datetime
) -> datetime | None:
    """When the user may make their next entry (None: now): at most ``daily_submissions``
    entries in any 24 hours."""
    times = stored.entry_times(store, row.id, user_id, now - timedelta(days=1))
    if len(times) < row.daily_submissions:
        return None
    return times[len(times) - row.daily_submissions] + timedelta(days=1)


def _summary(row: CompetitionRow, now: datetime) -> CompetitionSummary:
    return CompetitionSummary(
        name=row.name, status=shown_status(row, now), rules=row.rules, players=row.players,
        teams=row.teams, opens=row.opens, deadline=row.deadline, time_zone=row.time_zone,
        entrants=row.entrants, owner=row.owner,
    )  # fmt: skip


def competition_list(store: Store, *, now: datetime | None = None) -> list[CompetitionSummary]:
    """Every competition, the latest deadline first."""
    now = _now(now)
    return [_summary(row, now) for row in stored.competition_rows(store)]


def entry_view(row: CompetitionRow, entry: EntryRow) -> EntryView:
    """An entry with its notices (accepted, first rated, the final done)."""
    notices: list[str] = []
    name = None
    if entry.bot is not None and entry.version is not None:
        name = display_name(entry.user, entry.bot, entry.version)
    if entry.status == "pending":
        notices.append("Your upload is being checked.")
    if entry.accepted is not None and name is not None:
        notices.append(f"{name} was accepted at {local_time(entry.accepted, row.time_zone)}.")
    if entry.status == "late":
        notices.append("It came after the deadline: it does not play.")
    if entry.first_rated is not None:
        notices.append(f"First rated at {local_time(entry.first_rated, row.time_zone)}.")
    if entry.status == "placing":
        notices.append(
            "It plays its placement games: your placed version plays on until it is placed."
        )
    if entry.status in ("rejected", "disqualified", "withdrawn") and entry.reason:
        said = f"{entry.status.capitalize()}: "  # (a check's message says it already)
        notices.append(entry.reason if entry.reason.startswith(said) else said + entry.reason)
    elif entry.status in ("active", "placing") and entry.reason:  # left unplaced at the close
        notices.append(entry.reason[:1].upper() + entry.reason[1:])
    if row.status == "done" and entry.status == "active":
        notices.append("The final is done: see the final table.")
    return EntryView(
        id=entry.id, competition=row.name, status=entry.status, name=name,
        version_id=entry.version_id, label=entry.label, upload_id=entry.upload_id,
        upload_status=entry.upload_status, reason=entry.reason, created=entry.created,
        accepted=entry.accepted, first_rated=entry.first_rated, notices=tuple(notices),
    )  # fmt: skip


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _ladder(row: CompetitionRow, entries: list[EntryRow]) -> list[LadderRow]:
    """The ladder's rows, ranked by :func:`ladder_ranks`: the fit's entrants whose latest
    entry is active, disqualified or withdrawn (a superseded version is not shown; a
    withdrawn one keeps its games), and the active ones not rated yet."""
    shown: dict[int, EntryRow] = {}
    for entry in sorted(entries, key=lambda e: e.id):  # the latest entry of a version wins
        if entry.version_id is not None and entry.status in LADDER_STATUSES:
            shown[entry.version_id] = entry
    rows: list[LadderRow] = []
    for fit in row.standings or []:
        if not isinstance(fit, Mapping):
            continue
        version_id = _int(fit.get("version_id"))
        found = shown.pop(version_id, None) if version_id is not None else None
        if found is not None:
            rows.append(_ladder_row(found, fit))
    rows += [_ladder_row(e, {}) for e in shown.values()]
    return ladder_ranks(rows)


def ladder_ranks(rows: Sequence[LadderRow]) -> list[LadderRow]:
    """The one ranking every surface shows (the page, ``ladder.csv``/``.json``, the API,
    ``arena competition status``): the active rated entrants first, best first, ranked 1 to
    n without gaps, their rank ranges (the fit's, computed among them alone) kept within
    1..n and around the rank; then the active entrants not rated yet, then the disqualified
    ones, then the withdrawn ones, all unranked (rank, rank_best and rank_worst None: a
    dash on the page, empty in CSV, null in JSON)."""
    ranked = sorted(
        (r for r in rows if r.status == "active" and r.rating is not None),
        key=lambda r: -(r.rating or 0.0),
    )
    out = []
    for place, r in enumerate(ranked, start=1):
        best = min(place, max(1, r.rank_best or place))
        worst = max(place, min(len(ranked), r.rank_worst or place))
        out.append(replace(r, rank=place, rank_best=best, rank_worst=worst))
    unranked = [r for r in rows if r not in ranked]
    unranked.sort(key=lambda r: LADDER_STATUSES.index(r.status))  # stable: unrated first
    return out + [replace(r, rank=None, rank_best=None, rank_worst=None) for r in unranked]


def rank_label(row: LadderRow) -> str:
    """A ladder row's rank as the page and ``arena competition status`` show it: ``3``, a
    range ``2\u20134`` (an en dash: those entrants cannot be told apart yet), or a dash
    ``\u2013`` alone, unranked (not rated yet, placing, disqualified or withdrawn)."""
    if row.rank is None or row.rank_best is None or row.rank_worst is None:
        return DASH
    if row.rank_best == row.rank_worst:
        return str(row.rank)
    return f"{row.rank_best}{DASH}{row.rank_worst}"


def _ladder_row(entry: EntryRow, fit: Mapping[str, Any]) -> LadderRow:
    assert entry.version_id is not None
    games = _int(fit.get("games")) or 0
    provisional = fit.get("provisional")
    rank = _int(fit.get("rank"))
    return LadderRow(
        rank=rank, rank_best=_int(fit.get("rank_best", rank)),
        rank_worst=_int(fit.get("rank_worst", rank)),
        name=display_name(entry.user, entry.bot or "?", entry.version),
        version_id=entry.version_id, label=entry.label or fit.get("label"), owner=entry.user,
        bot=entry.bot or "?", version=entry.version or 0, rating=_float(fit.get("rating")),
        low=_float(fit.get("low")), high=_float(fit.get("high")), games=games,
        provisional=bool(provisional) if provisional is not None else games < PROVISIONAL_GAMES,
        last_game=_time(fit.get("last_game")), status=entry.status, reason=entry.reason,
    )  # fmt: skip


def _table(
    store: Store, stored_table: Any, number: int, replaced: str | None = None
) -> tuple[FinalRow, ...]:
    """A stored final table (JSON rows) as rows of final ``number``."""
    table = [fit for fit in stored_table or [] if isinstance(fit, Mapping)]
    ids = [v for v in (_int(fit.get("version_id")) for fit in table) if v is not None]
    names = version_names(store, ids)
    rows = []
    for fit in table:
        version_id = _int(fit.get("version_id"))
        if version_id is None or version_id not in names:
            continue
        _, owner, bot, version = names[version_id]
        separated = fit.get("separated_from_next")
        rows.append(FinalRow(
            place=_int(fit.get("place")), tie=bool(fit.get("tie")),
            name=display_name(owner, bot, version),
            version_id=version_id, label=fit.get("label"), owner=owner,
            rating=_float(fit.get("rating")), low=_float(fit.get("low")),
            high=_float(fit.get("high")), games=_int(fit.get("games")) or 0,
            separated_from_next=None if separated is None else bool(separated),
            final=number, replaced=replaced,
        ))  # fmt: skip
    return tuple(rows)


def _earlier(store: Store, row: CompetitionRow) -> tuple[EarlierFinal, ...]:
    out = []
    for number, kept in enumerate(row.earlier_finals, start=1):
        if not isinstance(kept, Mapping):
            continue
        reason = str(kept.get("reason") or "")
        table = kept.get("table")
        out.append(EarlierFinal(
            number=_int(kept.get("number")) or number, tournament=kept.get("tournament"),
            rows=None if table is None else _table(store, table, number, reason),
            published=_time(kept.get("published")), replaced=_time(kept.get("replaced")),
            reason=reason, by=kept.get("by"),
        ))  # fmt: skip
    return tuple(out)


def _live_final(
    store: Store, final: str, entries: list[EntryRow], number: int
) -> tuple[FinalRow, ...]:
    """The playing final's standings as the tournament page counts them
    (arena.service.board_views.tournament_view), its labels mapped to the entrants'
    versions. Counted as the operator: the competition's tables show every finalist (a
    private class's student too); only their bots' pages stay hidden."""
    try:
        view = tournament_view(store, final, viewer=OPERATOR)
    except LookupError:
        return ()
    by_label = {e.label: e for e in entries if e.label is not None and e.version_id is not None}
    rows = []
    for standing in view.standings:
        entry = by_label.get(standing.entrant)
        if entry is None or entry.version_id is None:
            continue
        rows.append(FinalRow(
            place=standing.rank, tie=False,
            name=display_name(entry.user, entry.bot or "?", entry.version),
            version_id=entry.version_id, label=entry.label, owner=entry.user,
            rating=standing.rating, low=standing.low, high=standing.high,
            games=standing.games, separated_from_next=None, final=number,
        ))  # fmt: skip
    return tuple(rows)


def _final(
    store: Store, row: CompetitionRow, entries: list[EntryRow], *, live: bool = True
) -> FinalView | None:
    """The final's view (``live``: with a playing final's standings)."""
    earlier = _earlier(store, row)
    if row.final_table is None and row.final is None and not earlier:
        return None
    number = len(earlier) + 1
    published = row.final_table is not None
    if published:
        rows, playing = _table(store, row.final_table, number), False
    elif row.final is not None and live:
        rows, playing = _live_final(store, row.final, entries, number), True
    else:  # a rerun asked, its final not made yet (or no live standings asked)
        rows, playing = (), False
    in_force = None if published else next((f for f in reversed(earlier) if f.rows), None)
    return FinalView(row.final, number, published, playing, rows, in_force, earlier)


def _recent(store: Store, row: CompetitionRow, limit: int = 20) -> tuple[RecentGame, ...]:
    tournaments = [row.ladder_id] + ([row.final_id] if row.final_id is not None else [])
    matches = stored.recent_matches(store, tournaments, limit)
    names = version_names(store, sorted({v for m in matches for v in m.seats}))
    return tuple(
        RecentGame(
            match_id=m.id,
            tournament=m.tournament,
            players=tuple(display_name(*names[v][1:]) if v in names else str(v) for v in m.seats),
            finished=m.finished,
        )
        for m in matches
    )


def competition_view(
    store: Store, actor: Actor, name: str, *, now: datetime | None = None
) -> CompetitionView:
    """The competition called ``name`` for ``actor``: its settings, ladder, final, recent
    games, and the actor's own entries with their notices and what it may do.

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    now = _now(now)
    entries = stored.entry_rows(store, row.id)
    user_id = actor.id if isinstance(actor, Account) else None
    mine = [entry_view(row, e) for e in entries if e.user_id == user_id]
    return CompetitionView(
        summary=_summary(row, now), description=row.description, settings=dict(row.settings),
        daily_submissions=row.daily_submissions, sources_public=row.sources_public,
        final_top=row.final_top, final_confidence=row.final_confidence,
        final_max_games=row.final_max_games, ladder=row.ladder, final_tournament=row.final,
        standings_computed=row.standings_computed,
        can_manage=allowed(actor, "manage-competition", Target(row.owner_id)),
        can_enter=is_open(row, now) and allowed(actor, "enter-competition")
        and user_id is not None and all(e.status != "withdrawn" for e in mine),
        next_entry=None if user_id is None else next_entry_at(store, row, user_id, now),
        standings=tuple(_ladder(row, entries)), entries=tuple(mine),
        final=_final(store, row, entries),
        recent=_recent(store, row), time_rule=time_rule(row.settings),
    )  # fmt: skip


def time_rule(settings: Mapping[str, Any]) -> str:
    """The competition's time control as its matches are played under it (the ladder's
    and the final's settings: :meth:`arena.service.matches.MatchSettings.time_control`)."""
    return MatchSettings.from_json(settings).time_control().rule()


def _export(row: Any) -> dict[str, Any]:
    return {
        key: value.isoformat() if isinstance(value, datetime) else value
        for key, value in asdict(row).items()
    }


def ladder_rows(store: Store, actor: Actor, name: str) -> list[dict[str, Any]]:
    """The ladder as rows for CSV and JSON (:class:`LadderRow`'s fields, times in ISO
    8601), best first.

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    return [_export(r) for r in _ladder(row, stored.entry_rows(store, row.id))]


def final_rows(store: Store, actor: Actor, name: str) -> list[dict[str, Any]]:
    """The final table in force as rows for CSV and JSON (:class:`FinalRow`'s fields),
    first place first: the published one; while a rerun plays, the one it replaces (its
    rows' ``replaced`` give the organiser's reason); [] until a table is published.

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    final = _final(store, row, [], live=False)
    if final is None:
        return []
    if final.published:
        return [_export(r) for r in final.rows]
    if final.replaced is not None and final.replaced.rows:
        return [_export(r) for r in final.replaced.rows]
    return []


def rating_history(store: Store, actor: Actor, name: str, version_id: int) -> list[RatingPoint]:
    """An entrant's ladder rating history, oldest first ([] for a version never rated).

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    return stored.rating_points(store, row.id, version_id)
