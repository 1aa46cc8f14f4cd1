"""Regression tests on the workers: "is NEW stronger than OLD?" as a stored tournament.

A compare is a tournament of format ``compare``: NEW against ``players - 1`` copies of OLD
on duplicate deals (each deal played once per seat rotation), scheduled in batches of deal
groups, under a sequential test whose parameters are stored with it (``settings["sprt"]``):
the margin test (:class:`arena.compete.sprt.MarginSPRT`, each deal group's point margin
less its luck of the draw, the default) or the game-level test
(:class:`arena.compete.sprt.SPRT`, its game results), as ``statistic`` says. Whoever
starts it (``arena compare --remote``, the web page, the API) sends its matches to the
workers through :func:`advance_compare`, one step of the loop both share: it voids the
matches not yet started once the test has decided or the game limit is reached, else sends
the batches not sent yet (the web all at once; ``arena compare --remote``, following the
compare in :func:`follow_compare`, :data:`COMPARE_AHEAD` batches ahead of those finished,
sweeping meanwhile; it stops, :attr:`CompareStep.stopped`, once the compare is cancelled from
elsewhere or its tournament ends with deal groups incomplete). After each match a worker
calls :func:`stop_if_decided`, which voids the matches not yet started once the test has
decided.
:func:`compare_state` reads where a compare stands (the pages' view of it, and an
account's request checked and started, are :mod:`arena.service.compare_views`: apart, so
that ``arena compare --remote`` loads none of the pages' reads).

In team play (``teams``) NEW and OLD each partner a copy of themselves (seats 0+2 v 1+3),
and a deal group is two games, the teams' seats swapped.

A compare never measures a bot against itself unless asked to (``allow_same_source``):
:func:`create_compare` refuses NEW and OLD whose sources hash the same, and keeps both
hashes with the test; every match keeps what each of its seats ran (the SHA-256 of the bot
file its worker read, ``result["sources"]``), and :func:`check_seats` checks those against
the test's before any game counts (:class:`~arena.errors.VerdictError`: the verdict is
``refused``, the matches not started are void). docs/ratings.md, "One source on both sides".
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from arena.compete.compares import (
    batch_seed,
    check_seats,
    compare_entrants,
    compare_schedule,
    deal_groups,
    group_of,
    group_size,
    new_game,
    same_source_refusal,
)
from arena.compete.localrun import MatchResult
from arena.compete.margins import GroupMargin
from arena.compete.names import parse_reference
from arena.compete.sprt import (
    STATISTICS,
    MarginScores,
    Reading,
    RegressionTest,
    Statistic,
    make_test,
    read_test,
    statistic_of,
)
from arena.engine.rules import Rules, find_rules
from arena.errors import NotFound, ParseError, VerdictError
from arena.service import broker
from arena.service.compare_start import (
    REFUSED,
    REPLIES_SENT_SECONDS,
    START_MAX_AGE_SECONDS,
    CompareRequest,
    compare_name,
)
from arena.service.dispatch import BROKER_ERRORS, dispatch_match_ids, sweep_matches
from arena.service.matches import (
    Config,
    MatchSettings,
    create_stored_tournament,
    list_workers,
    resolve_entrants,
)
from arena.service.results import load_results
from arena.store.compares import (
    compare_load,
    finished_among,
    follow_until,
    followed_until,
    forget_follower,
    keep_reading,
    kept_reading,
    match_ids,
    source_hashes,
    tournament_of_match,
    tournament_settings,
    unfollowed_compares,
    void_reason,
)
from arena.store.db import Store, as_utc
from arena.store.matches import tournament_named
from arena.store.models import Tournament
from arena.store.queue import (
    cancel_tournament,
    unqueued_matches,
    void_pending,
)
from arena.store.tournaments import get_tournament, match_keys

__all__ = [
    "CANCELLED",
    "COMPARE_AHEAD",
    "COMPARE_FORMAT",
    "FOLLOW_LEASE_SECONDS",
    "FOLLOW_POLL_SECONDS",
    "KEPT_READING_SECONDS",
    "LIMIT",
    "MAX_COMPARES_AT_ONCE",
    "MAX_QUEUED_COMPARE_MATCHES",
    "REFUSED",
    "CompareState",
    "CompareStep",
    "CompareTest",
    "ResultsRead",
    "advance_compare",
    "batch_seed",
    "check_seats",
    "compare_entrants",
    "compare_schedule",
    "compare_state",
    "create_compare",
    "deal_groups",
    "follow_compare",
    "group_of",
    "group_size",
    "is_current",
    "is_decided",
    "kept_state",
    "new_game",
    "open_compare",
    "same_source_refusal",
    "start_requested_compare",
    "stop_compare",
    "stop_if_decided",
    "stop_reason",
    "stop_unfollowed",
    "tally",
    "verdict_of",
]

logger = logging.getLogger(__name__)

#: The stored tournaments' format.
COMPARE_FORMAT = "compare"
#: A kept reading's status once the game limit is reached before the test decided.
LIMIT = "limit"
#: The verdict of a compare that ended before its test decided or its game limit was reached:
#: its tournament cancelled, or its matches void with deal groups incomplete
#: (:func:`stop_reason` says why).
CANCELLED = "cancelled"
#: Compares an account may have unfinished at once (the operator's and a class's gauntlets
#: are not counted: they have no owner).
MAX_COMPARES_AT_ONCE = 4
#: Matches of an account's unfinished compares not yet played, at most (a compare of
#: 20,000 games in batches of one deal group is 10,000 matches).
MAX_QUEUED_COMPARE_MATCHES = 10_000
#: Batches of deal groups ``arena compare --remote`` keeps sent ahead of those finished, so
#: the workers never run dry (the web sends every batch at once).
COMPARE_AHEAD = 4
#: How often ``arena compare --remote`` (:func:`follow_compare`) reads whether a batch of its
#: compare has finished: the verdict is shown within this of the match that decides it.
FOLLOW_POLL_SECONDS = 0.02
#: How long :func:`follow_compare` waits, at a step, for the state the workers keep after
#: each match (:func:`stop_if_decided`) to cover every done match, before it reads the
#: test itself (which loads scipy: a third of a second of ``arena compare --remote``'s
#: CPU, spent while the workers play on the same machine).
KEPT_READING_SECONDS = 1.0
#: How long a compare sent a few batches at a time (``arena compare --remote``'s) is held
#: for its follower: from when a worker stores it for its start, then from when the command
#: follows it and at each of its sweeps (every ``sweep_seconds``, 15 s by default):
#: once it runs out (the command was killed, or died before it opened the compare a worker
#: stored for its start), the workers' sweep stops the compare (:func:`stop_unfollowed`),
#: whose matches not sent would otherwise stay pending for ever.
FOLLOW_LEASE_SECONDS = 90.0


@dataclass(frozen=True, slots=True)
class CompareTest:
    """What a compare tests, as stored in its tournament's ``settings["sprt"]``."""

    new: str
    old: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    max_games: int
    batch: int
    statistic: Statistic = "margin"
    #: The SHA-256 of NEW's and OLD's sources (None: stored before they were kept), what
    #: the verdict checks every match's seats against (:func:`check_seats`).
    new_source: str | None = None
    old_source: str | None = None
    #: NEW and OLD may have the same source (asked for: ``--allow-same-source``).
    allow_same_source: bool = False

    @property
    def sources(self) -> tuple[str, str] | None:
        """NEW's and OLD's source hashes, or None (stored before they were kept)."""
        if self.new_source is None or self.old_source is None:
            return None
        return self.new_source, self.old_source

    @property
    def sprt(self) -> RegressionTest:
        """The sequential test."""
        return make_test(self.statistic, self.elo0, self.elo1, self.alpha, self.beta)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> CompareTest | None:
        """The test stored in a tournament's settings, or None (not a compare, or one
        stored before the test was kept with it). One stored before the statistic was kept
        with it ran the game-level test."""
        data = (settings or {}).get("sprt")
        if not isinstance(data, dict):
            return None
        statistic = data.get("statistic", "game")
        if statistic not in STATISTICS:
            return None
        try:
            return cls(
                new=str(data["new"]), old=str(data["old"]), elo0=float(data["elo0"]),
                elo1=float(data["elo1"]), alpha=float(data["alpha"]),
                beta=float(data["beta"]), max_games=int(data["max_games"]),
                batch=int(data["batch"]), statistic=statistic,
                new_source=_text_or_none(data.get("new_source")),
                old_source=_text_or_none(data.get("old_source")),
                allow_same_source=data.get("allow_same_source") is True,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def create_compare(
    store: Store,
    *,
    new: str,
    old: str,
    rules: Rules,
    players: int,
    test: RegressionTest,
    max_games: int,
    batch: int,
    seed: int,
    teams: bool = False,
    settings: MatchSettings | None = None,
    owner_id: int | None = None,
    now: datetime | None = None,
    allow_same_source: bool = False,
    name: str | None = None,
    token: str | None = None,
) -> tuple[int, str]:
    """Store a compare of the stored bots ``new`` and ``old`` (``[OWNER/]NAME[@VERSION]``)
    with its pending matches; return its tournament id and name (``name``, else derived from
    the bots, the rule set, the seed and the time: :func:`compare_name`; ``token``: kept in
    its settings, ``request``, see :func:`open_compare`). Nothing is sent to the workers.
    Two versions whose sources are the same (one bot uploaded twice, under two names) are refused
    unless ``allow_same_source``: their games measure a bot against itself. Their source
    hashes are stored with the test, for the verdict to check every match's seats
    against (:func:`check_seats`).

    Raises:
        LookupError: a bot is not stored.
        ValueError: fewer games than one deal group, NEW and OLD the same version, or the
            same source not allowed; or as ``create_stored_tournament``.
        RulesError: ``players`` or ``teams`` not allowed by ``rules``.
    """
    rules.check_players(players, teams)
    size = group_size(players, teams)
    if max_games < size:
        raise ValueError(f"{max_games} games is fewer than one deal group ({size} games)")
    name = name or compare_name(new, old, rules.name, seed, now)
    try:
        wanted = [
            dataclasses.replace(parse_reference(spec), label=label)
            for label, spec in (("new", new), ("old", old))
        ]
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    new_entrant, old_entrant = resolve_entrants(store, wanted)
    if new_entrant.version == old_entrant.version:  # its games would cost and test nothing
        raise ValueError(
            f"NEW {new} and OLD {old} are the same version: compare it with another version "
            "or another bot"
        )
    assert new_entrant.version is not None and old_entrant.version is not None
    hashes = source_hashes(store, [new_entrant.version, old_entrant.version])
    new_source, old_source = hashes[new_entrant.version], hashes[old_entrant.version]
    if new_source == old_source and not allow_same_source:
        raise ValueError(same_source_refusal(new, old, new_source))
    stored = CompareTest(
        new, old, test.elo0, test.elo1, test.alpha, test.beta, max_games, batch,
        statistic_of(test), new_source, old_source, allow_same_source,
    )  # fmt: skip
    schedule = compare_schedule(
        rules, players, new=new_entrant, old=old_entrant, max_games=max_games, batch=batch,
        seed=seed, teams=teams,
    )  # fmt: skip
    if owner_id is not None:
        _check_caps(store, owner_id, len(schedule))
    tournament_id, _ = create_stored_tournament(
        store,
        name=name,
        rules=rules,
        format=COMPARE_FORMAT,
        entrants=compare_entrants(new_entrant, old_entrant, size),
        players=players,
        teams=teams,
        games_per_match=batch,
        seed=seed,
        settings=settings,
        extra_settings={"sprt": dataclasses.asdict(stored)}
        | ({} if token is None else {"request": token}),
        matches=schedule,
        owner_id=owner_id,
    )
    if owner_id is not None:
        _recheck_caps(store, owner_id, tournament_id)
    return tournament_id, name


def open_compare(
    store: Store, request: CompareRequest, rules: Rules | None = None
) -> tuple[int, bool]:
    """The compare ``request`` asks for (:mod:`arena.service.compare_start`): stored now,
    or found stored already for it (its name, with the request's token: the worker that
    took the request's start stored it, or the command that sent it did); return its
    tournament id and whether this call stored it. Both the worker and the command call it:
    whichever comes second finds the first's (creating a tournament of a name is serialized:
    :func:`arena.store.queue.create_tournament`).

    ``rules``: the rule set the request names, as its caller has it (the command's, from a
    file or a preset); else the preset of its name (a worker's, which takes presets only).

    Raises:
        LookupError, ValueError, RulesError: as :func:`create_compare` (a tournament of the
            request's name stored for another request is "exists already"); the rule set
            is not the request's version.
    """
    found = _requested(store, request)  # (the worker's, usually: the command loads slower)
    if found is not None:
        return found, False
    statistic = cast(Statistic, request.statistic)  # (make_test refuses another)
    test = make_test(statistic, request.elo0, request.elo1, request.alpha, request.beta)
    rules = find_rules(request.rules) if rules is None else rules
    if rules.version != request.rules_version:  # (a worker of other code than its command's)
        raise ValueError(
            f"rule set {request.rules!r} is version {rules.version} here, not "
            f"{request.rules_version}"
        )
    try:
        tournament_id, _ = create_compare(
            store,
            new=request.new,
            old=request.old,
            rules=rules,
            players=request.players,
            test=test,
            max_games=request.max_games,
            batch=request.batch,
            seed=request.seed,
            teams=request.teams,
            settings=MatchSettings(move_seconds=request.move_seconds, memory_mb=request.memory_mb),
            allow_same_source=request.allow_same_source,
            name=request.name,
            token=request.token,
        )
    except ValueError:  # stored meanwhile (the other one's), or refused
        found = _requested(store, request)
        if found is None:
            raise
        return found, False
    return tournament_id, True


def _hold(store: Store, tournament_id: int, seconds: float = FOLLOW_LEASE_SECONDS) -> None:
    """Hold the compare for its follower for ``seconds`` from now."""
    follow_until(store, tournament_id, datetime.now(UTC) + timedelta(seconds=seconds))


def stop_unfollowed(store: Store, now: datetime | None = None) -> list[int]:
    """Stop each compare whose follower is gone (:data:`FOLLOW_LEASE_SECONDS`): its matches
    not started are void, saying so (the workers' sweep); return their ids."""
    stopped = unfollowed_compares(store, now or datetime.now(UTC))
    for tournament_id in stopped:
        void_pending(store, tournament_id, "its follower (arena compare --remote) is gone")
        forget_follower(store, tournament_id)
    return stopped


def _requested(store: Store, request: CompareRequest) -> int | None:
    """The id of the compare stored for ``request`` (its name, with its token), or None."""
    found = tournament_named(store, request.name)
    if found is None or (found.settings or {}).get("request") != request.token:
        return None
    return found.id


def start_requested_compare(store: Store, payload: Mapping[str, Any], *, now: float) -> str:
    """An ``arena.start_compare`` task (what ``arena compare --remote`` sends before it loads
    the store): store the compare its request asks for and send its first
    :data:`COMPARE_AHEAD` batches, unless its command did first (then it sends them); drop a
    request older than :data:`~arena.service.compare_start.START_MAX_AGE_SECONDS`. Return
    what happened. A request refused (a bot not stored, ...) is only said: its command,
    opening the same compare, is refused with the same sentence.
    """
    try:
        request = CompareRequest.from_payload(payload, now)
    except ValueError as exc:
        return f"refused: {exc}"
    if now - request.asked > START_MAX_AGE_SECONDS:
        return f"compare {request.name!r}: its start is too old, dropped"
    try:
        tournament_id, created = open_compare(store, request)
    except (LookupError, ValueError) as exc:  # (RulesError is a ValueError)
        _reply(request.token, {"kind": "refused"})  # (its command opens it, for the sentence)
        return f"compare {request.name!r} refused: {exc}"
    if not created:
        return f"compare {request.name!r}: stored already, left to its command"
    _hold(store, tournament_id)  # (for its command, which follows it once loaded)
    batches = _batches(store, tournament_id)
    sent = _send_due(store, tournament_id, batches, min(len(batches), COMPARE_AHEAD))
    _reply(request.token, {"kind": "stored"})
    return f"compare {request.name!r}: stored" + ("" if sent else ", its batches not sent")


def _reply(token: str, reply: Mapping[str, Any]) -> None:
    """Tell the command of the compare start ``token`` (:func:`arena.service.broker.send_reply`);
    a broker that cannot be reached is only logged (the command follows the compare in the
    store when no reply comes)."""
    try:
        broker.send_reply(broker.current(), token, reply)
    except BROKER_ERRORS as exc:
        logger.warning("cannot reply to compare start %s: %s", token, exc)


def _replying(tournament: Tournament, now: datetime | None = None) -> str | None:
    """The token of the compare start whose command may follow ``tournament`` by the
    workers' replies still
    (:data:`~arena.service.compare_start.REPLIES_SENT_SECONDS`), or None."""
    token = (tournament.settings or {}).get("request")
    age = (now or datetime.now(UTC)) - as_utc(tournament.created)
    young = age <= timedelta(seconds=REPLIES_SENT_SECONDS)
    return token if isinstance(token, str) and young else None


def _check_caps(store: Store, owner_id: int, matches: int) -> None:
    """Refuse a compare of ``matches`` matches that would take the account past its caps.

    Raises:
        ValueError: the sentence says which cap, where the account stands, and what to do.
    """
    load = compare_load(store, owner_id, COMPARE_FORMAT)
    if load.compares >= MAX_COMPARES_AT_ONCE:
        raise ValueError(
            f"you have {load.compares} compares running, the most an account may have at "
            "once: wait for one to finish, or cancel one, before starting another"
        )
    if load.matches + matches > MAX_QUEUED_COMPARE_MATCHES:
        raise ValueError(
            f"this compare's {matches:,} matches and the {load.matches:,} of your compares "
            f"still waiting would pass the {MAX_QUEUED_COMPARE_MATCHES:,} an account may have "
            "queued: ask for fewer games or larger batches, or wait for your compares to play"
        )


def _recheck_caps(store: Store, owner_id: int, tournament_id: int) -> None:
    """Once the compare is stored (nothing sent yet), count again: requests of one account
    at the same moment each passed :func:`_check_caps` before any was stored; those that
    find the account past a cap now are cancelled (the safe side: all of them, maybe).

    Raises:
        ValueError: the compare was cancelled (the sentence says why).
    """
    load = compare_load(store, owner_id, COMPARE_FORMAT)
    if load.compares > MAX_COMPARES_AT_ONCE or load.matches > MAX_QUEUED_COMPARE_MATCHES:
        cancel_tournament(store, tournament_id, by="the account's compare caps")
        raise ValueError(
            "your compares started at the same moment took you past an account's caps "
            f"({MAX_COMPARES_AT_ONCE} compares running, {MAX_QUEUED_COMPARE_MATCHES:,} "
            "matches queued): this one is cancelled; start it again once the others are in"
        )


@dataclass(frozen=True, slots=True)
class CompareState:
    """Where a compare's test stands over its complete deal groups.

    Attributes:
        samples: each complete deal group's values (the game-level test reads their game
            scores); None in a reading the workers kept (:func:`kept_state`: the test's
            figures only).
        played: the games of those groups.
        reading: the test over them (its ``status``: ``continue``, ``H0 accepted`` or
            ``H1 accepted``).
        finished_batches: batches with every deal group complete.
    """

    samples: MarginScores | None
    played: int
    reading: Reading
    finished_batches: int

    @property
    def status(self) -> str:
        """The test's status."""
        return self.reading.status


def compare_state(
    store: Store,
    tournament_id: int,
    test: RegressionTest,
    players: int,
    teams: bool = False,
    *,
    read: ResultsRead | None = None,
) -> CompareState:
    """The test over the compare's stored results (its done matches: a void one has no
    games), their complete deal groups in the order they were scheduled; every match's
    seats checked against the sources stored with the compare (:func:`check_seats`).
    ``read``: the results read by earlier calls, kept (only matches done since are read).

    Raises:
        VerdictError: a match's seats ran the same source on both sides (not asked for),
            or another source than their entrants'.
    """
    stored = CompareTest.from_settings(tournament_settings(store, tournament_id))
    groups = deal_groups(
        (read or ResultsRead()).results(store, tournament_id),
        sources=None if stored is None else stored.sources,
        allow_same_source=stored is not None and stored.allow_same_source,
    )
    return tally(groups, test, group_size(players, teams))


class ResultsRead:
    """The results of a compare's done matches read so far (a done match never changes):
    each step of :func:`follow_compare` reads only those done since the last."""

    def __init__(self) -> None:
        self.by_id: dict[int, MatchResult] = {}
        #: The compare's batches (:func:`_batches`), once read; and those sent up to
        #: (:func:`_keep_ahead`, a worker's stop checks).
        self.batches: list[list[int]] | None = None
        self.sent_through = 0

    def results(self, store: Store, tournament_id: int) -> list[MatchResult]:
        """Every done match's result, by match id (those not read before read now)."""
        done = match_ids(store, tournament_id, "done")
        new = [match_id for match_id in done if match_id not in self.by_id]
        if new:
            read = load_results(store, tournament_id, only=new)
            self.by_id.update(zip(new, read, strict=True))
        return [self.by_id[match_id] for match_id in done]


def tally(
    groups: Mapping[tuple[str, int], Sequence[GroupMargin]], test: RegressionTest, size: int
) -> CompareState:
    """The test over the complete deal groups (``size`` games) of ``groups``, in key order."""
    complete = sorted(key for key, games in groups.items() if len(games) == size)
    samples = MarginScores(group_of(groups[key]) for key in complete)
    finished = len({key[0] for key in complete})
    return CompareState(samples, size * len(complete), read_test(test, samples), finished)


def verdict_of(status: str, done: bool, stopped: bool = False) -> str:
    """``passed`` (H1), ``failed`` (H0), ``undecided`` (done without a decision),
    :data:`CANCELLED` (done without a decision, ``stopped`` before its game limit), or
    ``running``."""
    if status == "H1 accepted":
        return "passed"
    if status == "H0 accepted":
        return "failed"
    if not done:
        return "running"
    return CANCELLED if stopped else "undecided"


def stop_reason(store: Store, tournament_id: int, cancelled: bool) -> str:
    """Why a compare ended before its test decided, from its last match voided: e.g.
    ``cancelled by alice`` (``cancelled``: its tournament was), or ``matches void (...)``."""
    reason = void_reason(store, tournament_id)
    if not cancelled:
        return f"matches void ({reason or 'no reason kept'})"
    if reason is None or not reason.startswith("cancelled"):
        return f"cancelled ({reason})" if reason else "cancelled"
    return reason


def stop_if_decided(store: Store, match_id: int) -> str | None:
    """After a match of a compare finished: if its test has decided, or its game limit is
    reached, void the matches not started (running ones stop at their bots' next decision
    and are void: :func:`arena.service.matches.run_match` watches the kept reading); return
    the test's status then, or None (not a compare, or it goes on); :data:`REFUSED` (the
    matches not started void too) when its games cannot give a verdict
    (:class:`~arena.errors.VerdictError`). Safe to call any number of times, from any
    worker."""
    tournament = tournament_of_match(store, match_id)
    if tournament is None or tournament.format != COMPARE_FORMAT:
        return None
    stored = CompareTest.from_settings(tournament.settings)
    if stored is None:
        return None
    read = _stop_read(store, tournament.id)
    try:
        state = compare_state(
            store, tournament.id, stored.sprt, tournament.players, tournament.teams, read=read
        )
    except VerdictError as exc:  # nothing more is played for a verdict it cannot give
        keep_reading(store, tournament.id, len(read.by_id), REFUSED, "{}")
        void_pending(store, tournament.id, f"no verdict: {exc}")
        if (token := _replying(tournament)) is not None:  # (its command reads the sentence)
            _reply(token, {"kind": "reading", "done": len(read.by_id), "status": REFUSED})
        return REFUSED
    # over once the test decides, its game limit is reached, or every batch is finished
    # (a limit that is no whole number of deal groups: as the command's loop ends)
    decided = is_decided(state, stored) or state.finished_batches >= len(_read_batches(
        store, tournament.id, read
    ))  # fmt: skip
    status = LIMIT if decided and state.status == "continue" else state.status
    fields = _state_fields(state)
    kept = keep_reading(store, tournament.id, len(read.by_id), status, json.dumps(fields))
    if decided:
        void_pending(store, tournament.id, f"the test ended: {state.status}")
    elif (tournament.settings or {}).get("request") is not None:
        _keep_ahead(store, tournament.id, state, read)
    if kept and (token := _replying(tournament)) is not None:
        reply = {"kind": "reading", "done": len(read.by_id), "status": status}
        _reply(token, reply | {"state": fields})
    return state.status if decided else None


def _keep_ahead(store: Store, tournament_id: int, state: CompareState, read: ResultsRead) -> None:
    """Send the batches of a compare followed by its command (``arena compare --remote``'s:
    a few batches at a time) up to :data:`COMPARE_AHEAD` beyond those finished, as soon as
    a worker has stored the match that finished one: its next look does not wait for the
    command's (which follows by the workers' replies alone at first:
    :func:`arena.service.compare_start.follow_replies`), and the command's sends find
    them sent. Only while it is held for its follower (:data:`FOLLOW_LEASE_SECONDS`): one
    whose command is gone is not played on (the sweep then voids it). Once a process: what
    it sent is kept with its reads."""
    batches = _read_batches(store, tournament_id, read)
    last = min(len(batches), state.finished_batches + COMPARE_AHEAD)
    if last <= read.sent_through:
        return
    until = followed_until(store, tournament_id)
    if until is not None and until > datetime.now(UTC):
        _send_due(store, tournament_id, batches, last)
        read.sent_through = last


def _read_batches(store: Store, tournament_id: int, read: ResultsRead) -> list[list[int]]:
    """The compare's batches (:func:`_batches`), read once a process's reads."""
    if read.batches is None:
        read.batches = _batches(store, tournament_id)
    return read.batches


#: The results the stop checks of this process have read, by database and compare (a done
#: match's never change): a check reads only the matches done since the last, so a worker's
#: check after a compare's thousandth match costs what it did after its first (it read
#: every result again: 0.3 ms of CPU a done match, half a second at 1,250). The newest
#: compares' only.
_STOP_READS: collections.OrderedDict[tuple[str, int], ResultsRead] = collections.OrderedDict()
_STOP_READS_KEPT = 8
_STOP_READS_LOCK = threading.Lock()


def _stop_read(store: Store, tournament_id: int) -> ResultsRead:
    """The results this process's stop checks of the compare have read so far."""
    key = (str(store.engine.url), tournament_id)
    with _STOP_READS_LOCK:
        read = _STOP_READS.pop(key, None) or ResultsRead()
        _STOP_READS[key] = read
        while len(_STOP_READS) > _STOP_READS_KEPT:
            _STOP_READS.popitem(last=False)
    return read


def _state_fields(state: CompareState) -> dict[str, Any]:
    """``state`` as a kept reading's JSON object (its text: :func:`kept_state` reads it
    back; a reply to its command carries it as it is)."""
    return {
        "played": state.played,
        "finished_batches": state.finished_batches,
        "reading": dataclasses.asdict(state.reading),
    }


def kept_state(text: str) -> CompareState:
    """The state a kept reading holds (:func:`_state_fields`; no deal groups: ``samples`` is
    None).

    Raises:
        ValueError: the text is not a kept reading.
    """
    try:
        data = json.loads(text)
        reading = Reading(**data["reading"])
        return CompareState(None, int(data["played"]), reading, int(data["finished_batches"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a kept reading: {exc}") from None


def is_current(kept: tuple[int, str, str], done: int) -> bool:
    """Whether a kept reading (:func:`arena.store.compares.kept_reading`) is where the
    compare stands with ``done`` matches done: it is over them all, or it ended the test
    (which stays, whatever matches finished after it: the verdict every follower shows,
    the command's replies, its loop and the page)."""
    return kept[0] >= done or kept[1] != "continue"


def _await_kept(
    store: Store, tournament_id: int, seconds: float, poll_seconds: float
) -> CompareState | None:
    """The compare's state as the workers kept it over all its done matches, waited for up
    to ``seconds`` (a worker keeps it just after it stores a match: its stop check); None if
    none is current by then (workers of older code, or a verdict the games cannot give:
    the caller reads the test itself)."""
    deadline = time.monotonic() + seconds
    # (read once: a kept reading over as many done matches is as fresh as the test read
    # here now would be; matches done meanwhile are the next step's)
    done = len(match_ids(store, tournament_id, "done"))
    if done == 0:  # (the test over no games: read here, it loads nothing)
        return None
    while True:
        kept = kept_reading(store, tournament_id)
        if kept is not None and is_current(kept, done):
            # (refused: the caller's own read raises the sentence)
            return None if kept[1] == REFUSED else kept_state(kept[2])
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_seconds)


def is_decided(state: CompareState, test: CompareTest) -> bool:
    """Whether the compare is over: its test has decided, or its game limit is reached."""
    return state.status != "continue" or state.played >= test.max_games


@dataclass(frozen=True, slots=True)
class CompareStep:
    """Where a compare on the workers stands after a step of :func:`advance_compare`.

    Attributes:
        state: its test over its complete deal groups.
        decided: the test has decided or the game limit is reached (the matches not
            started are void).
        finished: every batch of deal groups is finished.
        sent: whether the broker took the batches this step sent (if not, they are
            recorded as sent, and the sweep sends them: :mod:`arena.service.dispatch`).
        sweep: after a sweep of :func:`follow_compare`: why it could not reach the broker
            (None: it could, or there was no sweep).
        workers: after a sweep of :func:`follow_compare`: whether a worker is alive (None:
            no sweep).
        stopped: why the compare ended undecided before its game limit (:func:`stop_reason`:
            its tournament cancelled, on the web, the API or by ``arena tournament cancel``,
            or ended with deal groups incomplete, their matches void); None: it did not.
    """

    state: CompareState
    decided: bool
    finished: bool
    sent: bool = True
    sweep: str | None = None
    workers: bool | None = None
    stopped: str | None = None

    @property
    def done(self) -> bool:
        """Whether the compare is over (decided, every batch finished, or stopped)."""
        return self.decided or self.finished or self.stopped is not None


def _compare(store: Store, tournament_id: int) -> tuple[Tournament, CompareTest]:
    tournament = get_tournament(store, tournament_id)
    stored = None if tournament is None else CompareTest.from_settings(tournament.settings)
    if tournament is None or tournament.format != COMPARE_FORMAT or stored is None:
        raise NotFound(f"no compare has the id {tournament_id}")
    return tournament, stored


def _batches(store: Store, tournament_id: int) -> list[list[int]]:
    """The compare's matches by batch of deal groups, in the order they are sent."""
    by_batch: dict[str, list[int]] = {}
    for match_id, key in match_keys(store, tournament_id):
        by_batch.setdefault(key.partition("-")[0], []).append(match_id)
    return [by_batch[batch] for batch in sorted(by_batch)]


def advance_compare(store: Store, tournament_id: int, *, ahead: int | None = None) -> CompareStep:
    """One step of a compare on the workers, the loop the web's :func:`start_compare` and
    ``arena compare --remote`` (:func:`follow_compare`) share: once its test has decided or
    its game limit is reached, void the matches not started (running ones stop, void, once
    a worker's stop check has kept the decided reading; else they finish and are
    stored); else, unless it is cancelled or has ended with deal groups incomplete
    (:attr:`CompareStep.stopped`), send its batches of deal groups not sent yet, in order,
    until ``ahead`` batches are sent beyond those finished (every batch when None). Safe to
    call any number of times, from anywhere.

    Raises:
        NotFound: no compare has that id.
        VerdictError: its games cannot give a verdict (:func:`check_seats`); the matches
            not started are void first.
    """
    step = _advanced(store, tournament_id, ahead)
    if step.decided:
        _void_rest(store, tournament_id, step)
    return step


def _void_rest(store: Store, tournament_id: int, step: CompareStep) -> None:
    """Void the matches of a decided compare not started (running ones stop once a worker
    has kept the decided reading)."""
    void_pending(store, tournament_id, f"the test ended: {step.state.status}")


def _advanced(
    store: Store,
    tournament_id: int,
    ahead: int | None,
    read: ResultsRead | None = None,
    batches: list[list[int]] | None = None,
    kept_seconds: float | None = None,
    poll_seconds: float = FOLLOW_POLL_SECONDS,
) -> CompareStep:
    """:func:`advance_compare` but for the matches a decided compare leaves: the caller
    voids them (:func:`_void_rest`). ``read``, ``batches``: the results read and the
    batches found by earlier steps (a follower keeps them). ``kept_seconds``: the state the
    workers kept, waited for up to this long, before the test is read here."""
    tournament, stored = _compare(store, tournament_id)
    state = None
    if kept_seconds is not None:
        state = _await_kept(store, tournament_id, kept_seconds, poll_seconds)
    try:
        if state is None:
            state = compare_state(
                store, tournament_id, stored.sprt, tournament.players, tournament.teams, read=read
            )
    except VerdictError as exc:  # nothing more is played for a verdict it cannot give
        void_pending(store, tournament_id, f"no verdict: {exc}")
        raise
    batches = _batches(store, tournament_id) if batches is None else batches
    finished = state.finished_batches >= len(batches)
    if is_decided(state, stored):
        return CompareStep(state, decided=True, finished=finished)
    # (the tournament was read before the results: if it had ended, they are all in)
    if tournament.status == "cancelled" or (tournament.status == "done" and not finished):
        stopped = stop_reason(store, tournament_id, tournament.status == "cancelled")
        return CompareStep(state, decided=False, finished=finished, stopped=stopped)
    last = len(batches) if ahead is None else min(len(batches), state.finished_batches + ahead)
    sent = _send_due(store, tournament_id, batches, last)
    return CompareStep(state, decided=False, finished=finished, sent=sent)


def _send_due(store: Store, tournament_id: int, batches: list[list[int]], last: int) -> bool:
    """Send the compare's batches not sent yet, in order, up to batch ``last`` (not
    included); return whether the broker took them (:func:`dispatch_match_ids`: if not,
    they are recorded as sent, and the sweep sends them)."""
    never_sent = set(unqueued_matches(store, tournament_id=tournament_id))
    first = sum(1 for ids in batches if not never_sent.issuperset(ids))  # sent in order
    due = [match_id for ids in batches[first:last] for match_id in ids]
    return dispatch_match_ids(store, due) if due else True


def follow_compare(
    store: Store,
    tournament_id: int,
    *,
    config: Config,
    ahead: int = COMPARE_AHEAD,
    poll_seconds: float = FOLLOW_POLL_SECONDS,
    kept_seconds: float = KEPT_READING_SECONDS,
) -> Iterator[CompareStep]:
    """``arena compare --remote``'s loop: step the compare (:func:`advance_compare`,
    ``ahead`` batches ahead) whenever a match of it has finished, until it is over (decided,
    every batch finished, or stopped: cancelled from elsewhere, its matches void), sweeping
    every ``config.sweep_seconds`` (dead workers' leases, lost tasks: so it ends with no beat
    running). Between two steps only which of its batches in flight have finished is read,
    every ``poll_seconds`` (a step reads the results and the test: it runs only once a
    batch has finished, within ``poll_seconds`` of it, as only a whole batch moves the test:
    :func:`_complete_batches`). A step shows the state the workers keep after each match
    (:func:`stop_if_decided`) once it covers every done match, waited for up to
    ``kept_seconds``, and reads the test itself only if none does by then (so the caller
    loads no scipy while the workers play). Yield each step (the caller
    shows where the test stands); the last is done, and once the caller has shown it (the
    verdict first), the matches a decided compare did not need are voided (the workers'
    stop check voids them too: :func:`stop_if_decided`).

    Raises:
        NotFound: no compare has that id.
    """
    last_sweep = time.monotonic()
    _compare(store, tournament_id)
    # (held three sweeps long at least: renewed at each)
    lease = max(FOLLOW_LEASE_SECONDS, 3 * config.sweep_seconds)
    _hold(store, tournament_id, lease)
    read, batches = ResultsRead(), _batches(store, tournament_id)  # (a compare's never change)
    # The first batches go at once, before the first step's reads (the process's first:
    # their statements compiled, a tenth of a second the workers would wait for).
    sent = _send_due(store, tournament_id, batches, min(len(batches), ahead))
    # (read before the step: no batch finished meanwhile is missed; after the first step,
    # the poll that ends the wait reads it)
    complete = _complete_batches(store, batches, frozenset(), ahead)
    while True:
        step = _advanced(store, tournament_id, ahead, read, batches, kept_seconds, poll_seconds)
        if not sent:  # (the first step says the broker did not take the first batches)
            step, sent = dataclasses.replace(step, sent=False), True
        if not step.done and time.monotonic() - last_sweep >= config.sweep_seconds:
            last_sweep = time.monotonic()
            step = dataclasses.replace(step, **_swept(store, config))
            _hold(store, tournament_id, lease)
        yield step
        if step.done:
            if step.decided:
                _void_rest(store, tournament_id, step)
            return
        sweep_due = last_sweep + config.sweep_seconds
        while True:
            time.sleep(poll_seconds)
            polled = _complete_batches(store, batches, complete, ahead)
            if polled != complete or time.monotonic() >= sweep_due:
                complete = polled
                break


def _complete_batches(
    store: Store, batches: Sequence[Sequence[int]], known: frozenset[int], ahead: int
) -> frozenset[int]:
    """The batches (by index) whose matches are all finished (done or void): ``known``, and
    those of the next ``ahead + 1`` batches not in it that are (every batch sent and not
    finished is among them: no more than ``ahead`` are sent beyond the finished ones). Only
    a finished batch can move the test (a deal group counts once each of its seat
    rotations, one match each, is in), so :func:`follow_compare` steps only then."""
    unknown = (number for number in range(len(batches)) if number not in known)
    next_ones = list(itertools.islice(unknown, ahead + 1))
    finished = finished_among(store, [i for number in next_ones for i in batches[number]])
    return known | {number for number in next_ones if finished.issuperset(batches[number])}


def _swept(store: Store, config: Config) -> dict[str, Any]:
    """Sweep the matches; say why the broker could not be reached, and if a worker lives."""
    problem = None
    try:
        sweep_matches(store, resend_grace_seconds=config.resend_grace_seconds)
    except BROKER_ERRORS as exc:  # a restarting broker: the next sweep will do
        problem = str(exc)
    alive = any(worker.alive for worker in list_workers(store, config=config))
    return {"sweep": problem, "workers": alive}


def stop_compare(store: Store, tournament_id: int, reason: str) -> None:
    """Void the compare's matches not started (running ones finish and are stored), saying
    why: its runner gave up on it.

    Raises:
        NotFound: no compare has that id.
    """
    _compare(store, tournament_id)
    void_pending(store, tournament_id, reason)
