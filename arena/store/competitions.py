"""The competitions' tables: a competition with its ladder tournament, its entries (their
life: pending -> active -> superseded / disqualified; rejected; late), the ladder's
entrants, the organiser's changes (deadline, disqualification, a final's rerun) and the
reads behind a competition's page and exports.

Queries live in the store (docs/architecture.md): callers get frozen values, never a
session. Each function is one transaction. The service (arena.service.competitions)
decides who may do what; these functions only keep the rows consistent.

A ladder entrant is a ``tournament_entrants`` row of the ladder tournament, added when an
entry becomes active (:func:`accept_entry`, :func:`add_active_entry`); its label is the
version's display name made a name (``alice-greedy-v3``), unique in the tournament.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, or_, select, text, update
from sqlalchemy.orm import Session

from arena.compete.names import fit_name, name_key, taken_message
from arena.engine.rules import Rules
from arena.errors import NameTaken
from arena.store.db import Store, as_utc
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    CompetitionRating,
    Match,
    RuleSet,
    Tournament,
    TournamentEntrant,
    Upload,
    User,
)
from arena.store.queue import void_pending
from arena.store.ratings import RatingPoint

__all__ = [
    "ActiveEntrant",
    "CompetitionRow",
    "EnteredAlready",
    "EntryRow",
    "LadderMatch",
    "RatingPoint",
    "accept_entry",
    "active_entrants",
    "add_active_entry",
    "competition_name",
    "competition_row",
    "competition_rows",
    "disqualify_version",
    "entered_source",
    "entered_source_of",
    "entries_of",
    "entry_of_upload",
    "entry_rows",
    "entry_times",
    "insert_competition",
    "ladder_label",
    "lock_competition",
    "rating_points",
    "recent_matches",
    "reset_final",
    "set_deadline",
    "source_opened",
    "supersede",
    "within_limit",
]

#: Entry statuses that hold a version which played (or plays) on the ladder.
PLAYED = ("active", "placing", "superseded", "disqualified")
#: Entry statuses whose version plays the ladder now: the user's active one, and a later
#: one playing its placement games.
PLAYING = ("active", "placing")


@dataclass(frozen=True, slots=True)
class CompetitionRow:
    """A competition's row, with its rule set's and owner's names and its counts."""

    id: int
    name: str
    description: str
    owner_id: int | None
    owner: str | None
    rules: str
    rules_params: dict[str, Any]
    players: int
    teams: bool
    settings: dict[str, Any]
    opens: datetime
    deadline: datetime
    time_zone: str
    daily_submissions: int
    sources_public: bool
    final_top: int
    final_confidence: float
    final_max_games: int
    seed: int
    status: str
    ladder_id: int
    ladder: str
    final_id: int | None
    final: str | None
    standings: list[Any] | None
    standings_computed: datetime | None
    final_table: list[Any] | None
    #: The finals a rerun replaced, oldest first (arena.store.models.Competition).
    earlier_finals: list[Any]
    created: datetime
    closed: datetime | None
    finished: datetime | None
    #: Active entries (the entrants playing the ladder now).
    entrants: int
    #: Since when the ladder is paused (None: it plays); the youngest account that may
    #: enter, in days (arena.service.competition_tools).
    ladder_paused: datetime | None = None
    min_account_days: int = 0


@dataclass(frozen=True, slots=True)
class ActiveEntrant:
    """An entrant that plays the ladder now: its version, its ladder label, its user."""

    version_id: int
    label: str
    user_id: int
    accepted: datetime


@dataclass(frozen=True, slots=True)
class EntryRow:
    """An entry with its version's names (None while pending or rejected) and its
    upload's status."""

    id: int
    competition_id: int
    user_id: int
    user: str
    upload_id: int | None
    upload_status: str | None
    version_id: int | None
    bot: str | None
    version: int | None
    label: str | None
    status: str
    reason: str | None
    created: datetime
    accepted: datetime | None
    first_rated: datetime | None
    placed: datetime | None = None


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else as_utc(now)


# --- creating and reading competitions --------------------------------------------------------


def insert_competition(
    store: Store,
    *,
    name: str,
    ladder_name: str,
    rules: Rules,
    values: dict[str, Any],
    tournament_settings: dict[str, Any],
    games_per_match: int,
) -> int:
    """Store the competition ``name`` with ``values`` (its columns but the rule set and the
    ladder) and its ladder tournament ``ladder_name`` (format ``ladder``, ``running``, no
    entrant nor match yet, ``tournament_settings``); return the competition's id. One
    transaction: both or neither.

    Raises:
        NameTaken: a competition called ``name`` in any case exists already.
        ValueError: a tournament called ``ladder_name`` exists already.
    """
    rule_set = store.ensure_rule_set(rules)
    now = datetime.now(UTC)
    key = name_key(name)
    with store.write() as session:
        if store.dialect == "postgresql":  # serialize creators of the same name, in any case
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:n))"), {"n": key})
        taken = session.scalar(select(Competition.name).where(Competition.name_key == key))
        if taken is not None:
            raise NameTaken(taken_message("a competition", taken, name))
        if session.scalar(select(Tournament.id).where(Tournament.name == ladder_name)):
            raise ValueError(f"a tournament called {ladder_name!r} exists already")
        ladder = Tournament(
            name=ladder_name,
            format="ladder",
            rule_set_id=rule_set.id,
            players=values["players"],
            teams=values["teams"],
            games_per_match=games_per_match,
            seed=values["seed"],
            status="running",
            settings=dict(tournament_settings),
            owner_id=values.get("owner_id"),
            started=now,
        )
        session.add(ladder)
        session.flush()
        competition = Competition(
            name=name,
            name_key=key,
            rule_set_id=rule_set.id,
            ladder_id=ladder.id,
            status="open",
            **values,
        )
        session.add(competition)
        session.flush()
        return competition.id


def _rows_query() -> Any:
    ladder = Tournament.__table__.alias("ladder")
    final = Tournament.__table__.alias("final")
    entrants = (
        select(func.count())
        .select_from(CompetitionEntry)
        .where(
            CompetitionEntry.competition_id == Competition.id,
            CompetitionEntry.status == "active",
        )
        .scalar_subquery()
    )
    return (
        select(Competition, User.name, RuleSet.name, RuleSet.params, ladder.c.name,
               final.c.name, entrants)
        .join(RuleSet, RuleSet.id == Competition.rule_set_id)
        .join(ladder, ladder.c.id == Competition.ladder_id)
        .outerjoin(final, final.c.id == Competition.final_id)
        .outerjoin(User, User.id == Competition.owner_id)
    )  # fmt: skip


#: The statements of :func:`competition_row` and :func:`competition_rows` (built once: each
#: competition page reads its competition, and building them cost more than the reads).
_ROW_NAMED = _rows_query().where(Competition.name == bindparam("name"))
_ALL_ROWS = _rows_query().order_by(Competition.deadline.desc(), Competition.id.desc())


def _row(found: Any) -> CompetitionRow:
    c, owner, rules, params, ladder, final, entrants = found
    return CompetitionRow(
        id=c.id, name=c.name, description=c.description or "", owner_id=c.owner_id,
        owner=owner, rules=str(rules), rules_params=dict(params), players=c.players,
        teams=bool(c.teams), settings=dict(c.settings or {}), opens=as_utc(c.opens),
        deadline=as_utc(c.deadline), time_zone=c.time_zone,
        daily_submissions=c.daily_submissions, sources_public=bool(c.sources_public),
        final_top=c.final_top, final_confidence=c.final_confidence,
        final_max_games=c.final_max_games, seed=int(c.seed), status=c.status,
        ladder_id=c.ladder_id, ladder=str(ladder), final_id=c.final_id, final=final,
        standings=c.standings, standings_computed=_aware(c.standings_computed),
        final_table=c.final_table, earlier_finals=list(c.earlier_finals or []),
        created=as_utc(c.created), closed=_aware(c.closed),
        finished=_aware(c.finished), entrants=int(entrants or 0),
        ladder_paused=_aware(c.ladder_paused), min_account_days=int(c.min_account_days or 0),
    )  # fmt: skip


def competition_row(store: Store, name: str) -> CompetitionRow | None:
    """The competition called ``name``, or None."""
    with store.read() as session:
        found = session.execute(_ROW_NAMED, {"name": name}).first()
    return None if found is None else _row(found)


def competition_rows(store: Store) -> list[CompetitionRow]:
    """Every competition, the latest deadline first."""
    with store.read() as session:
        found = session.execute(_ALL_ROWS).all()
    return [_row(row) for row in found]


# --- entries ----------------------------------------------------------------------------------


def entry_times(store: Store, competition_id: int, user_id: int, since: datetime) -> list[datetime]:
    """When the user's entries in the competition made after ``since`` were made, oldest
    first (rejected ones count: a submission is a submission)."""
    with store.read() as session:
        found = session.scalars(
            select(CompetitionEntry.created)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.user_id == user_id,
                CompetitionEntry.created > since,
            )
            .order_by(CompetitionEntry.created)
        ).all()
    return [as_utc(moment) for moment in found]


def within_limit(
    store: Store,
    session: Session,
    competition_id: int,
    user_id: int,
    limit: int | None,
    now: datetime,
) -> bool:
    """Whether the user made fewer than ``limit`` entries in the 24 hours before ``now``
    (None: no limit), the competition's row locked first: concurrent entries of one
    competition count one after another (SQLite: BEGIN IMMEDIATE does it already)."""
    if limit is None:
        return True
    lock_competition(store, session, competition_id)
    made = session.scalar(
        select(func.count())
        .select_from(CompetitionEntry)
        .where(
            CompetitionEntry.competition_id == competition_id,
            CompetitionEntry.user_id == user_id,
            CompetitionEntry.created > now - timedelta(days=1),
        )
    )
    return int(made or 0) < limit


def entry_of_upload(store: Store, upload_id: int) -> int | None:
    """The id of the competition entry made with this upload, or None (a plain upload)."""
    with store.read() as session:
        return session.scalar(
            select(CompetitionEntry.id).where(CompetitionEntry.upload_id == upload_id)
        )


def ladder_label(owner: str, bot: str, version: int, taken: set[str]) -> str:
    """A version's ladder label: its display name made a name (``alice-greedy-v3``), with
    ``-2``, ``-3`` ... after it while it is ``taken``."""
    base = fit_name(f"{owner}-{bot}-v{version}")
    label, n = base, 1
    while label in taken:
        n += 1
        label = fit_name(f"{base}-{n}")
    return label


def _ensure_entrant(session: Session, ladder_id: int, version_id: int) -> str:
    """The version's label on the ladder, its ``tournament_entrants`` row added if need be."""
    existing = session.scalar(
        select(TournamentEntrant.label).where(
            TournamentEntrant.tournament_id == ladder_id,
            TournamentEntrant.bot_version_id == version_id,
        )
    )
    if existing is not None:
        return str(existing)
    owner, bot, number = session.execute(
        select(User.name, Bot.name, BotVersion.version)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .join(User, User.id == Bot.owner_id)
        .where(BotVersion.id == version_id)
    ).one()
    taken = set(
        session.scalars(
            select(TournamentEntrant.label).where(TournamentEntrant.tournament_id == ladder_id)
        )
    )
    label = ladder_label(str(owner), str(bot), int(number), taken)
    session.add(TournamentEntrant(tournament_id=ladder_id, label=label, bot_version_id=version_id))
    return label


def lock_competition(store: Store, session: Session, competition_id: int) -> Competition:
    """The competition's row, locked in the caller's transaction on PostgreSQL (SQLite's
    BEGIN IMMEDIATE serializes writers already).

    Raises:
        ValueError: no such competition.
    """
    query = select(Competition).where(Competition.id == competition_id)
    if store.dialect == "postgresql":
        query = query.with_for_update()
    competition = session.scalar(query)
    if competition is None:
        raise ValueError(f"no competition with id {competition_id}")
    return competition


def _activate(
    store: Store, session: Session, entry: CompetitionEntry, version_id: int, now: datetime
) -> str:
    """Make the pending ``entry`` of ``version_id`` what it becomes at ``now``, in the
    caller's transaction: ``late`` after the deadline; ``rejected`` if the version was
    disqualified here; ``superseded`` at once if the user plays that version already;
    else ``placing`` while the user's active version is placed (it plays on until this
    one is placed), or ``active`` (the user's versions playing before are superseded)."""
    competition = lock_competition(store, session, entry.competition_id)
    entry.bot_version_id = version_id
    entry.accepted = now
    if now >= as_utc(competition.deadline) or competition.status != "open":
        entry.status = "late"
        return entry.status
    disqualified = session.scalar(
        select(CompetitionEntry.reason).where(
            CompetitionEntry.competition_id == entry.competition_id,
            CompetitionEntry.bot_version_id == version_id,
            CompetitionEntry.status == "disqualified",
        )
    )
    if disqualified is not None:
        entry.status, entry.reason = "rejected", f"this version was disqualified: {disqualified}"
        return entry.status
    playing = session.scalars(
        select(CompetitionEntry).where(
            CompetitionEntry.competition_id == entry.competition_id,
            CompetitionEntry.user_id == entry.user_id,
            CompetitionEntry.status.in_(PLAYING),
            CompetitionEntry.id != entry.id,
        )
    ).all()
    if any(other.bot_version_id == version_id for other in playing):
        entry.status, entry.reason = "superseded", "this version is your active entry already"
        return entry.status
    # a placed version plays on until the new one is placed (arena.store.entries promotes
    # it then); an unplaced one (a version being placed) is displaced at once
    keep = [o for o in playing if o.status == "active" and o.placed is not None]
    for other in playing:
        if other not in keep:
            supersede(session, competition.ladder_id, other, f"version {version_id}", now)
    entry.status = "placing" if keep else "active"
    _ensure_entrant(session, competition.ladder_id, version_id)
    return entry.status


def supersede(
    session: Session, ladder_id: int, entry: CompetitionEntry, by: str, now: datetime
) -> None:
    """Mark ``entry`` superseded by ``by`` (its history stays) and void its version's
    pending ladder matches, in the caller's transaction (the competition's row locked)."""
    entry.status = "superseded"
    if entry.bot_version_id is not None:
        _void_matches(
            session,
            _pending_matches_of(session, ladder_id, entry.bot_version_id),
            f"superseded by {by}",
            now,
        )


def accept_entry(
    store: Store,
    upload_id: int,
    *,
    version_id: int | None,
    message: str | None,
    now: datetime | None = None,
) -> tuple[int, str] | None:
    """Settle the pending entry made with the upload: ``version_id`` None means the check
    rejected it (its ``reason``: ``message``), else see :func:`_activate`. Return (the
    entry's id, its status), or None when no pending entry holds this upload (a plain
    upload, or one settled already: idempotent)."""
    now = _now(now)
    with store.write() as session:
        entry = session.scalar(
            select(CompetitionEntry).where(
                CompetitionEntry.upload_id == upload_id, CompetitionEntry.status == "pending"
            )
        )
        if entry is None:
            return None
        if version_id is None:
            entry.status, entry.reason = "rejected", message or "the check rejected it"
            return entry.id, entry.status
        return entry.id, _activate(store, session, entry, version_id, now)


@dataclass(frozen=True, slots=True)
class EnteredAlready:
    """The user's entry that holds a source already: its version's bot and number (None
    while its upload is checked), the entry's id and status, its upload."""

    entry_id: int
    status: str
    bot: str | None
    version: int | None
    upload_id: int | None
    version_id: int | None = None


def entered_source(
    session: Session, competition_id: int, user_id: int, digest: str
) -> EnteredAlready | None:
    """The user's latest entry in the competition (not a rejected one) whose version, or
    whose upload being checked, has the source of sha256 ``digest``; None if none."""
    found = session.execute(
        select(CompetitionEntry.id, CompetitionEntry.status, Bot.name, BotVersion.version,
               CompetitionEntry.upload_id, CompetitionEntry.bot_version_id)
        .outerjoin(BotVersion, BotVersion.id == CompetitionEntry.bot_version_id)
        .outerjoin(Bot, Bot.id == BotVersion.bot_id)
        .outerjoin(Upload, Upload.id == CompetitionEntry.upload_id)
        .where(
            CompetitionEntry.competition_id == competition_id,
            CompetitionEntry.user_id == user_id,
            CompetitionEntry.status != "rejected",
            or_(
                BotVersion.sha256 == digest,
                (CompetitionEntry.bot_version_id.is_(None)) & (Upload.sha256 == digest),
            ),
        )
        .order_by(CompetitionEntry.id.desc())
        .limit(1)
    ).first()  # fmt: skip
    if found is None:
        return None
    entry_id, status, bot, version, upload_id, version_id = found
    number = None if version is None else int(version)
    return EnteredAlready(int(entry_id), str(status), bot, number, upload_id, version_id)


def entered_source_of(
    store: Store, competition_id: int, user_id: int, digest: str
) -> EnteredAlready | None:
    """:func:`entered_source` in a read of its own."""
    with store.read() as session:
        return entered_source(session, competition_id, user_id, digest)


def add_active_entry(
    store: Store,
    competition_id: int,
    user_id: int,
    version_id: int,
    now: datetime | None = None,
    *,
    daily_limit: int | None = None,
) -> tuple[int, str] | EnteredAlready | None:
    """Enter a stored, accepted version at once: one transaction storing the entry and
    settling it (see :func:`_activate`); return (its id, its status). Nothing is stored
    when the user entered this source already (that entry is returned: an identical
    source is no new entry), nor when the user made ``daily_limit`` entries in the last
    24 hours already (None)."""
    now = _now(now)
    with store.write() as session:
        lock_competition(store, session, competition_id)
        digest = session.scalar(select(BotVersion.sha256).where(BotVersion.id == version_id))
        same = entered_source(session, competition_id, user_id, str(digest))
        if same is not None:
            return same
        if not within_limit(store, session, competition_id, user_id, daily_limit, now):
            return None
        entry = CompetitionEntry(
            competition_id=competition_id,
            user_id=user_id,
            bot_version_id=version_id,
            status="pending",
            created=now,
        )
        session.add(entry)
        session.flush()
        return entry.id, _activate(store, session, entry, version_id, now)


def active_entrants(store: Store, competition_id: int) -> list[ActiveEntrant]:
    """The entrants playing the competition's ladder now (each user's active entry), with
    their ladder labels, the earliest accepted first."""
    with store.read() as session:
        found = session.execute(
            select(
                CompetitionEntry.bot_version_id,
                TournamentEntrant.label,
                CompetitionEntry.user_id,
                CompetitionEntry.accepted,
            )
            .join(Competition, Competition.id == CompetitionEntry.competition_id)
            .join(
                TournamentEntrant,
                (TournamentEntrant.tournament_id == Competition.ladder_id)
                & (TournamentEntrant.bot_version_id == CompetitionEntry.bot_version_id),
            )
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.status == "active",
            )
            .order_by(CompetitionEntry.accepted, CompetitionEntry.id)
        ).all()
    return [
        ActiveEntrant(int(version), str(label), int(user), as_utc(accepted))
        for version, label, user, accepted in found
        if version is not None and accepted is not None
    ]


def _entries_query(competition_id: int) -> Any:
    return (
        select(CompetitionEntry, User.name, Upload.status, Bot.name, BotVersion.version,
               TournamentEntrant.label)
        .join(User, User.id == CompetitionEntry.user_id)
        .join(Competition, Competition.id == CompetitionEntry.competition_id)
        .outerjoin(Upload, Upload.id == CompetitionEntry.upload_id)
        .outerjoin(BotVersion, BotVersion.id == CompetitionEntry.bot_version_id)
        .outerjoin(Bot, Bot.id == BotVersion.bot_id)
        .outerjoin(
            TournamentEntrant,
            (TournamentEntrant.tournament_id == Competition.ladder_id)
            & (TournamentEntrant.bot_version_id == CompetitionEntry.bot_version_id),
        )
        .where(CompetitionEntry.competition_id == competition_id)
        .order_by(CompetitionEntry.created.desc(), CompetitionEntry.id.desc())
    )  # fmt: skip


def _entry(found: Any) -> EntryRow:
    e, user, upload_status, bot, version, label = found
    return EntryRow(
        id=e.id, competition_id=e.competition_id, user_id=e.user_id, user=str(user),
        upload_id=e.upload_id, upload_status=upload_status, version_id=e.bot_version_id,
        bot=bot, version=version, label=label, status=e.status, reason=e.reason,
        created=as_utc(e.created), accepted=_aware(e.accepted),
        first_rated=_aware(e.first_rated), placed=_aware(e.placed),
    )  # fmt: skip


def entries_of(store: Store, competition_id: int, user_id: int) -> list[EntryRow]:
    """The user's entries in the competition, the latest first."""
    with store.read() as session:
        found = session.execute(
            _entries_query(competition_id).where(CompetitionEntry.user_id == user_id)
        ).all()
    return [_entry(row) for row in found]


def entry_rows(store: Store, competition_id: int) -> list[EntryRow]:
    """Every entry of the competition, the latest first."""
    with store.read() as session:
        found = session.execute(_entries_query(competition_id)).all()
    return [_entry(row) for row in found]


# --- the organiser's changes ------------------------------------------------------------------


def set_deadline(store: Store, competition_id: int, deadline: datetime) -> None:
    """Move the competition's deadline to ``deadline``."""
    with store.write() as session:
        session.execute(
            update(Competition)
            .where(Competition.id == competition_id)
            .values(deadline=as_utc(deadline))
        )


def _pending_matches_of(session: Session, tournament_id: int, version_id: int) -> list[int]:
    return [
        int(match_id)
        for match_id, seats in session.execute(
            select(Match.id, Match.seats).where(
                Match.tournament_id == tournament_id, Match.status == "pending"
            )
        )
        if version_id in [int(seat) for seat in seats]
    ]


def disqualify_version(
    store: Store, competition_id: int, version_id: int, reason: str, now: datetime | None = None
) -> tuple[int, int]:
    """Disqualify ``version_id`` in the competition: its entries that played (active,
    superseded) or are pending become ``disqualified`` with ``reason``, and its pending
    ladder and final matches are void; return (entries changed, matches voided)."""
    now = _now(now)
    with store.write() as session:
        competition = lock_competition(store, session, competition_id)
        changed = session.execute(
            update(CompetitionEntry)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.bot_version_id == version_id,
                CompetitionEntry.status.in_(("active", "placing", "superseded", "pending", "late")),
            )
            .values(status="disqualified", reason=reason)
        ).rowcount  # type: ignore[attr-defined]
        matches = _pending_matches_of(session, competition.ladder_id, version_id)
        if competition.final_id is not None:  # a finalist plays no more either
            matches += _pending_matches_of(session, competition.final_id, version_id)
        _void_matches(session, matches, f"disqualified: {reason}", now)
    return int(changed or 0), len(matches)


def _void_matches(session: Session, matches: list[int], reason: str, now: datetime) -> None:
    """Void these matches that are still pending (``{"void": reason}``), in the caller's
    transaction."""
    if matches:
        session.execute(
            update(Match)
            .where(Match.id.in_(matches), Match.status == "pending")
            .values(
                status="void",
                result={"void": reason, "worker": None},
                lease_expires=None,
                finished=now,
            )
        )


def reset_final(
    store: Store, competition_id: int, *, by: str, reason: str, now: datetime | None = None
) -> int:
    """Rerun the competition's final: keep it in ``earlier_finals`` (its number, tournament,
    published table or None, when it was published and replaced, ``reason``, ``by``), void
    its final tournament's unplayed matches (running ones too) and mark it cancelled, clear
    ``final_id``, ``final_table`` and ``finished``, status back to ``final`` (the
    scheduler's tick makes a new final). Return how many matches were voided."""
    now = _now(now)
    with store.write() as session:
        competition = lock_competition(store, session, competition_id)
        final_id = competition.final_id
        earlier = list(competition.earlier_finals or [])
        tournament = (
            None
            if final_id is None
            else session.scalar(select(Tournament.name).where(Tournament.id == final_id))
        )
        finished = competition.finished
        earlier.append(
            {"number": len(earlier) + 1, "tournament": tournament,
             "table": competition.final_table,
             "published": None if finished is None else as_utc(finished).isoformat(),
             "replaced": now.isoformat(), "reason": reason, "by": by}
        )  # fmt: skip
        competition.earlier_finals = earlier
        competition.final_id = None
        competition.final_table = None
        competition.finished = None
        competition.status = "final"
    if final_id is None:
        return 0
    return void_pending(store, final_id, f"final rerun by {by}", cancel=True, running=True)


# --- reads behind a competition's pages and exports beyond its own rows ----------------------

#: Entry statuses whose version was entered for good (it played, plays, or came late).
ENTERED = (*PLAYED, "late")


def competition_name(store: Store, competition_id: int) -> str | None:
    """The name the competition ``competition_id`` is stored under (None: no such)."""
    with store.read() as session:
        name = session.scalar(select(Competition.name).where(Competition.id == competition_id))
        return None if name is None else str(name)


@dataclass(frozen=True, slots=True)
class LadderMatch:
    """A finished (or void) match of a competition's ladder or final."""

    id: int
    tournament: str
    labels: tuple[str, ...]
    seats: tuple[int, ...]
    status: str
    games: int
    finished: datetime | None


def rating_points(store: Store, competition_id: int, version_id: int) -> list[RatingPoint]:
    """The version's ladder rating history in the competition, oldest first."""
    with store.read() as session:
        found = session.scalars(
            select(CompetitionRating)
            .where(
                CompetitionRating.competition_id == competition_id,
                CompetitionRating.bot_version_id == version_id,
            )
            .order_by(CompetitionRating.time, CompetitionRating.id)
        ).all()
    return [RatingPoint(as_utc(p.time), p.rating, p.low, p.high, p.games, p.rank) for p in found]


def recent_matches(
    store: Store, tournament_ids: Sequence[int], limit: int = 20
) -> list[LadderMatch]:
    """The latest finished matches of these tournaments (a competition's ladder and
    final), the latest first."""
    with store.read() as session:
        found = session.execute(
            select(Match, Tournament.name)
            .join(Tournament, Tournament.id == Match.tournament_id)
            .where(Match.tournament_id.in_(list(tournament_ids)), Match.status == "done")
            .order_by(Match.finished.desc(), Match.id.desc())
            .limit(limit)
        ).all()
    return [
        LadderMatch(
            id=m.id,
            tournament=str(name),
            labels=tuple(str(label) for label in (m.labels or [])),
            seats=tuple(int(seat) for seat in m.seats),
            status=m.status,
            games=m.games,
            finished=_aware(m.finished),
        )
        for m, name in found
    ]


def source_opened(store: Store, owner: str, bot: str, version: int, now: datetime) -> bool:
    """Whether the version is an entry (one that played: active, superseded, disqualified;
    or late) of a competition whose sources became public: ``sources_public`` and its
    deadline passed before ``now``."""
    with store.read() as session:
        found = session.scalar(
            select(CompetitionEntry.id)
            .join(Competition, Competition.id == CompetitionEntry.competition_id)
            .join(BotVersion, BotVersion.id == CompetitionEntry.bot_version_id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(
                User.name == owner,
                Bot.name == bot,
                BotVersion.version == version,
                CompetitionEntry.status.in_(ENTERED),
                Competition.sources_public.is_(True),
                Competition.deadline <= now,
            )
            .limit(1)
        )
    return found is not None
