"""Bot-writing competitions (docs/competitions.md): an organiser creates one, users enter
bots between its opening and its deadline, a ladder plays them continuously
(arena.service.clock schedules it) and a final among the ladder's best decides.

- :func:`create_competition` checks every setting (:class:`CompetitionError`, one sentence
  a mistake) and stores the competition with its ladder tournament (format ``ladder``,
  running, no match yet).
- An uploaded file enters through the one intake (arena.service.intake, which asks
  :func:`entry_checks` here; checked on a worker); :func:`enter_with_version` (an
  accepted version of one's own) enters a stored one; either while the
  competition is open, at most ``daily_submissions`` a user in any 24 hours;
  :func:`entry_accepted` settles an upload's entry once its check is done (the workers
  call it): the new version joins the ladder, and supersedes the user's active one at once
  or, while that one is placed, once placed itself (``placing`` meanwhile: arena.service.
  clock promotes it). A source the user entered already is no new entry (:func:`same_source`).
- The organiser's controls (``manage-competition``: its organiser, or an admin):
  :func:`extend_deadline`, :func:`disqualify`, :func:`close_now`, :func:`rerun_final`.
- Reads: :func:`competition_list`, :func:`competition_view`, the exports
  :func:`ladder_rows` and :func:`final_rows`, :func:`rating_history` (arena.service.
  competition_views builds them).

Times are aware UTC datetimes; the competition's ``time_zone`` is how they are shown.
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from arena.compete.names import check_name, fit_name
from arena.engine.rules import Rules
from arena.errors import ArenaError, NotFound
from arena.match.runtimes import RUNTIMES
from arena.service.accounts import Account
from arena.service.competition_views import (
    CompetitionSummary,
    CompetitionView,
    EarlierFinal,
    EntryView,
    FinalRow,
    FinalView,
    LadderRow,
    RatingPoint,
    RecentGame,
    competition_list,
    competition_view,
    entry_view,
    final_promise,
    final_rows,
    find_competition,
    is_open,
    ladder_ranks,
    ladder_rows,
    local_time,
    next_entry_at,
    rank_label,
    rating_history,
)
from arena.service.permissions import Actor, Operator, Target, actor_id, require
from arena.service.tournaments import preset
from arena.service.uploads import check_runtimes, offered_runtime
from arena.store import competition_tools as tools
from arena.store import competitions as stored
from arena.store.accounts import user_id_named
from arena.store.bots import version_names
from arena.store.competitions import CompetitionRow, EnteredAlready
from arena.store.db import Store, source_hash
from arena.store.matches import bot_sources
from arena.store.uploads import upload_with_version, version_of_source

__all__ = [
    "BOUNDS",
    "RESERVED_NAMES",
    "RUNTIMES",
    "CompetitionError",
    "CompetitionSummary",
    "CompetitionView",
    "EarlierFinal",
    "EntryView",
    "FinalRow",
    "FinalView",
    "LadderRow",
    "NewCompetition",
    "RatingPoint",
    "RecentGame",
    "check_in_bounds",
    "check_may_enter",
    "check_not_entered",
    "check_not_too_far",
    "check_open_for_entries",
    "check_window",
    "check_zone",
    "close_now",
    "competition_list",
    "competition_name",
    "competition_view",
    "create_competition",
    "disqualify",
    "enter_with_version",
    "entry_accepted",
    "entry_checks",
    "entry_of_upload",
    "extend_deadline",
    "final_promise",
    "final_rows",
    "find_competition",
    "ladder_ranks",
    "ladder_rows",
    "local_time",
    "new_deadline_in_utc",
    "over_limit",
    "rank_label",
    "rating_history",
    "rerun_final",
    "same_source",
    "seconds_of_ms",
    "source_opened",
]

logger = logging.getLogger(__name__)

# The runtimes a competition may offer are arena.match.runtimes.RUNTIMES (re-exported here):
# python, python-numpy (.py files), javascript (.js files).

#: Each numeric setting's bounds (inclusive) and unit, as the messages name them. The time
#: a move is the tournaments' (arena.service.tournaments).
BOUNDS: dict[str, tuple[float, float, str]] = {
    "players": (2, 5, ""),
    "daily_submissions": (1, 100, ""),
    "final_top": (2, 32, ""),
    "final_versions": (1, 5, ""),
    "final_confidence": (0.5, 0.999, ""),
    "final_max_games": (10, 100_000, ""),
    "games_per_deal": (1, 50, ""),
    "move_seconds": (0.01, 10.0, " s"),
    "memory_mb": (64, 2048, " MB"),
    "min_account_days": (0, 365, " days"),
}

#: The longest description, in characters.
MAX_DESCRIPTION = 5000
#: The longest reason for a disqualification, in characters.
MAX_REASON = 500
#: How far ahead a deadline may be (and how far back an opening).
MAX_AHEAD = timedelta(days=3660)
#: The largest id both databases hold (PostgreSQL's INTEGER); a larger one names nothing.
MAX_ID = 2**31 - 1
#: Names a competition may not take: they are pages of their own (``/competitions/new``).
RESERVED_NAMES = frozenset({"new"})


class CompetitionError(ArenaError):
    """A competition's setting or an action on it is refused (the message says why, in a
    sentence)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewCompetition:
    """A competition as an organiser asks for it (docs/competitions.md).

    Attributes:
        rules: a preset's name (:func:`arena.service.tournaments.preset`), unless
            ``custom_rules`` (a rule file's rule set) is given.
        players: seats at a table, 2-5; ``teams``: 4 players as 2v2.
        opens: when entries open (aware; None: now); ``deadline``: when they close.
        time_zone: the organiser's IANA time zone, how the dates are shown.
        daily_submissions: entries a user may make in any 24 hours.
        sources_public: the entries' sources are readable by everyone after the deadline.
        games_per_deal: games of one ladder or final match.
        final_top, final_confidence, final_max_games: the final (the ladder's top N,
            adjacent places separated at this confidence, at most so many games).
        final_versions: the versions each entrant may send to the final (its choice;
            by default its best-rated placed one and its latest placed one).
    """

    name: str
    deadline: datetime
    rules: str = "draw"
    custom_rules: Rules | None = None
    players: int = 2
    teams: bool = False
    move_seconds: float = 1.0
    memory_mb: int = 256
    runtimes: tuple[str, ...] = ("python",)
    opens: datetime | None = None
    time_zone: str = "UTC"
    daily_submissions: int = 5
    sources_public: bool = False
    games_per_deal: int = 2
    final_top: int = 8
    final_confidence: float = 0.95
    final_max_games: int = 14000
    final_versions: int = 2
    description: str = ""
    #: The youngest account that may enter, in days (0: any; arena.service.competition_tools).
    min_account_days: int = 0


def _now(now: datetime | None = None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


# --- creation ---------------------------------------------------------------------------------


def _in_bounds(what: str, value: float) -> None:
    check_in_bounds(BOUNDS, what, value, CompetitionError)


def check_in_bounds(
    bounds: Mapping[str, tuple[float, float, str]],
    what: str,
    value: float,
    error: type[ArenaError] = ArenaError,
) -> None:
    """Return if ``value`` is within ``bounds[what]`` (low, high, unit).

    Raises:
        error: it is not (NaN is not either), in a sentence naming the setting.
    """
    low, high, unit = bounds[what]
    if not low <= value <= high:
        shown = what.replace("_", " ")
        try:
            given = f"{value:g}{unit}"
        except OverflowError:  # an int beyond a float's range
            given = "a number that large"
        raise error(f"{shown} must be {low:g} to {high:g}{unit}, not {given}.")


def seconds_of_ms(ms: int) -> float:
    """A time given in milliseconds as seconds (infinite beyond a float's range, which
    the bounds then refuse in a sentence)."""
    try:
        return ms / 1000
    except OverflowError:
        return float("inf") if ms > 0 else float("-inf")


def _rules(new: NewCompetition) -> Rules:
    try:
        rules = new.custom_rules if new.custom_rules is not None else preset(new.rules)
        _in_bounds("players", new.players)
        rules.check_players(new.players, new.teams)
    except CompetitionError:
        raise
    except ArenaError as exc:
        raise CompetitionError(f"{str(exc).rstrip('.')}.") from None
    return rules


def _check_dates(new: NewCompetition, now: datetime) -> tuple[datetime, datetime]:
    return check_window(new.opens, new.deadline, new.time_zone, now, CompetitionError)


def check_window(
    opens: datetime | None,
    deadline: datetime,
    time_zone: str,
    now: datetime,
    error: type[ArenaError] = ArenaError,
) -> tuple[datetime, datetime]:
    """A window for entries (a competition's, an assignment's) checked: the zone known, both
    moments aware, the opening (default ``now``) before the deadline, the deadline ahead
    and both within :data:`MAX_AHEAD` of now. Return them in UTC.

    Raises:
        error: the first mistake, in a sentence with the dates in ``time_zone``.
    """
    check_zone(time_zone, error)
    for moment in (opens, deadline):
        if moment is not None and moment.tzinfo is None:
            raise error("give the opening and the deadline with their time zone.")
    try:
        opened = _now(opens) if opens is not None else now
        deadline = deadline.astimezone(UTC)
    except (OverflowError, ValueError):
        raise error("give dates between the years 1 and 9999.") from None
    shown = functools.partial(local_time, time_zone=time_zone)
    if deadline <= opened:
        raise error(
            f"the deadline ({shown(deadline)}) must come after the opening ({shown(opened)})."
        )
    if deadline <= now:
        raise error(f"the deadline ({shown(deadline)}) has passed already.")
    if deadline > now + MAX_AHEAD:
        raise error(
            f"the deadline ({shown(deadline)}) must be within {MAX_AHEAD.days} days from now."
        )
    if opened < now - MAX_AHEAD:  # (shown in UTC: a zone's offset may leave the years 1-9999)
        raise error(
            f"the opening ({opened:%Y-%m-%d} UTC) must be within {MAX_AHEAD.days} days of now."
        )
    return opened, deadline


def check_zone(time_zone: str, error: type[ArenaError] = ArenaError) -> None:
    """Return if ``time_zone`` is an IANA zone name this machine knows.

    Raises:
        error: it is not (the sentence names it, cut to 80 characters).
    """
    try:
        if len(time_zone) > 64:
            raise ValueError(time_zone)
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise error(
            f"{time_zone[:80]!r} is not a known time zone: use an IANA name such as "
            "Europe/Paris or UTC."
        ) from None


def _check_settings(new: NewCompetition) -> None:
    for what in ("daily_submissions", "final_top", "final_confidence", "final_max_games",
                 "final_versions", "games_per_deal", "move_seconds", "memory_mb",
                 "min_account_days"):  # fmt: skip
        _in_bounds(what, getattr(new, what))
    check_runtimes(new.runtimes, CompetitionError)
    if len(new.description) > MAX_DESCRIPTION:
        raise CompetitionError(f"the description may have at most {MAX_DESCRIPTION} characters.")
    if "\x00" in new.description:
        raise CompetitionError("the description holds a NUL character: send plain text.")


def create_competition(
    store: Store, actor: Actor, new: NewCompetition, *, now: datetime | None = None
) -> int:
    """Store the competition ``new`` for ``actor`` (its organiser; the operator's has
    none) with its ladder tournament, seeded at random; return its id.

    Raises:
        PermissionDenied: ``actor`` is not an organiser (nor an admin).
        CompetitionError: a setting is refused (the message says which); nothing stored.
    """
    require(actor, "create-competition", message="only organisers and admins create competitions")
    try:
        name = check_name(new.name.strip(), "competition name")
    except ArenaError as exc:
        raise CompetitionError(f"{exc}.") from None
    if name in RESERVED_NAMES:
        raise CompetitionError(f"{name!r} is a page of its own: choose another competition name.")
    rules = _rules(new)
    opens, deadline = _check_dates(new, _now(now))
    _check_settings(new)
    seed = random.SystemRandom().getrandbits(62)
    played = {"move_seconds": float(new.move_seconds), "memory_mb": int(new.memory_mb)}
    values = {
        "description": new.description.strip(), "owner_id": actor_id(actor),
        "players": new.players, "teams": new.teams,
        "settings": {**played, "runtimes": list(new.runtimes),
                     "games_per_deal": new.games_per_deal, "final_versions": new.final_versions},
        "opens": opens, "deadline": deadline, "time_zone": new.time_zone,
        "daily_submissions": new.daily_submissions, "sources_public": new.sources_public,
        "final_top": new.final_top, "final_confidence": float(new.final_confidence),
        "final_max_games": new.final_max_games, "seed": seed,
        "min_account_days": new.min_account_days,
    }  # fmt: skip
    try:
        competition_id = stored.insert_competition(
            store, name=name, ladder_name=fit_name(f"{name}-ladder"), rules=rules,
            values=values, tournament_settings=played, games_per_match=new.games_per_deal,
        )  # fmt: skip
    except ValueError as exc:
        raise CompetitionError(f"{exc}: choose another name.") from None
    logger.info("competition %s (id %s) created by %s", name, competition_id, _who(actor))
    return competition_id


def competition_name(store: Store, competition_id: int) -> str:
    """The stored name of the competition ``competition_id`` (the name it was created
    with, normalised: what its URLs hold).

    Raises:
        NotFound: there is none.
    """
    name = stored.competition_name(store, competition_id)
    if name is None:
        raise NotFound(f"no competition {competition_id}")
    return name


# --- who may do what -------------------------------------------------------------------------


def _manage(store: Store, actor: Actor, name: str) -> CompetitionRow:
    row = find_competition(store, name)
    require(
        actor,
        "manage-competition",
        Target(row.owner_id),
        message="only its organiser or an admin may change this competition",
    )
    return row


def _check_open(row: CompetitionRow, now: datetime) -> None:
    if is_open(row, now):
        return
    tz = row.time_zone
    if row.status == "open" and now < row.opens:
        raise CompetitionError(
            f"competition {row.name} opens for entries at {local_time(row.opens, tz)}."
        )
    raise CompetitionError(
        f"competition {row.name} closed for entries at {local_time(row.deadline, tz)}."
    )


def _check_daily(store: Store, row: CompetitionRow, user_id: int, now: datetime) -> None:
    if next_entry_at(store, row, user_id, now) is not None:
        raise CompetitionError(_over(row, store, user_id, now))


def _over(
    row: CompetitionRow,
    store: Store | None = None,
    user_id: int | None = None,
    now: datetime | None = None,
) -> str:
    """The daily limit's refusal, saying when the user's next entry is allowed."""
    said = f"competition {row.name} takes {row.daily_submissions} entries a user in any 24 hours"
    if store is None or user_id is None or now is None:
        return f"{said}."
    at = next_entry_at(store, row, user_id, now) or now
    return f"{said}: your next is allowed at {local_time(at, row.time_zone)}."


def _entrant(actor: Actor, action_message: str) -> Account:
    require(actor, "enter-competition", message=action_message)
    if not isinstance(actor, Account):
        raise CompetitionError(
            "an entry needs an account: the operator enters a user's bot with "
            "`arena competition enter --owner USER`."
        )
    return actor


# --- entries ----------------------------------------------------------------------------------


def entry_checks(
    store: Store,
    actor: Actor,
    name: str,
    filename: str,
    runtime: str | None = None,
    *,
    now: datetime | None = None,
) -> tuple[Account, CompetitionRow, str]:
    """Whether ``actor`` may enter a bot file named ``filename`` (to run under ``runtime``;
    default: the one its suffix names) in competition ``name`` now, before it is screened
    (the intake, arena.service.intake, takes the upload): the entrant, the competition and
    the runtime the entry runs under.

    Raises:
        PermissionDenied: ``actor`` may not enter (anonymous).
        NotFound: no competition is called ``name``.
        CompetitionError, UploadError: the entry is refused (closed, a runtime not offered,
            no runtime takes the file).
    """
    account = _entrant(actor, "log in to enter a competition")
    row = find_competition(store, name)
    _check_open(row, _now(now))
    check_may_enter(store, row, account.id, _now(now))
    return account, row, _check_runtime(row, filename, runtime)


def over_limit(store: Store, row: CompetitionRow, user_id: int, now: datetime) -> str:
    """The daily limit's refusal for this user, saying when the next entry is allowed."""
    return _over(row, store, user_id, now)


def entry_of_upload(store: Store, row: CompetitionRow, user_id: int, upload_id: int) -> EntryView:
    """The user's entry made with this upload.

    Raises:
        NotFound: the upload made no entry of the user's in this competition.
    """
    entry_id = stored.entry_of_upload(store, upload_id)
    if entry_id is None:
        raise NotFound(f"no entry made with upload {upload_id}")
    return _entry_view(store, row, user_id, entry_id)


def _check_runtime(row: CompetitionRow, filename: str, runtime: str | None) -> str:
    """The upload's runtime if the competition offers it
    (:func:`arena.service.uploads.offered_runtime`).

    Raises:
        CompetitionError: it does not (the sentence names those it offers).
        UploadError: no runtime takes the file.
    """
    offered = list(row.settings.get("runtimes") or ["python"])
    return offered_runtime(f"competition {row.name}", offered, filename, runtime, CompetitionError)


def _check_version_runtime(store: Store, row: CompetitionRow, version_id: int) -> None:
    """Refuse a stored version whose runtime the competition does not offer.

    Raises:
        CompetitionError: naming the version's runtime and those offered.
    """
    offered = list(row.settings.get("runtimes") or ["python"])
    [(_, _, _, runtime)] = bot_sources(store, [version_id])
    if runtime not in offered:
        raise CompetitionError(
            f"competition {row.name} takes bots in {', '.join(offered)}: version "
            f"{version_id} is a {runtime} bot."
        )


def check_open_for_entries(store: Store, name: str, now: datetime | None = None) -> None:
    """Refuse, as an entry would, when competition ``name`` takes no entry now (before a
    caller spends a sandboxed check on a file for it).

    Raises:
        NotFound: no competition called ``name``.
        CompetitionError: it is not open (the sentence gives its dates).
    """
    _check_open(find_competition(store, name), _now(now))


def check_not_entered(store: Store, name: str, owner: str, bot: str, source: str) -> None:
    """Refuse, as :func:`enter_with_version` would once the file is checked and stored, a
    file whose very source is ``owner``'s bot ``bot``'s version entered already in
    competition ``name`` (before a caller spends a check on a file it stores as nothing
    new).

    Raises:
        NotFound: no competition called ``name``.
        CompetitionError: that version is entered already (the sentence names the entry).
    """
    row = find_competition(store, name)
    user_id = user_id_named(store, owner)
    if user_id is None:
        return
    digest = source_hash(source)
    version = version_of_source(store, user_id, bot, digest)
    if version is None:
        return
    same = stored.entered_source_of(store, row.id, user_id, digest)
    if same is not None and same.version_id == version[0]:
        raise CompetitionError(same_source(row, same, None))


def enter_with_version(
    store: Store,
    actor: Actor,
    name: str,
    version_id: int,
    *,
    owner: str | None = None,
    now: datetime | None = None,
) -> EntryView:
    """Enter a stored version: ``actor``'s own (the operator names its ``owner``), while
    the competition is open (an account's entries within the daily limit); it plays the
    ladder at once, the user's active entry (or ``placing`` while the active one is placed).
    Return the entry.

    Raises:
        PermissionDenied: ``actor`` may not enter (anonymous).
        NotFound: no competition called ``name``, or no such version of the user's.
        CompetitionError: closed, over the daily limit, the operator named no owner, or
            the user entered this source already (nothing stored, no daily entry spent).
    """
    row = find_competition(store, name)
    now = _now(now)
    if isinstance(actor, Operator):
        if owner is None:
            raise CompetitionError("name the user the entry is for (--owner USER).")
        user_id = user_id_named(store, owner)
        if user_id is None:
            raise NotFound(f"no user called {owner!r}")
    else:
        user_id = _entrant(actor, "log in to enter a competition").id
    _check_open(row, now)
    check_may_enter(store, row, user_id, now, account_age=not isinstance(actor, Operator))
    in_range = 1 <= version_id <= MAX_ID  # (beyond: the database's integer overflows)
    names = version_names(store, [version_id]).get(version_id) if in_range else None
    if names is None or names[0] != user_id:
        raise NotFound(f"no bot version {version_id} of yours to enter")
    _check_version_runtime(store, row, version_id)
    limit = None if isinstance(actor, Operator) else row.daily_submissions
    if limit is not None:
        _check_daily(store, row, user_id, now)
    added = stored.add_active_entry(store, row.id, user_id, version_id, now, daily_limit=limit)
    if isinstance(added, EnteredAlready):
        sent = None if added.version_id == version_id else f"version {version_id}"
        raise CompetitionError(same_source(row, added, sent))
    if added is None:  # another entry of the user's came in meanwhile, up to the limit
        raise CompetitionError(_over(row, store, user_id, now))
    entry_id, status = added
    logger.info("competition %s: entry %d of version %d: %s", name, entry_id, version_id, status)
    return _entry_view(store, row, user_id, entry_id)


def same_source(row: CompetitionRow, same: EnteredAlready, sent: str | None) -> str:
    """The refusal of a source the entrant entered already (``sent``: what was sent, a
    file's name, or None for the very version entered): it is no new entry and costs no
    daily entry."""
    if same.version is None:
        what = f"is the same source as your upload {same.upload_id}, still being checked"
    elif sent is None:
        what = f"(version {same.version} of your bot {same.bot}) is entered already"
    else:
        what = f"is the same source as version {same.version} of your bot {same.bot}"
    return (
        f"{sent or 'this version'} {what} (entry {same.entry_id} in {row.name}, "
        f"{same.status}): it is not a new entry, and it costs none of your daily entries."
    )


def entry_accepted(store: Store, upload_id: int, now: datetime | None = None) -> int | None:
    """Settle the competition entry made with this upload once its check is done (the
    workers call it after every check): accepted (or "already") -> active, superseding the
    user's previous active entry, or placing while that one is placed (``late`` after the
    deadline: arena.store.competitions.accept_entry); rejected -> rejected with
    the upload's message. Return the entry's id, or None if the upload is no entry (it is
    a plain upload: it gets its placement tournament). Idempotent.
    """
    entry_id = stored.entry_of_upload(store, upload_id)
    if entry_id is None:
        return None
    found = upload_with_version(store, upload_id)
    if found is None or found[0].status == "pending":
        return entry_id
    upload = found[0]
    if upload.status in ("accepted", "already") and upload.bot_version_id is not None:
        settled = stored.accept_entry(
            store, upload_id, version_id=upload.bot_version_id, message=None, now=now
        )
    else:
        settled = stored.accept_entry(
            store, upload_id, version_id=None, message=upload.message, now=now
        )
    if settled is not None:
        logger.info("competition entry %d (upload %d): %s", settled[0], upload_id, settled[1])
    return entry_id


def _entry_view(store: Store, row: CompetitionRow, user_id: int, entry_id: int) -> EntryView:
    for entry in stored.entries_of(store, row.id, user_id):
        if entry.id == entry_id:
            return entry_view(row, entry)
    raise NotFound(f"no entry {entry_id}")  # pragma: no cover (just stored)


# --- the organiser's controls -----------------------------------------------------------------


def new_deadline_in_utc(deadline: datetime) -> datetime:
    """A deadline an organiser moves, in UTC.

    Raises:
        CompetitionError: without its time zone, or out of the calendar's range.
    """
    if deadline.tzinfo is None:
        raise CompetitionError("give the new deadline with its time zone.")
    try:
        return deadline.astimezone(UTC)
    except (OverflowError, ValueError):
        raise CompetitionError("give a date between the years 1 and 9999.") from None


def check_not_too_far(deadline: datetime, now: datetime) -> None:
    """Raise CompetitionError if ``deadline`` is more than :data:`MAX_AHEAD` from ``now``."""
    if deadline > now + MAX_AHEAD:
        raise CompetitionError(f"the deadline must be within {MAX_AHEAD.days} days from now.")


def extend_deadline(
    store: Store, actor: Actor, name: str, deadline: datetime, *, now: datetime | None = None
) -> None:
    """Move the deadline of an open competition later (after now and after the current
    one).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser nor an admin.
        CompetitionError: closed already, or the new deadline is not later.
    """
    row = _manage(store, actor, name)
    now = _now(now)
    deadline = new_deadline_in_utc(deadline)
    if row.status != "open" or now >= row.deadline:
        raise CompetitionError(
            f"competition {name} closed at {local_time(row.deadline, row.time_zone)}: its deadline "
            "can no longer move."
        )
    if deadline <= row.deadline:
        raise CompetitionError(
            f"the new deadline ({local_time(deadline, row.time_zone)}) must come after the "
            f"current one ({local_time(row.deadline, row.time_zone)})."
        )
    check_not_too_far(deadline, now)
    stored.set_deadline(store, row.id, deadline)
    _log(store, actor, row, "deadline", "deadline", row.deadline, deadline)
    logger.info("competition %s: deadline moved to %s by %s", name, deadline, _who(actor))


def disqualify(store: Store, actor: Actor, name: str, version_id: int, reason: str) -> None:
    """Disqualify an entered version, with ``reason`` (shown on its row): its entries stop
    playing and its pending ladder matches are void.

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser nor an admin.
        CompetitionError: no reason given, or the version is not entered.
    """
    row = _manage(store, actor, name)
    reason = _reason(reason, "the disqualification", "shown on its row")
    changed, voided = (
        stored.disqualify_version(store, row.id, version_id, reason)
        if 1 <= version_id <= MAX_ID  # (beyond: the database's integer overflows)
        else (0, 0)
    )
    if not changed:
        raise CompetitionError(f"version {version_id} is not an entry of {name} to disqualify.")
    _log(store, actor, row, "disqualify", f"version {version_id}", "entered",
         f"disqualified: {reason}")  # fmt: skip
    logger.info(
        "competition %s: version %d disqualified by %s (%d matches void)",
        name, version_id, _who(actor), voided,
    )  # fmt: skip


def close_now(store: Store, actor: Actor, name: str, *, now: datetime | None = None) -> None:
    """Close an open competition now (its deadline becomes now; the scheduler's next tick
    stops the ladder and starts the final).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser nor an admin.
        CompetitionError: closed already, or not opened yet (closing it would publish an
            empty final).
    """
    row = _manage(store, actor, name)
    now = _now(now)
    if row.status != "open" or now >= row.deadline:
        raise CompetitionError(
            f"competition {name} closed at {local_time(row.deadline, row.time_zone)} already."
        )
    if now < row.opens:
        raise CompetitionError(
            f"competition {name} opens at {local_time(row.opens, row.time_zone)}: there is "
            "nothing to close before its entries open."
        )
    stored.set_deadline(store, row.id, now)
    _log(store, actor, row, "close", "deadline", row.deadline, now)
    logger.info("competition %s closed by %s", name, _who(actor))


def rerun_final(store: Store, actor: Actor, name: str, reason: str) -> None:
    """Play the final again, for ``reason`` (shown with the table it replaces): its
    unplayed matches are void; its table stays shown, marked replaced with the reason,
    until the new final's is published, and is kept among the earlier finals; the
    scheduler's next tick makes a new final, which spends a smaller share of the error
    (arena.compete.final.rerun_share). The page, the API and ``arena competition final
    --rerun`` call this.

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser nor an admin.
        CompetitionError: no reason given (or too long), or no final was made yet.
    """
    row = _manage(store, actor, name)
    if row.status not in ("final", "done") or row.final_id is None:
        raise CompetitionError(f"competition {name} has no final to rerun yet.")
    reason = _reason(reason, "the rerun", "shown with the table it replaces")
    voided = stored.reset_final(store, row.id, by=_who(actor), reason=reason)
    _log(store, actor, row, "rerun", "final", row.status, f"rerun: {reason}")
    logger.info("competition %s: final rerun by %s (%d matches void)", name, _who(actor), voided)


def _reason(reason: str, what: str, where: str) -> str:
    """An organiser's reason as stored: on one line, NULs dropped.

    Raises:
        CompetitionError: empty, or longer than :data:`MAX_REASON`.
    """
    reason = " ".join(reason.replace("\x00", " ").split())
    if not reason:
        raise CompetitionError(f"give the reason for {what}: it is {where}.")
    if len(reason) > MAX_REASON:
        raise CompetitionError(f"the reason may have at most {MAX_REASON} characters.")
    return reason


def source_opened(store: Store, owner: str, bot: str, version: int) -> bool:
    """Whether a version's source is readable by everyone because it was entered in a
    competition whose sources became public at its deadline."""
    return stored.source_opened(store, owner, bot, version, _now())


def _who(actor: Actor) -> str:
    return "anonymous" if actor is None else actor.name


# --- the organiser's tools beside these (arena.service.competition_tools) --------------------


def _log(
    store: Store, actor: Actor, row: CompetitionRow, action: str, what: str, old: object,
    new: object,
) -> None:  # fmt: skip
    """Add the change of ``what`` from ``old`` to ``new`` to the competition's action log."""
    shown = [local_time(v, row.time_zone) if isinstance(v, datetime) else str(v)
             for v in (old, new)]  # fmt: skip
    change = {"what": what, "from": shown[0], "to": shown[1]}
    tools.log_action(store, row.id, tools.Who(actor_id(actor), _who(actor)), action, [change])


def check_may_enter(
    store: Store, row: CompetitionRow, user_id: int, now: datetime, *, account_age: bool = True
) -> None:
    """Refuse an entry of a user who withdrew from the competition, or (with
    ``account_age``) whose account is younger than its ``min_account_days``.

    Raises:
        CompetitionError: the sentence says which, and from when a young account may enter.
    """
    if any(e.status == "withdrawn" for e in stored.entries_of(store, row.id, user_id)):
        raise CompetitionError(
            f"you withdrew from competition {row.name}: a withdrawal is final, so it takes "
            "no new entry of yours."
        )
    created = tools.user_created(store, user_id)
    if not account_age or not row.min_account_days or created is None:
        return
    allowed_from = created + timedelta(days=row.min_account_days)
    if now < allowed_from:
        raise CompetitionError(
            f"competition {row.name} takes entries from accounts at least "
            f"{row.min_account_days} days old: yours was made at "
            f"{local_time(created, row.time_zone)}, so it may enter from "
            f"{local_time(allowed_from, row.time_zone)}."
        )
