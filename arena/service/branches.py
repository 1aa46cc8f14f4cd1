"""What-if branches from the web, played on a worker: "from this turn of a stored game, let
other bots play the rest of the round" (docs/web.md, "Branches"; docs/records.md,
"Branches").

The web process only checks and stores the request (:func:`create_branch`): the game, the
point (round and turn, with :mod:`arena.engine.branch`, which verifies the record up to
it), one bot version per seat that the account may choose (its own, the reference bots,
bots whose source is public; admins any), the repetitions (1 to :data:`MAX_TIMES`) and a
cap of :data:`MAX_WAITING` branches waiting per account. A worker then plays it
(:func:`run_branch`): the stored record, unredacted, taken up by the bots' sources in the
sandbox exactly as a match seats them (:func:`arena.service.matches.bot_files`, the
tournament's time a move and memory), through :func:`arena.match.branch.play_branches`;
the branch records are stored with it. A bot's fault is part of a repetition's result;
only the harness failing fails the branch (with the reason). Nothing here imports Celery:
the task in ``workers/tasks.py`` calls :func:`run_branch`, and the sweep sends again the
tasks of branches whose task was lost (:func:`unsent_branches`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from arena.engine.branch import branch_game, round_plays
from arena.engine.game import new_seed
from arena.errors import ArenaError, ParseError, RulesError
from arena.match.branch import play_branches
from arena.match.lineup import make_players
from arena.match.sandbox import Limits
from arena.service.accounts import Account
from arena.service.board_views import REFERENCE_OWNER
from arena.service.dispatch import dispatch_branch
from arena.service.games import game_record
from arena.service.matches import Config, MatchSettings, bot_files, keep_alive
from arena.service.permissions import OPERATOR, Actor, allowed, require
from arena.store.branches import (
    add_branch,
    branch_inputs,
    branch_status,
    branch_with_requester,
    claim_branch,
    due_branches,
    finish_branch,
    mark_branches_sent,
    put_branch_back,
    renew_branch,
    seatable_versions,
    versions_by_id,
)
from arena.store.db import Store, as_utc

__all__ = [
    "MAX_TIMES",
    "MAX_WAITING",
    "BotChoice",
    "BranchError",
    "BranchView",
    "Repetition",
    "SideSummary",
    "bot_choices",
    "branch_point",
    "branch_view",
    "check_point",
    "create_branch",
    "mark_branches_sent",
    "renew_branch",
    "run_branch",
    "start_branch",
    "start_step",
    "unsent_branches",
]

#: Repetitions of one branch asked from the web, at most.
MAX_TIMES = 20
#: Branches of one account waiting for the workers (pending or running), at most.
MAX_WAITING = 3
#: A running branch is taken up again by another worker this long after the task's time
#: limit has passed (its worker died: the limit would have stopped it by then).
STALE_MARGIN_SECONDS = 60.0


class BranchError(ArenaError):
    """A branch cannot be made as asked (the message says why, in a sentence)."""


# --- the bots an account may seat ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BotChoice:
    """A bot version an account may seat in a branch.

    Attributes:
        kind: ``yours``, ``reference``, ``public`` (its source is public), or ``other``
            (any other bot: for admins only).
    """

    version_id: int
    owner: str
    name: str
    version: int
    kind: str

    @property
    def label(self) -> str:
        """``owner/name@vN``."""
        return f"{self.owner}/{self.name}@v{self.version}"


_KINDS = ("yours", "reference", "public", "other")


def _kind(account: Account, owner_id: int, owner: str, public: bool) -> str:
    if owner_id == account.id:
        return "yours"
    if owner == REFERENCE_OWNER:
        return "reference"
    return "public" if public else "other"


def _may_seat(account: Account, kind: str) -> bool:
    return kind != "other" or allowed(account, "seat-any-bot")


def bot_choices(store: Store, account: Account) -> list[BotChoice]:
    """Every bot version ``account`` may seat in a branch: its own bots' versions, the
    reference bots', those of bots whose source is public (every bot's, for an admin);
    grouped by kind (yours, reference, public, other), then by owner and name, the newest
    version first."""
    rows = seatable_versions(
        store,
        account_id=None if account.has_role("admin") else account.id,
        reference_owner=REFERENCE_OWNER,
    )
    choices = [
        BotChoice(
            v.version_id, v.owner, v.name, v.version, _kind(account, v.owner_id, v.owner, v.public)
        )
        for v in rows
    ]
    return sorted(choices, key=lambda c: (_KINDS.index(c.kind), c.owner, c.name, -c.version))


# --- where a branch starts ------------------------------------------------------------------


def _round_events(record: Mapping[str, Any], round_number: int) -> list[Any]:
    """The events of round ``round_number`` of ``record``.

    Raises:
        BranchError: the record has no such round.
    """
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not 1 <= round_number <= len(rounds):
        count = len(rounds) if isinstance(rounds, list) else 0
        raise BranchError(f"round {round_number} is out of range: the game has rounds 1 to {count}")
    events = rounds[round_number - 1].get("events")
    return events if isinstance(events, list) else []


def branch_point(record: Mapping[str, Any], round_number: int, step: int) -> tuple[int, int]:
    """The branch point of the viewer's state ``step`` of round ``round_number``: the turn
    (the round's plays made by then) and the step the branch takes up from (after the
    ``turn``-th play and the draws and passes the rules made after it, which a branch
    keeps).

    Raises:
        BranchError: no such round, or ``step`` out of its range.
    """
    events = _round_events(record, round_number)
    if not 0 <= step <= len(events):
        raise BranchError(
            f"step {step} is out of range: round {round_number} has steps 0 to {len(events)}"
        )
    plays = [k for k, event in enumerate(events) if event.get("type") == "play"]
    turn = sum(1 for k in plays if k < step)
    return turn, plays[turn] if turn < len(plays) else len(events)


def start_step(record: Mapping[str, Any], round_number: int, turn: int) -> int:
    """The step of round ``round_number`` a branch after ``turn`` plays takes up from: its
    ``turn``-th play and the draws and passes after it are kept (the round's last step when
    ``turn`` is all of its plays).

    Raises:
        BranchError: no such round, or ``turn`` out of its range.
    """
    events = _round_events(record, round_number)
    plays = [k for k, event in enumerate(events) if event.get("type") == "play"]
    if not 0 <= turn <= len(plays):
        raise BranchError(
            f"turn {turn} is out of range: round {round_number} has turns 0 to {len(plays)}"
        )
    return plays[turn] if turn < len(plays) else len(events)


def check_point(record: Mapping[str, Any], round_number: int, turn: int) -> int:
    """Check that the record can branch at round ``round_number`` after ``turn`` plays;
    return its number of seats.

    Raises:
        BranchError: no such round or turn, the record does not verify up to there, the
            game is over there, or the round is (a branch plays on in its round only).
    """
    try:
        plays = round_plays(record, round_number)
        start = branch_game(record, round_number, turn)
    except (RulesError, ParseError) as exc:
        raise BranchError(str(exc)) from None
    if turn == plays and record["rounds"][round_number - 1].get("result") is not None:
        raise BranchError(
            f"round {round_number} is over after its {plays} plays: "
            f"choose a turn from 0 to {plays - 1}"
        )
    return start.players


# --- creating ---------------------------------------------------------------------------------


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def create_branch(
    store: Store,
    account: Account,
    match_id: int,
    index: int,
    round_number: int,
    turn: int,
    seats: Sequence[int],
    times: int,
    *,
    seed: int | None = None,
) -> int:
    """Store a branch of game ``index`` of match ``match_id`` at round ``round_number``
    after ``turn`` of its plays, with the bot version ``seats[seat]`` at each seat, played
    ``times`` times (bots seeded from ``seed``, a fresh one by default); return its id. It
    is ``pending``: send it to a worker.

    Raises:
        BranchError: one sentence on what is wrong: no such game; the point out of range,
            the record not verifying up to it, the game or the round over there; not one bot
            per seat; a bot the account may not choose (not its own, not a reference bot,
            its source not public; admins may choose any) or not stored; ``times`` out of
            1 to :data:`MAX_TIMES`; :data:`MAX_WAITING` branches of the account already
            waiting.
    """
    if not _whole(times) or not 1 <= times <= MAX_TIMES:
        raise BranchError(f"the repetitions must be 1 to {MAX_TIMES}, not {times!r}")
    found = game_record(store, match_id, index, account)
    if found is None:
        raise BranchError(f"no stored game {index} of match {match_id}")
    players = check_point(found.record, round_number, turn)
    if len(seats) != players or not all(_whole(v) for v in seats):
        raise BranchError(
            f"choose one bot for each of the game's {players} seats, not {len(seats)}"
        )
    bots = versions_by_id(store, seats)
    for seat, version_id in enumerate(seats):
        bot = bots.get(version_id)
        if bot is None:
            raise BranchError(f"seat {seat}: no bot version {version_id} is stored")
        if not _may_seat(account, _kind(account, bot.owner_id, bot.owner, bot.public)):
            raise BranchError(
                f"seat {seat}: you may not choose {bot.label}: choose one of your bots, "
                "a reference bot, or a bot whose source is public"
            )
    added = add_branch(
        store,
        account_id=account.id,
        max_waiting=MAX_WAITING,
        match_id=match_id,
        game_index=index,
        round_number=round_number,
        turn=turn,
        seats=seats,
        times=times,
        seed=new_seed() if seed is None else seed,
    )
    if added.branch_id is None:
        raise BranchError(
            f"you have {added.waiting} branches waiting for the workers (at most {MAX_WAITING}): "
            "wait until one is done"
        )
    return added.branch_id


def start_branch(
    store: Store,
    actor: Actor,
    match_id: int,
    index: int,
    round_number: int,
    turn: int,
    seats: Sequence[int],
    times: int,
) -> int:
    """Store the branch ``actor`` asks for (as :func:`create_branch`) and send it to the
    workers (if the broker is down, the sweep sends it); return its id.

    Raises:
        PermissionDenied: ``actor`` may not start branches (anonymous).
        BranchError: as :func:`create_branch`.
    """
    require(actor, "start-branch", message="log in to start a branch")
    if not isinstance(actor, Account):
        raise BranchError("a branch is an account's: the operator has none")
    branch_id = create_branch(store, actor, match_id, index, round_number, turn, seats, times)
    dispatch_branch(store, branch_id)
    return branch_id


# --- playing (the worker) ------------------------------------------------------------------


def run_branch(
    store: Store,
    branch_id: int,
    *,
    config: Config | None = None,
    first_slot: int | None = None,
    sandboxed: bool = True,
) -> str:
    """Play branch ``branch_id`` and store its records; return its status afterwards:
    ``done``, ``failed`` (the harness failed: the message says how), or, when there was
    nothing to do, the status it had (``running``: another worker holds it; ``done``,
    ``failed``) or ``missing``.

    Bots run in the sandbox (``sandboxed``; slots ``first_slot + seat``, by default this
    process's block), under the game's tournament's time a move and memory. A bot's fault
    ends its repetition with a verdict, as in any game; it does not fail the branch.

    Raises:
        BaseException (a shutdown, an interrupt): the branch is put back to pending for
            the sweep to send again, and the exception goes on.
    """
    config = config or Config()
    now = datetime.now(UTC)
    stale = now - timedelta(seconds=config.match_time_limit + STALE_MARGIN_SECONDS)
    if not claim_branch(store, branch_id, stale, now, config.lease_seconds):
        return branch_status(store, branch_id) or "missing"

    def renew() -> bool:
        return renew_branch(store, branch_id, lease_seconds=config.lease_seconds)

    try:
        with keep_alive(renew, config.heartbeat_seconds, f"branch-{branch_id}"):
            records = _play(store, branch_id, config, first_slot, sandboxed)
    except Exception as exc:
        finish_branch(store, branch_id, "failed", message=f"The harness failed: {_reason(exc)}")
        return "failed"
    except BaseException:
        put_branch_back(store, branch_id)
        raise
    finish_branch(store, branch_id, "done", records=records)
    return "done"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, ArenaError) else f"{type(exc).__name__}: {text}"


def _play(
    store: Store, branch_id: int, config: Config, first_slot: int | None, sandboxed: bool
) -> list[dict[str, Any]]:
    inputs = branch_inputs(store, branch_id)
    assert inputs is not None
    row, record, stored = inputs.branch, inputs.record, inputs.settings
    seats = [int(v) for v in row.seats]
    labels = {vid: v.label for vid, v in versions_by_id(store, seats).items()}
    if record is None:
        raise BranchError(f"game {row.game_index} of match {row.match_id} has no stored record")
    files = bot_files(store, seats, config.bot_cache)
    settings = MatchSettings.from_json(stored)
    players = make_players(
        [str(files[v]) for v in seats],
        sandboxed=sandboxed,
        limits=Limits(memory_mb=settings.memory_mb),
        first_slot=first_slot,
    )
    played = play_branches(
        record,
        row.round_number,
        row.turn,
        players,
        times=row.times,
        seed=row.seed,
        names=[labels.get(v, f"version {v}") for v in seats],
        source=f"match {row.match_id} game {row.game_index}",
        time_control=settings.time_control(),
    )
    return [branch.record for branch in sorted(played, key=lambda branch: branch.index)]


# --- lost tasks -----------------------------------------------------------------------------


def unsent_branches(
    store: Store, *, older_than: float, stale_seconds: float, now: datetime | None = None
) -> list[int]:
    """Branches whose task is due again: pending and never sent, or sent more than
    ``older_than`` seconds ago (the task was lost); running with their worker gone (the
    lease ran out; for a branch from before leases, running for longer than
    ``stale_seconds``). A branch whose lease holds is never listed: one still running is
    never sent a second time."""
    now = datetime.now(UTC) if now is None else now
    sent_before = now - timedelta(seconds=older_than)
    started_before = now - timedelta(seconds=stale_seconds)
    return due_branches(store, sent_before=sent_before, started_before=started_before, now=now)


# --- the page -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Repetition:
    """How round R ended in one repetition (or in the original game).

    Attributes:
        text: in a few words (``seat 1 (alice/greedy@v1) won by domino``).
        winner: the side (seat, or team) that won the round; None: drawn, or cut short.
        points: each side's points in the round; None when a forfeit cut it short.
        forfeit: the seat that forfeited, or None.
        ended_game: the game's winners when the round ended the game, else None.
    """

    index: int
    seed: int | None
    text: str
    winner: int | None
    points: tuple[int, ...] | None
    forfeit: int | None
    ended_game: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class SideSummary:
    """A side over a branch's repetitions: rounds won, mean points, forfeits."""

    label: str
    wins: int
    share: float
    mean_points: float
    forfeits: int


@dataclass(frozen=True, slots=True)
class BranchView:
    """A branch as its page shows it.

    Attributes:
        seats: the bots that played on (``owner/name@vN``), one per seat.
        original_seats: the game's own (``owner/name@vN``).
        start_step: the step of round ``round`` the branch takes up from.
        original: how the original game's round ended.
        repetitions, summary, records: once done (else empty).
    """

    id: int
    match_id: int
    index: int
    round: int
    turn: int
    start_step: int
    seats: tuple[str, ...]
    versions: tuple[int, ...]
    original_seats: tuple[str, ...]
    tournament: str
    rules: str
    teams: bool
    times: int
    seed: int
    requested_by: int
    requester: str
    status: str
    message: str | None
    created: datetime
    started: datetime | None
    finished: datetime | None
    original: Repetition
    repetitions: tuple[Repetition, ...]
    summary: tuple[SideSummary, ...]
    records: tuple[dict[str, Any], ...]

    @property
    def waiting(self) -> bool:
        """Whether it still waits for a worker (pending or running)."""
        return self.status in ("pending", "running")


def _side(side: int | None, names: Sequence[str], teams: bool) -> str:
    if side is None:
        return "nobody"
    if teams:
        return f"team {'AB'[side]} ({names[side]} + {names[side + 2]})"
    return f"seat {side} ({names[side]})"


def _outcome(
    record: Mapping[str, Any], round_number: int, names: Sequence[str], teams: bool, index: int
) -> Repetition:
    rounds = record.get("rounds") or []
    data = rounds[round_number - 1] if len(rounds) >= round_number else {}
    result = data.get("result")
    game = record.get("result") if isinstance(record.get("result"), dict) else None
    verdict = game.get("verdict") if game is not None else None
    last = len(rounds) == round_number
    branch = record.get("branch") if isinstance(record.get("branch"), dict) else None
    seed = branch.get("seed") if branch is not None else None
    if not isinstance(result, dict):
        if last and isinstance(verdict, dict):
            seat = verdict.get("seat")
            name = names[seat] if isinstance(seat, int) and seat < len(names) else "?"
            kind = str(verdict.get("termination")).replace("_", " ")
            text = f"seat {seat} ({name}) forfeited: {kind}"
            return Repetition(index, seed, text, None, None, seat, None)
        return Repetition(index, seed, "unfinished", None, None, None, None)
    winner = result.get("winner")
    side = _side(winner, names, teams)
    termination = result.get("termination")
    if termination == "blocked":
        text = "blocked, drawn" if winner is None else f"blocked, {side} won"
    elif termination == "target":
        text = f"{side} reached the target"
    else:
        text = f"{side} won by domino"
    ended = None
    if last and game is not None and verdict is None:
        ended = tuple(int(s) for s in game.get("winners") or [])
    points = tuple(int(p) for p in result.get("points") or [])
    return Repetition(index, seed, text, winner, points, None, ended)


def _summary(
    repetitions: Sequence[Repetition], names: Sequence[str], teams: bool
) -> tuple[SideSummary, ...]:
    sides = 2 if teams else len(names)
    count = len(repetitions) or 1
    rows = []
    for side in range(sides):
        seats = [side, side + 2] if teams else [side]
        label = (
            f"team {'AB'[side]} (seats {side}+{side + 2})"
            if teams
            else f"seat {side} ({names[side]})"
        )
        wins = sum(1 for r in repetitions if r.winner == side)
        points = sum(r.points[side] for r in repetitions if r.points and side < len(r.points))
        forfeits = sum(1 for r in repetitions if r.forfeit in seats)
        rows.append(SideSummary(label, wins, wins / count, points / count, forfeits))
    return tuple(rows)


def branch_view(store: Store, branch_id: int) -> BranchView | None:
    """The branch for its page, or None (no such branch, or its game is gone)."""
    found = branch_with_requester(store, branch_id)
    if found is None:
        return None
    row, requester = found
    versions = tuple(int(v) for v in row.seats)
    labels = {vid: v.label for vid, v in versions_by_id(store, versions).items()}
    game = game_record(store, row.match_id, row.game_index, OPERATOR)  # its requester's
    if game is None:
        return None
    seats = tuple(labels.get(v, f"version {v}") for v in versions)
    teams = game.row.teams
    try:
        start = start_step(game.record, row.round_number, row.turn)
    except BranchError:  # checked when it was made: the record cannot have changed
        start = 0
    original = _outcome(game.record, row.round_number, game.row.seats, teams, -1)
    records = tuple(row.records or []) if row.status == "done" else ()
    repetitions = tuple(
        _outcome(record, row.round_number, seats, teams, k) for k, record in enumerate(records)
    )
    return BranchView(
        id=row.id,
        match_id=row.match_id,
        index=row.game_index,
        round=row.round_number,
        turn=row.turn,
        start_step=start,
        seats=seats,
        versions=versions,
        original_seats=game.row.seats,
        tournament=game.row.tournament,
        rules=game.row.rules,
        teams=teams,
        times=row.times,
        seed=int(row.seed),
        requested_by=row.requested_by,
        requester=requester,
        status=row.status,
        message=row.message,
        created=as_utc(row.created),
        started=None if row.started is None else as_utc(row.started),
        finished=None if row.finished is None else as_utc(row.finished),
        original=original,
        repetitions=repetitions,
        summary=_summary(repetitions, seats, teams) if repetitions else (),
        records=records,
    )
