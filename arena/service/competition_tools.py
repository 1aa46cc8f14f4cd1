"""The organiser's tools for a competition (docs/competitions.md, "The organiser's tools"),
beside the controls of arena.service.competitions; each is one function the page, the API
and ``arena competition`` share, checking its own permission:

- :func:`organiser_row`: the competition, for its organiser only (``manage-competition``);
  the copies across entrants are arena.service.competition_copies'.
- :func:`competition_games`: every game record of the competition (its ladder and its
  final) as JSON lines, streamed; anyone (faults' messages for admins only, games of bots
  hidden from the reader left out); :func:`competition_games_note` says what retention
  pruned (arena.service.retention).
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
    MAX_DESCRIPTION,
    CompetitionError,
    check_in_bounds,
    check_not_too_far,
    find_competition,
    local_time,
    new_deadline_in_utc,
)
from arena.service.games import redact_record
from arena.service.permissions import Actor, Operator, Target, actor_id, allowed, require
from arena.service.privacy import hidden_from
from arena.service.results import tournament_records
from arena.service.retention import pruned_note
from arena.service.shapes import HIDDEN, about
from arena.store import competition_tools as stored
from arena.store.accounts import user_id_named
from arena.store.competitions import CompetitionRow, entries_of, entry_rows
from arena.store.db import Store

__all__ = [
    "MAX_ANNOUNCEMENT",
    "ActionView",
    "AnnouncementView",
    "Change",
    "CompetitionExtras",
    "SettingsChange",
    "action_log",
    "announcements",
    "competition_extras",
    "competition_games",
    "competition_games_note",
    "edit_settings",
    "organiser_row",
    "pause_ladder",
    "post_announcement",
    "resume_ladder",
    "withdraw",
]

logger = logging.getLogger(__name__)

#: The longest announcement, in characters.
MAX_ANNOUNCEMENT = 2000


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


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else now.astimezone(UTC)


def _who(actor: Actor) -> stored.Who:
    return stored.Who(actor_id(actor), "anonymous" if actor is None else actor.name)


def organiser_row(store: Store, actor: Actor, name: str) -> CompetitionRow:
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
    row = organiser_row(store, actor, name)
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
    row = organiser_row(store, actor, name)
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
    deadline = new_deadline_in_utc(deadline)
    shown = local_time(deadline, row.time_zone)
    if deadline <= now:
        raise CompetitionError(f"the new deadline ({shown}) has passed already.")
    if deadline <= row.opens:
        raise CompetitionError(
            f"the new deadline ({shown}) must come after the opening "
            f"({local_time(row.opens, row.time_zone)})."
        )
    check_not_too_far(deadline, now)
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
    row = organiser_row(store, actor, name)
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
    row = organiser_row(store, actor, name)
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


def competition_games_note(store: Store, name: str) -> str | None:
    """What :func:`competition_games` leaves out of competition ``name`` for retention, as
    a sentence (the games of the ladder whose records were pruned), or None.

    Raises:
        NotFound: no such competition.
    """
    row = find_competition(store, name)
    tournaments = [row.ladder_id] + ([row.final_id] if row.final_id is not None else [])
    return pruned_note(store, tournaments)


def _lines(store: Store, tournaments: list[int], hidden: set[str], whole: bool) -> Iterator[str]:
    for tournament_id in tournaments:
        for record in tournament_records(store, tournament_id):
            if hidden and hidden & {str(seat) for seat in record.get("seats") or ()}:
                continue
            shown = record if whole else redact_record(record)
            yield json.dumps(shown, separators=(",", ":")) + "\n"
