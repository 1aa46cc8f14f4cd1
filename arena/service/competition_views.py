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

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from arena.errors import NotFound
from arena.service.accounts import Account
from arena.service.display import display_name
from arena.service.matches import MatchSettings
from arena.service.permissions import Actor, Target, allowed
from arena.service.shapes import ELO, HIDDEN, about
from arena.store import competitions as stored
from arena.store.bots import version_names
from arena.store.competitions import CompetitionRow, EntryRow, RatingPoint
from arena.store.db import Store

__all__ = [
    "CompetitionSummary",
    "CompetitionView",
    "EntryView",
    "FinalRow",
    "FinalView",
    "LadderRow",
    "RatingPoint",
    "RecentGame",
    "competition_list",
    "competition_view",
    "entry_view",
    "final_rows",
    "find_competition",
    "is_open",
    "ladder_rows",
    "local_time",
    "next_entry_at",
    "rating_history",
    "shown_status",
    "time_rule",
]

#: The entry statuses the ladder shows (a withdrawn entrant's row says so, unranked).
LADDER_STATUSES = ("active", "disqualified", "withdrawn")
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
    status: str = field(metadata=about("pending, active, superseded, disqualified, rejected, late"))
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
    status: str = field(metadata=about("active, disqualified or withdrawn"))
    reason: str | None


@dataclass(frozen=True, slots=True)
class FinalRow:
    """A finalist's row: its place (tied finalists share it: ``tie``) and its final
    rating."""

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


@dataclass(frozen=True, slots=True)
class FinalView:
    """The final: its tournament, whether its table is published, and the table (the
    published one; before that, none)."""

    tournament: str | None
    published: bool
    rows: tuple[FinalRow, ...]


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
    if entry.status in ("rejected", "disqualified", "withdrawn") and entry.reason:
        notices.append(f"{entry.status.capitalize()}: {entry.reason}")
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
    """The ladder's rows: the fit's entrants that are active or disqualified, best first,
    then the active ones not rated yet, then the disqualified ones the fit has not, then
    the withdrawn ones (with their games, unranked)."""
    shown: dict[int, EntryRow] = {}
    for entry in sorted(entries, key=lambda e: e.id):  # the latest entry of a version wins
        if entry.version_id is not None and entry.status in LADDER_STATUSES:
            shown[entry.version_id] = entry
    rows: list[LadderRow] = []
    withdrawn: dict[int, Mapping[str, Any]] = {}
    for fit in row.standings or []:
        if not isinstance(fit, Mapping):
            continue
        version_id = _int(fit.get("version_id"))
        found = shown.get(version_id) if version_id is not None else None
        if found is not None and found.status == "withdrawn":
            unranked = {"rank": None, "rank_best": None, "rank_worst": None}
            withdrawn[version_id or 0] = {**fit, **unranked}
        elif found is not None and version_id is not None:
            rows.append(_ladder_row(shown.pop(version_id), fit))
    rows += [_ladder_row(e, {}) for e in shown.values() if e.status == "active"]
    rows += [_ladder_row(e, {}) for e in shown.values() if e.status == "disqualified"]
    rows += [
        _ladder_row(e, withdrawn.get(v, {})) for v, e in shown.items() if e.status == "withdrawn"
    ]
    return rows


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


def _final(store: Store, row: CompetitionRow) -> FinalView | None:
    if row.final_table is None and row.final is None:
        return None
    table = [fit for fit in row.final_table or [] if isinstance(fit, Mapping)]
    ids = [v for v in (_int(fit.get("version_id")) for fit in table) if v is not None]
    names = version_names(store, ids)
    rows = []
    for fit in table:
        version_id = _int(fit.get("version_id"))
        if version_id is None or version_id not in names:
            continue
        _, owner, bot, number = names[version_id]
        separated = fit.get("separated_from_next")
        rows.append(FinalRow(
            place=_int(fit.get("place")), tie=bool(fit.get("tie")),
            name=display_name(owner, bot, number),
            version_id=version_id, label=fit.get("label"), owner=owner,
            rating=_float(fit.get("rating")), low=_float(fit.get("low")),
            high=_float(fit.get("high")), games=_int(fit.get("games")) or 0,
            separated_from_next=None if separated is None else bool(separated),
        ))  # fmt: skip
    return FinalView(row.final, row.final_table is not None, tuple(rows))


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
        standings=tuple(_ladder(row, entries)), entries=tuple(mine), final=_final(store, row),
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
    """The published final table as rows for CSV and JSON (:class:`FinalRow`'s fields),
    first place first; [] until it is published.

    Raises:
        NotFound: no competition is called ``name``.
    """
    final = _final(store, find_competition(store, name))
    if final is None or not final.published:
        return []
    return [_export(r) for r in final.rows]


def rating_history(store: Store, actor: Actor, name: str, version_id: int) -> list[RatingPoint]:
    """An entrant's ladder rating history, oldest first ([] for a version never rated).

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    return stored.rating_points(store, row.id, version_id)
