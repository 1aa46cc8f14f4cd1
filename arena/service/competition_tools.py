"""The organiser's tools for a competition (docs/competitions.md, "The organiser's tools"),
beside the controls of arena.service.competitions; each is one function the page, the API
and ``arena competition`` share, checking its own permission:

- :func:`copy_report`: copies and near-copies across entrants (the similarity engine the
  classes use, arena.service.similarity; a byte-for-byte copy always), with the pairs and
  their scores; the organiser's only (``manage-competition``).
- :func:`competition_games`: every game record of the competition (its ladder and its
  final) as JSON lines, streamed; anyone (faults' messages for admins only, games of bots
  hidden from the reader left out).
- :func:`post_announcement` (the organiser) and :func:`announcements` (anyone), newest
  first.
- :func:`edit_settings`: the settings that may change after creation (deadline,
  description, entries a day, the youngest account, the final's); each change in the action
  log (:func:`action_log`, the organiser's only), as the other controls' are.
- :func:`pause_ladder` / :func:`resume_ladder`: no ladder match is added while paused (its
  pending ones are void; the clock, arena.service.clock, adds none).
- :func:`withdraw`: an entrant leaves the competition (their versions leave the ladder and
  the final; final).
- :func:`competition_extras`: what the competition's page shows of these.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from arena.errors import NotFound
from arena.service.accounts import Account
from arena.service.competitions import (
    BOUNDS,
    MAX_AHEAD,
    MAX_DESCRIPTION,
    CompetitionError,
    check_in_bounds,
    find_competition,
    local_time,
)
from arena.service.display import display_name
from arena.service.games import redact_record
from arena.service.permissions import Actor, Operator, Target, actor_id, allowed, require
from arena.service.privacy import hidden_from
from arena.service.results import tournament_records
from arena.service.shapes import HIDDEN, about
from arena.service.similarity import (
    MAX_COMPARED_CHARS,
    MAX_PAIR_CHARS,
    THRESHOLD,
    SimilarPair,
    compare_cached,
)
from arena.store import competition_tools as stored
from arena.store.accounts import user_id_named
from arena.store.bots import version_sources
from arena.store.competitions import ENTERED, CompetitionRow, entries_of, entry_rows
from arena.store.db import Store

__all__ = [
    "MAX_ANNOUNCEMENT",
    "THRESHOLD",
    "ActionView",
    "AnnouncementView",
    "Change",
    "CompetitionExtras",
    "CopyPair",
    "CopyReport",
    "CopySide",
    "SettingsChange",
    "action_log",
    "announcements",
    "competition_extras",
    "competition_games",
    "copy_report",
    "edit_settings",
    "pause_ladder",
    "post_announcement",
    "resume_ladder",
    "withdraw",
]

logger = logging.getLogger(__name__)

#: The longest announcement, in characters.
MAX_ANNOUNCEMENT = 2000
#: The entry statuses whose versions the copy report compares: every version that was
#: entered for good (it played, plays, came late, or was withdrawn).
COMPARED = (*ENTERED, "withdrawn")


@dataclass(frozen=True, slots=True)
class Change:
    """One change of the action log: ``what`` went from ``old`` to ``new`` (as shown)."""

    what: str
    old: str = field(metadata=about("before the change", name="from"))
    new: str = field(metadata=about("after the change", name="to"))


@dataclass(frozen=True, slots=True)
class ActionView:
    """A line of the action log: who did it, when, and each change it made."""

    time: datetime
    actor: str
    action: str = field(
        metadata=about("settings, deadline, close, disqualify, rerun, pause, resume, withdraw")
    )
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True)
class AnnouncementView:
    """An organiser's announcement."""

    id: int
    author: str
    body: str
    time: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsChange:
    """The settings to change (None: keep; the API's request as it is). ``deadline`` is
    aware; the rest as arena.service.competitions.NewCompetition has them."""

    deadline: datetime | None = field(default=None, metadata=about("ISO 8601 with its offset"))
    description: str | None = field(default=None, metadata=about(max_length=MAX_DESCRIPTION))
    daily_submissions: int | None = None
    min_account_days: int | None = field(
        default=None, metadata=about("the youngest account that may enter, in days")
    )
    final_top: int | None = None
    final_confidence: float | None = None
    final_max_games: int | None = None


@dataclass(frozen=True, slots=True)
class CompetitionExtras:
    """What the competition's page shows of the organiser's tools, for one reader."""

    announcements: tuple[AnnouncementView, ...]
    paused: datetime | None = field(
        metadata=about("since when the ladder is paused (null: it plays)")
    )
    min_account_days: int
    can_manage: bool = field(metadata=HIDDEN)
    can_withdraw: bool = field(metadata=about("the reader has an entry to withdraw"))
    withdrawn: bool = field(metadata=about("the reader withdrew"))


@dataclass(frozen=True, slots=True)
class CopySide:
    """An entrant's side of a similar pair: the version compared and its share found in the
    other's, with its matching lines."""

    entrant: str
    version: str = field(metadata=about("owner/bot vN"))
    version_id: int
    status: str = field(metadata=about("its entry's status"))
    similarity: float = field(
        metadata=about("the share of this source found in the other", digits=4)
    )
    lines: tuple[tuple[int, int], ...] = field(
        metadata=about("its matching lines: [first, last] from 1")
    )


@dataclass(frozen=True, slots=True)
class CopyPair:
    """Two entrants' most similar versions: ``score`` the larger similarity (1 for the
    same bytes), ``identical`` whether the sources are byte for byte the same."""

    score: float = field(metadata=about("the larger of the two similarities", digits=4))
    identical: bool
    tokens: int = field(metadata=about("the length of the text in common (tokenized)"))
    a: CopySide
    b: CopySide


@dataclass(frozen=True, slots=True)
class CopyReport:
    """The copies and near-copies across a competition's entrants (:func:`copy_report`).

    Attributes:
        entrants: entrants with a version compared; ``versions``: distinct sources compared.
        scope: ``every entered version``, or ``each entrant's latest version`` when every
            one is more than a request compares.
        pairs: one a pair of entrants (their most similar versions), highest score first.
    """

    competition: str
    threshold: float
    entrants: int
    versions: int
    scope: str
    seconds: float = field(metadata=about("how long the comparison took", digits=3))
    pairs: tuple[CopyPair, ...]


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


def _who(actor: Actor) -> stored.Who:
    return stored.Who(actor_id(actor), "anonymous" if actor is None else actor.name)


def _organiser(store: Store, actor: Actor, name: str) -> CompetitionRow:
    """The competition, if ``actor`` is its organiser (or an admin, the operator).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
    """
    row = find_competition(store, name)
    require(
        actor, "manage-competition", Target(row.owner_id),
        message="only its organiser or an admin may use this competition's organiser tools",
    )  # fmt: skip
    return row


def _closed(row: CompetitionRow) -> CompetitionError:
    return CompetitionError(
        f"competition {row.name} closed at {local_time(row.deadline, row.time_zone)}: "
        "its ladder and its entries' settings no longer change."
    )


# --- announcements and the log ----------------------------------------------------------------


def _plain_text(text: str, what: str, limit: int) -> str:
    text = text.strip()
    if "\x00" in text:
        raise CompetitionError(f"the {what} holds a NUL character: send plain text.")
    if len(text) > limit:
        raise CompetitionError(f"the {what} may have at most {limit} characters, not {len(text)}.")
    return text


def post_announcement(
    store: Store, actor: Actor, name: str, body: str, *, now: datetime | None = None
) -> AnnouncementView:
    """Post an announcement on competition ``name``'s page (its organiser, an admin).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: empty, too long (:data:`MAX_ANNOUNCEMENT`), or a NUL character.
    """
    row = _organiser(store, actor, name)
    body = _plain_text(body, "announcement", MAX_ANNOUNCEMENT)
    if not body:
        raise CompetitionError("write the announcement: it is empty.")
    now = _now(now)
    who = _who(actor)
    announcement_id = stored.add_announcement(store, row.id, who, body, now)
    logger.info("competition %s: announcement %d by %s", row.name, announcement_id, who.name)
    return AnnouncementView(announcement_id, who.name, body, now)


def announcements(store: Store, actor: Actor, name: str) -> tuple[AnnouncementView, ...]:
    """Competition ``name``'s announcements, the latest first (anyone who sees it).

    Raises:
        NotFound: no such competition.
    """
    row = find_competition(store, name)
    return tuple(
        AnnouncementView(a.id, a.author, a.body, a.created)
        for a in stored.announcement_rows(store, row.id)
    )


def action_log(store: Store, actor: Actor, name: str) -> tuple[ActionView, ...]:
    """Competition ``name``'s action log, the latest first: every change of its settings
    and every control (deadline, close, disqualify, rerun, pause, resume) and withdrawal,
    who made it and when (its organiser, an admin).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
    """
    row = _organiser(store, actor, name)
    return tuple(
        ActionView(
            time=a.created,
            actor=a.actor,
            action=a.action,
            changes=tuple(
                Change(str(c.get("what", "")), str(c.get("from", "")), str(c.get("to", "")))
                for c in a.changes
                if isinstance(c, Mapping)
            ),
        )
        for a in stored.action_rows(store, row.id)
    )


# --- settings after creation ------------------------------------------------------------------


def _shown(value: object, row: CompetitionRow) -> str:
    if isinstance(value, datetime):
        return local_time(value, row.time_zone)
    if isinstance(value, str) and len(value) > 80:
        return value[:77] + "..."
    return str(value)


def _checked_deadline(row: CompetitionRow, deadline: datetime, now: datetime) -> datetime:
    if deadline.tzinfo is None:
        raise CompetitionError("give the new deadline with its time zone.")
    try:
        deadline = deadline.astimezone(UTC)
    except (OverflowError, ValueError):
        raise CompetitionError("give a date between the years 1 and 9999.") from None
    shown = local_time(deadline, row.time_zone)
    if deadline <= now:
        raise CompetitionError(f"the new deadline ({shown}) has passed already.")
    if deadline <= row.opens:
        raise CompetitionError(
            f"the new deadline ({shown}) must come after the opening "
            f"({local_time(row.opens, row.time_zone)})."
        )
    if deadline > now + MAX_AHEAD:
        raise CompetitionError(f"the deadline must be within {MAX_AHEAD.days} days from now.")
    return deadline


def _wanted(row: CompetitionRow, change: SettingsChange, now: datetime) -> dict[str, object]:
    """The settings ``change`` asks for, checked, that differ from the stored ones."""
    wanted: dict[str, object] = {}
    if change.deadline is not None and change.deadline != row.deadline:
        wanted["deadline"] = _checked_deadline(row, change.deadline, now)
    if change.description is not None:
        wanted["description"] = _plain_text(change.description, "description", MAX_DESCRIPTION)
    for what in ("daily_submissions", "min_account_days", "final_top", "final_confidence",
                 "final_max_games"):  # fmt: skip
        value = getattr(change, what)
        if value is not None:
            check_in_bounds(BOUNDS, what, value, CompetitionError)
            wanted[what] = float(value) if what == "final_confidence" else int(value)
    return {key: value for key, value in wanted.items() if getattr(row, key) != value}


def edit_settings(
    store: Store,
    actor: Actor,
    name: str,
    change: SettingsChange,
    *,
    now: datetime | None = None,
) -> tuple[Change, ...]:
    """Change competition ``name``'s settings that may change after creation (its
    organiser, an admin): the description at any time; the deadline (later or earlier,
    ahead of now), entries a day, the youngest account and the final's settings while it
    is open. Each change goes to the action log; return them (none: nothing differed).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: a value is refused (the sentence names it), or the competition
            closed and a setting other than the description was asked to change.
    """
    row = _organiser(store, actor, name)
    now = _now(now)
    wanted = _wanted(row, change, now)
    if not wanted:
        return ()
    changes = tuple(
        Change(what.replace("_", " "), _shown(getattr(row, what), row), _shown(value, row))
        for what, value in wanted.items()
    )
    open_only = set(wanted) != {"description"}
    if open_only and (row.status != "open" or now >= row.deadline):
        raise _closed(row)
    logged = [{"what": c.what, "from": c.old, "to": c.new} for c in changes]
    if not stored.update_settings(
        store, row.id, wanted, _who(actor), logged, open_only=open_only, now=now
    ):
        raise _closed(row)
    logger.info("competition %s: %s changed by %s", row.name, ", ".join(wanted), _who(actor).name)
    return changes


# --- the ladder's pause ----------------------------------------------------------------------


def _pause(store: Store, actor: Actor, name: str, paused: bool, now: datetime | None) -> int:
    row = _organiser(store, actor, name)
    now = _now(now)
    if row.status != "open" or now >= row.deadline:
        raise _closed(row)
    voided = stored.set_paused(store, row.id, paused, _who(actor), now)
    if voided is None:
        state = "paused already" if paused else "not paused"
        raise CompetitionError(f"the ladder of competition {row.name} is {state}.")
    logger.info("competition %s: ladder %s by %s", row.name,
                "paused" if paused else "resumed", _who(actor).name)  # fmt: skip
    return voided


def pause_ladder(store: Store, actor: Actor, name: str, *, now: datetime | None = None) -> int:
    """Pause competition ``name``'s ladder (its organiser, an admin): its pending ladder
    matches are void (running ones finish) and none is added until it resumes; entries are
    still taken. Return how many matches were voided.

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: closed, or paused already.
    """
    return _pause(store, actor, name, True, now)


def resume_ladder(store: Store, actor: Actor, name: str, *, now: datetime | None = None) -> None:
    """Let competition ``name``'s ladder play again (its organiser, an admin).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: closed, or not paused.
    """
    _pause(store, actor, name, False, now)


# --- withdrawal -------------------------------------------------------------------------------


def withdraw(
    store: Store,
    actor: Actor,
    name: str,
    *,
    owner: str | None = None,
    now: datetime | None = None,
) -> tuple[int, ...]:
    """Withdraw ``actor`` (the operator names the ``owner``) from competition ``name``: each
    of their entries leaves the ladder and the final (its pending matches void; its games
    stay), its row says so, and the competition takes no new entry of theirs. Return the
    versions withdrawn.

    Raises:
        PermissionDenied: anonymous.
        NotFound: no such competition, or no user ``owner``.
        CompetitionError: no entry to withdraw, withdrawn already, or the final table is
            published.
    """
    require(actor, "enter-competition", message="log in to withdraw from a competition")
    row = find_competition(store, name)
    if isinstance(actor, Operator):
        if owner is None:
            raise CompetitionError("name the user who withdraws (--owner USER).")
        user_id = user_id_named(store, owner)
        if user_id is None:
            raise NotFound(f"no user called {owner!r}")
    elif isinstance(actor, Account):
        user_id = actor.id
    else:  # pragma: no cover (require refused anonymous)
        raise CompetitionError("log in to withdraw from a competition.")
    now = _now(now)
    entries = entries_of(store, row.id, user_id)
    if any(e.status == "withdrawn" for e in entries):
        raise CompetitionError(f"you withdrew from competition {row.name} already.")
    if not any(e.status in stored.WITHDRAWABLE for e in entries):
        raise CompetitionError(f"you have no entry in competition {row.name} to withdraw.")
    reason = f"its entrant withdrew at {local_time(now, row.time_zone)}"
    versions = stored.withdraw_entries(store, row.id, user_id, reason, _who(actor), now)
    if versions is None:
        raise CompetitionError(
            f"the final table of competition {row.name} is published: a withdrawal no longer "
            "changes it (ask its organiser)."
        )
    logger.info("competition %s: user %d withdrew (versions %s)", row.name, user_id, versions)
    return tuple(versions)


# --- the page ---------------------------------------------------------------------------------


def competition_extras(store: Store, actor: Actor, name: str) -> CompetitionExtras:
    """What competition ``name``'s page shows of the organiser's tools to ``actor``.

    Raises:
        NotFound: no such competition.
    """
    row = find_competition(store, name)
    mine = entries_of(store, row.id, actor.id) if isinstance(actor, Account) else []
    withdrawn = any(e.status == "withdrawn" for e in mine)
    return CompetitionExtras(
        announcements=announcements(store, actor, name),
        paused=row.ladder_paused,
        min_account_days=row.min_account_days,
        can_manage=allowed(actor, "manage-competition", Target(row.owner_id)),
        can_withdraw=row.status != "done" and not withdrawn
        and any(e.status in stored.WITHDRAWABLE for e in mine),
        withdrawn=withdrawn,
    )  # fmt: skip


# --- the replay export ------------------------------------------------------------------------


def competition_games(store: Store, actor: Actor, name: str) -> Iterator[str]:
    """Every game record of competition ``name`` (its ladder's, then its final's), one JSON
    document a line (the records ``arena replay verify`` reads), read in batches as the
    lines are taken: a forfeit's message and stderr for admins only, a game with a bot
    hidden from ``actor`` (arena.service.privacy) left out.

    Raises:
        NotFound: no such competition (before the first line).
    """
    row = find_competition(store, name)
    hidden = hidden_from(store, actor)
    labels: set[str] = set()
    if hidden:
        labels = {
            str(e.label) for e in entry_rows(store, row.id)
            if e.label is not None and hidden.owner(e.user)
        }  # fmt: skip
    whole = allowed(actor, "read-faults")  # an admin's (no owner: every bot's)
    tournaments = [row.ladder_id] + ([row.final_id] if row.final_id is not None else [])
    return _lines(store, tournaments, labels, whole)


def _lines(store: Store, tournaments: list[int], hidden: set[str], whole: bool) -> Iterator[str]:
    for tournament_id in tournaments:
        for record in tournament_records(store, tournament_id):
            if hidden and hidden & {str(seat) for seat in record.get("seats") or ()}:
                continue
            shown = record if whole else redact_record(record)
            yield json.dumps(shown, separators=(",", ":")) + "\n"


# --- copies across entrants ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Version:
    version_id: int
    user: str
    name: str
    status: str
    digest: str


def _entered(store: Store, row: CompetitionRow) -> tuple[dict[int, _Version], dict[int, str]]:
    """Every version entered for good (:data:`COMPARED`), and the sources by version id."""
    statuses: dict[int, str] = {}
    for entry in sorted(entry_rows(store, row.id), key=lambda e: e.id):
        if entry.version_id is not None and entry.status in COMPARED:
            statuses[entry.version_id] = entry.status
    rows = version_sources(store, sorted(statuses))
    versions = {
        v: _Version(v, owner, display_name(owner, bot, number), statuses[v], sha)
        for v, (owner, bot, number, sha, _) in rows.items()
    }
    return versions, {v: rows[v][4] for v in rows}


def _latest_only(versions: dict[int, _Version]) -> dict[int, _Version]:
    latest: dict[str, _Version] = {}
    for version in versions.values():  # ids grow: the largest is the latest
        if version.user not in latest or version.version_id > latest[version.user].version_id:
            latest[version.user] = version
    return {v.version_id: v for v in latest.values()}


def _too_much(sources: Mapping[int, str]) -> bool:
    chars = sum(len(source) for source in sources.values())
    return chars > MAX_COMPARED_CHARS or (len(sources) - 1) * chars > MAX_PAIR_CHARS


def _side(version: _Version, similarity: float, lines: tuple[tuple[int, int], ...]) -> CopySide:
    return CopySide(
        entrant=version.user, version=version.name, version_id=version.version_id,
        status=version.status, similarity=similarity, lines=lines,
    )  # fmt: skip


def _pairs(
    versions: dict[int, _Version], pairs: list[SimilarPair[int]], threshold: float
) -> list[CopyPair]:
    """The best pair of each two entrants: identical sources (score 1, whatever the
    fingerprints say: a copy of boilerplate is a copy too), then the fingerprints' pairs."""
    best: dict[tuple[str, str], CopyPair] = {}

    def keep(pair: CopyPair) -> None:
        key = tuple(sorted((pair.a.entrant, pair.b.entrant)))
        held = best.get((key[0], key[1]))
        if held is None or (pair.score, pair.identical) > (held.score, held.identical):
            best[(key[0], key[1])] = pair

    by_digest: dict[str, list[_Version]] = {}
    for version in versions.values():
        by_digest.setdefault(version.digest, []).append(version)
    for same in by_digest.values():
        for i, a in enumerate(same):
            for b in same[i + 1 :]:
                if a.user != b.user:
                    keep(CopyPair(1.0, True, 0, _side(a, 1.0, ()), _side(b, 1.0, ())))
    for p in pairs:
        for a in by_digest[versions[p.a].digest]:
            for b in by_digest[versions[p.b].digest]:
                if a.user != b.user and p.score > threshold:
                    keep(CopyPair(p.score, False, p.tokens,
                                  _side(a, p.side_a.similarity, p.side_a.lines),
                                  _side(b, p.side_b.similarity, p.side_b.lines)))  # fmt: skip
    return sorted(
        best.values(), key=lambda p: (-p.score, not p.identical, p.a.entrant, p.b.entrant)
    )


def copy_report(
    store: Store, actor: Actor, name: str, *, threshold: float = THRESHOLD
) -> CopyReport:
    """The copies and near-copies across competition ``name``'s entrants (its organiser,
    an admin): every version entered for good compared with every other entrant's (the
    classes' engine, arena.service.similarity: renamed variables hide nothing, the reference
    bots and the starter bot are boilerplate), one pair of versions a pair of entrants
    scoring above ``threshold`` (0 to 1); a byte-for-byte copy always (score 1). An entrant's
    own versions are never compared with each other. When every version is more than a
    request compares, each entrant's latest version only (``scope`` says so).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: ``threshold`` is not a share from 0 to 1, or even the latest
            versions are more than a request compares (the operator's command is not
            bounded).
    """
    row = _organiser(store, actor, name)
    if not 0.0 <= threshold <= 1.0 or threshold != threshold:
        raise CompetitionError(f"the threshold is a share from 0 to 1, not {threshold}.")
    versions, sources = _entered(store, row)
    scope = "every entered version"
    bounded = not isinstance(actor, Operator)
    if bounded and _too_much(_distinct(versions, sources)):
        versions, scope = _latest_only(versions), "each entrant's latest version"
    distinct = _distinct(versions, sources)
    if bounded and _too_much(distinct):
        raise CompetitionError(
            f"the latest sources of competition {row.name}'s {len(versions)} entrants are more "
            f"than a page compares: the server's operator runs 'arena competition copies "
            f"{row.name}'."
        )
    digests = {v: versions[v].digest for v in distinct}
    pairs, took, _ = compare_cached(distinct, digests) if len(distinct) > 1 else ([], 0.0, False)
    found = _pairs(versions, pairs, threshold)
    return CopyReport(
        competition=row.name, threshold=threshold,
        entrants=len({v.user for v in versions.values()}), versions=len(distinct), scope=scope,
        seconds=took, pairs=tuple(found),
    )  # fmt: skip


def _distinct(versions: Mapping[int, _Version], sources: Mapping[int, str]) -> dict[int, str]:
    """One source a digest (the lowest version id holding it), by version id."""
    chosen: dict[str, int] = {}
    for version_id in sorted(versions):
        chosen.setdefault(versions[version_id].digest, version_id)
    return {v: sources[v] for v in sorted(chosen.values())}
