"""Regression tests on the workers: "is NEW stronger than OLD?" as a stored tournament.

A compare is a tournament of format ``compare``: NEW against ``players - 1`` copies of OLD
on duplicate deals (each deal played once per seat rotation), scheduled in batches of deal
groups, under a sequential probability ratio test (:class:`arena.compete.sprt.SPRT`) whose
parameters are stored with it (``settings["sprt"]``). Whoever starts it (``arena compare
--remote``, the web page, the API) sends its matches to the workers; after each match a
worker calls :func:`stop_if_decided`, which voids the matches not yet started once the
test has decided or the game limit is reached. :func:`compare_view` reads where a compare
stands: LLR against its bounds, NEW's Elo advantage with its interval, LOS, the verdict.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from arena.compete.localrun import GameResult, MatchResult
from arena.compete.names import fit_name
from arena.compete.sprt import SPRT, GroupScores, elo_estimate, los
from arena.compete.tournaments import Match as ScheduledMatch
from arena.compete.tournaments import entrant_name, schedule
from arena.engine.rules import Rules
from arena.service.matches import MatchSettings, create_stored_tournament
from arena.service.results import load_results
from arena.store.db import Store, as_utc
from arena.store.models import Match, RuleSet, Tournament, User
from arena.store.queue import tournament_progress, void_pending

__all__ = [
    "COMPARE_FORMAT",
    "CompareState",
    "CompareTest",
    "CompareView",
    "batch_seed",
    "compare_schedule",
    "compare_state",
    "compare_view",
    "create_compare",
    "deal_groups",
    "new_score",
    "stop_if_decided",
    "verdict_of",
]

#: The stored tournaments' format.
COMPARE_FORMAT = "compare"


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

    @property
    def sprt(self) -> SPRT:
        """The sequential test."""
        return SPRT(self.elo0, self.elo1, self.alpha, self.beta)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> CompareTest | None:
        """The test stored in a tournament's settings, or None (not a compare, or one
        stored before the test was kept with it)."""
        data = (settings or {}).get("sprt")
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                new=str(data["new"]), old=str(data["old"]), elo0=float(data["elo0"]),
                elo1=float(data["elo1"]), alpha=float(data["alpha"]),
                beta=float(data["beta"]), max_games=int(data["max_games"]),
                batch=int(data["batch"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


def batch_seed(seed: int, batch: int) -> int:
    """The seed of a compare's batch ``batch``: the same deals whoever plays them."""
    digest = hashlib.sha256(f"arena:compare:{seed}:{batch}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def compare_schedule(
    rules: Rules, players: int, *, max_games: int, batch: int, seed: int
) -> list[ScheduledMatch]:
    """Every match of a compare: ``batch`` deal groups a batch (the last has what is left of
    ``max_games // players`` groups), keyed ``bNNNNN-...`` by batch, each batch its own
    deal group; NEW is the label ``new``, OLD's copies ``old1``, ``old2``..."""
    labels = ["new", *(f"old{i}" for i in range(1, players))]
    deals = max_games // players
    matches: list[ScheduledMatch] = []
    for number in range(-(-deals // batch)):
        tag = f"b{number:05d}"
        for match in schedule(
            "duplicate",
            labels,
            rules=rules,
            players=players,
            games_per_match=min(batch, deals - number * batch),
            seed=batch_seed(seed, number),
        ):
            matches.append(dataclasses.replace(match, id=f"{tag}-{match.id}", deal_group=tag))
    return matches


def create_compare(
    store: Store,
    *,
    new: str,
    old: str,
    rules: Rules,
    players: int,
    test: SPRT,
    max_games: int,
    batch: int,
    seed: int,
    settings: MatchSettings | None = None,
    owner_id: int | None = None,
    now: datetime | None = None,
) -> tuple[int, str]:
    """Store a compare of the stored bots ``new`` and ``old`` (``[OWNER/]NAME[@VERSION]``)
    with its pending matches; return its tournament id and name (derived from the bots,
    the rule set, the seed and the time). Nothing is sent to the workers.

    Raises:
        LookupError: a bot is not stored.
        ValueError: fewer games than one deal group, or as ``create_stored_tournament``.
        RulesError: ``players`` not allowed by ``rules``.
    """
    rules.check_players(players)
    if max_games < players:
        raise ValueError(f"{max_games} games is fewer than one deal group ({players} games)")
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S")
    name = fit_name(f"compare-{new}-v-{old}-{rules.name}-seed{seed}-{stamp}")
    stored = CompareTest(new, old, test.elo0, test.elo1, test.alpha, test.beta, max_games, batch)
    tournament_id, _ = create_stored_tournament(
        store,
        name=name,
        rules=rules,
        format=COMPARE_FORMAT,
        entrants=[f"new={new}", *(f"old{i}={old}" for i in range(1, players))],
        players=players,
        games_per_match=batch,
        seed=seed,
        settings=settings,
        extra_settings={"sprt": dataclasses.asdict(stored)},
        matches=compare_schedule(rules, players, max_games=max_games, batch=batch, seed=seed),
        owner_id=owner_id,
    )
    return tournament_id, name


def new_score(seat: int, game: GameResult) -> float:
    """NEW's score in [0, 1] in one game: the share of its opponents it finished ahead of
    (a tie counts half): 1 or 0 for a 2-player win or loss, 0.5 for a draw."""
    mine = game.places[seat]
    others = [place for other, place in enumerate(game.places) if other != seat]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def deal_groups(results: Sequence[MatchResult]) -> dict[tuple[str, int], list[float]]:
    """NEW's score in each game of each deal group (the same deal, seats rotated)."""
    groups: dict[tuple[str, int], list[float]] = {}
    for result in results:
        if result.match.deal_group is None or result.void is not None:
            continue
        seat = [entrant_name(spec) for spec in result.match.seats].index("new")
        for game in result.games:
            key = (result.match.deal_group, game.index)
            groups.setdefault(key, []).append(new_score(seat, game))
    return groups


@dataclass(frozen=True, slots=True)
class CompareState:
    """Where a compare's test stands over its complete deal groups.

    Attributes:
        samples: NEW's mean score in each complete deal group.
        played: the games of those groups.
        status: the test's (``continue``, ``H0 accepted``, ``H1 accepted``).
        finished_batches: batches with every deal group complete.
    """

    samples: GroupScores
    played: int
    status: str
    finished_batches: int


def compare_state(store: Store, tournament_id: int, test: SPRT, players: int) -> CompareState:
    """The test over the compare's stored results."""
    groups = deal_groups(load_results(store, tournament_id))
    complete = [scores for scores in groups.values() if len(scores) == players]
    finished = len({key[0] for key, scores in groups.items() if len(scores) == players})
    samples = GroupScores(sum(scores) / len(scores) for scores in complete)
    played = sum(len(scores) for scores in complete)
    status = test.status(samples) if samples.n >= 2 else "continue"
    return CompareState(samples, played, status, finished)


def verdict_of(status: str, done: bool) -> str:
    """``passed`` (H1), ``failed`` (H0), ``undecided`` (done without a decision), or
    ``running``."""
    if status == "H1 accepted":
        return "passed"
    if status == "H0 accepted":
        return "failed"
    return "undecided" if done else "running"


def stop_if_decided(store: Store, match_id: int) -> str | None:
    """After a match of a compare finished: if its test has decided, or its game limit is
    reached, void the matches not started (running ones finish and are stored); return
    the test's status then, or None (not a compare, or it goes on). Safe to call any number
    of times, from any worker."""
    with store.read() as session:
        row = session.execute(
            select(Tournament.id, Tournament.format, Tournament.settings, Tournament.players)
            .join(Match, Match.tournament_id == Tournament.id)
            .where(Match.id == match_id)
        ).first()
    if row is None or row[1] != COMPARE_FORMAT:
        return None
    tournament_id, _, settings, players = row
    stored = CompareTest.from_settings(settings)
    if stored is None:
        return None
    state = compare_state(store, tournament_id, stored.sprt, players)
    if state.status == "continue" and state.played < stored.max_games:
        return None
    void_pending(store, tournament_id, f"the test ended: {state.status}")
    return state.status


@dataclass(frozen=True, slots=True)
class CompareView:
    """A compare for its page and the API.

    Attributes:
        test: what it tests (None: stored before tests were kept; then only the games).
        elo, low, high: NEW's Elo advantage and its 95% interval (None before two deal
            groups are complete; infinite when NEW won or lost every game).
        llr, lower, upper: the log-likelihood ratio and the bounds that decide.
        verdict: ``running``, ``passed``, ``failed`` or ``undecided``.
    """

    name: str
    rules: str
    players: int
    seed: int
    status: str
    created: datetime
    owner: str | None
    owner_id: int | None
    test: CompareTest | None
    progress: dict[str, int]
    games: int
    elo: float | None
    low: float | None
    high: float | None
    los: float | None
    llr: float | None
    lower: float | None
    upper: float | None
    verdict: str


def compare_view(store: Store, name: str) -> CompareView:
    """The compare called ``name``.

    Raises:
        LookupError: no tournament of that name, or it is not a compare.
    """
    with store.read() as session:
        found = session.execute(
            select(Tournament, RuleSet.name, User.name)
            .join(RuleSet, RuleSet.id == Tournament.rule_set_id)
            .outerjoin(User, User.id == Tournament.owner_id)
            .where(Tournament.name == name)
        ).first()
        if found is None or found[0].format != COMPARE_FORMAT:
            raise LookupError(f"no compare called {name!r}")
        tournament, rules, owner = found
        session.expunge(tournament)
    test = CompareTest.from_settings(tournament.settings)
    progress = tournament_progress(store, tournament.id)
    done = progress["pending"] + progress["running"] == 0
    sprt = test.sprt if test is not None else SPRT(0.0, 10.0)
    state = compare_state(store, tournament.id, sprt, tournament.players)
    elo = low = high = chance = llr = lower = upper = None
    if state.samples.n >= 2:
        elo, low, high = elo_estimate(state.samples)
        chance = los(state.samples)
    if test is not None:
        llr = sprt.llr(state.samples)
        lower, upper = sprt.bounds()
    return CompareView(
        name=tournament.name,
        rules=rules,
        players=tournament.players,
        seed=tournament.seed,
        status=tournament.status,
        created=as_utc(tournament.created),
        owner=owner,
        owner_id=tournament.owner_id,
        test=test,
        progress=progress,
        games=state.played,
        elo=elo,
        low=low,
        high=high,
        los=chance,
        llr=llr,
        lower=lower,
        upper=upper,
        verdict=verdict_of(state.status if test is not None else "continue", done),
    )
