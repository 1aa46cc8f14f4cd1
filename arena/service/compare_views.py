"""Compares as the web and the API start and show them: an account's request checked (its
rule set, its bots, NEW the account's own) and stored through
:func:`arena.service.compares.create_compare`, its matches sent at once; a compare's page
and API view (LLR against its bounds, NEW's Elo advantage with its interval, LOS, the
verdict). Apart from :mod:`arena.service.compares` (the compare itself, and the loop
``arena compare --remote`` follows), which loads none of the pages' reads.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from arena.compete.names import parse_reference
from arena.compete.sprt import Statistic, make_test
from arena.engine.rules import Rules
from arena.errors import ArenaError, NotFound, VerdictError
from arena.service.bot_views import bot_view
from arena.service.compares import (
    COMPARE_FORMAT,
    REFUSED,
    CompareTest,
    advance_compare,
    compare_state,
    create_compare,
    group_size,
    is_current,
    is_decided,
    kept_state,
    stop_reason,
    tally,
    verdict_of,
)
from arena.service.matches import MatchSettings
from arena.service.permissions import Actor, Target, actor_id, require
from arena.service.rule_sets import find_rules
from arena.service.shapes import ELO, HIDDEN, about
from arena.store.compares import kept_reading, named_tournament
from arena.store.db import Store, as_utc
from arena.store.queue import tournament_progress

__all__ = [
    "MAX_COMPARE_GAMES",
    "CompareRequest",
    "CompareView",
    "StartedCompare",
    "compare_view",
    "start_compare",
]

#: Games a compare started by an account (the web, the API) may play, at most.
MAX_COMPARE_GAMES = 20_000


@dataclass(frozen=True, slots=True)
class CompareView:
    """A compare for its page and the API.

    Attributes:
        test: what it tests (None: stored before tests were kept; then only the games);
            the API shows its fields beside the others (``new``, ``old``, ``statistic``,
            ``elo0``, ``elo1``, ``alpha``, ``beta``, ``max_games``: None without one).
        elo, low, high: NEW's Elo advantage and its 95% interval, as the test's statistic
            estimates it (None before two deal groups are complete; infinite when NEW won
            or lost every game of the game-level test).
        llr, lower, upper: the log-likelihood ratio and the bounds that decide.
        fast_llr, fast_upper: the margin test's fast pass, its LLR and the bound at which
            it passes NEW (None for the game-level test).
        verdict: ``running``, ``passed``, ``failed``, ``undecided``, ``refused`` (its
            games cannot give a verdict: ``problem`` says why), or ``cancelled`` (it ended
            before its test decided or its game limit: its tournament cancelled, or its
            matches void with deal groups incomplete; ``problem`` says why).
        problem: why the verdict is ``refused`` or ``cancelled`` (None otherwise).
    """

    name: str
    rules: str
    players: int
    seed: int = field(metadata=HIDDEN)
    status: str
    created: datetime = field(metadata=HIDDEN)
    owner: str | None = field(metadata=HIDDEN)
    owner_id: int | None = field(metadata=HIDDEN)
    test: CompareTest | None = field(metadata=HIDDEN)
    progress: dict[str, int]
    games: int
    elo: float | None = field(metadata=ELO)
    low: float | None = field(metadata=ELO)
    high: float | None = field(metadata=ELO)
    los: float | None = field(metadata=about(digits=4))
    llr: float | None = field(metadata=about(digits=3))
    lower: float | None = field(metadata=about(digits=3))
    upper: float | None = field(metadata=about(digits=3))
    verdict: str = field(
        metadata=about(
            "running, passed (H1), failed (H0), undecided (at the game limit), refused (its "
            "games cannot give a verdict: problem says why), or cancelled (it ended before "
            "its test decided: problem says why)"
        )
    )
    teams: bool = False
    fast_llr: float | None = field(
        default=None, metadata=about("the margin test's fast pass (else null)", digits=3)
    )
    fast_upper: float | None = field(
        default=None, metadata=about("where the fast pass passes NEW", digits=3)
    )
    problem: str | None = field(
        default=None, metadata=about("why the verdict is refused or cancelled (else null)")
    )
    # the test's fields, for the API (from ``test``)
    new: str | None = field(init=False, default=None)
    old: str | None = field(init=False, default=None)
    statistic: Statistic | None = field(
        init=False, default=None, metadata=about("margin or game: what the test counts")
    )
    elo0: float | None = field(init=False, default=None)
    elo1: float | None = field(init=False, default=None)
    alpha: float | None = field(init=False, default=None)
    beta: float | None = field(init=False, default=None)
    max_games: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.test is not None:
            for name in ("new", "old", "statistic", "elo0", "elo1", "alpha", "beta", "max_games"):
                object.__setattr__(self, name, getattr(self.test, name))


def compare_view(store: Store, name: str) -> CompareView:
    """The compare called ``name``.

    Raises:
        LookupError: no tournament of that name, or it is not a compare.
    """
    found = named_tournament(store, name)
    if found is None or found.tournament.format != COMPARE_FORMAT:
        raise LookupError(f"no compare called {name!r}")
    tournament, rules, owner = found.tournament, found.rules, found.owner
    test = CompareTest.from_settings(tournament.settings)
    progress = tournament_progress(store, tournament.id)
    done = progress["pending"] + progress["running"] == 0
    sprt = test.sprt if test is not None else make_test("game", 0.0, 10.0)
    problem = None
    kept = kept_reading(store, tournament.id) if test is not None else None
    if kept is not None and kept[1] != REFUSED and is_current(kept, progress["done"]):
        # the workers' reading (their stop check's: the same figures), not every result
        # read again and the test's scipy loaded for a page
        state = kept_state(kept[2])
    else:
        try:
            state = compare_state(store, tournament.id, sprt, tournament.players, tournament.teams)
        except VerdictError as exc:  # no figure is shown for games that cannot give one
            problem = str(exc)
            state = tally({}, sprt, group_size(tournament.players, tournament.teams))
    reading, refused = state.reading, problem is not None
    # ended undecided before its game limit: cancelled, or deal groups left incomplete
    stopped = (
        not refused
        and test is not None
        and done
        and not is_decided(state, test)
        and (tournament.status == "cancelled" or progress["void"] > 0)
    )
    if stopped:
        problem = stop_reason(store, tournament.id, tournament.status == "cancelled")
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
        elo=reading.elo,
        low=reading.low,
        high=reading.high,
        los=reading.los,
        llr=reading.llr if test is not None else None,
        lower=reading.lower if test is not None else None,
        upper=reading.upper if test is not None else None,
        verdict=REFUSED
        if refused
        else verdict_of(state.status if test is not None else "continue", done, stopped),
        teams=tournament.teams,
        fast_llr=reading.fast_llr,
        fast_upper=reading.fast_upper,
        problem=problem,
    )


# --- starting one for an account -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """A compare as an account asks for it (the page's form, the API's body); the ranges
    are checked by :func:`start_compare`, each with its own message."""

    new: str = field(metadata=about("your bot, OWNER/NAME[@VERSION]"))
    old: str = field(metadata=about("OWNER/NAME[@VERSION]"))
    rules: str = field(
        metadata={
            **about("a rule set: a preset, or any stored one's NAME or NAME@VERSION (/rules)"),
            "examples": ["draw"],
        }
    )
    players: int = field(default=2, metadata=about("seats; 4 with teams"))
    teams: bool = field(
        default=False, metadata=about("2v2 (muggins, 4 players): NEW and OLD each partner a copy")
    )
    statistic: Statistic = field(
        default="margin",
        metadata=about(
            "what the test counts per deal group: margin (point margins less the luck of the "
            "draw, with a fast pass) or game (game results, fishtest's pentanomial SPRT)"
        ),
    )
    elo0: float = field(default=0.0, metadata=about("H0: NEW is at most this much stronger"))
    elo1: float = field(default=10.0, metadata=about("H1: NEW is at least this much stronger"))
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = field(default=2000, metadata=about(f"at most {MAX_COMPARE_GAMES:,}"))
    batch: int = field(default=8, metadata=about("deal groups between two looks at the test"))
    move_ms: int = field(default=1000, metadata=about("time a move, in milliseconds"))
    allow_same_source: bool = field(
        default=False,
        metadata=about(
            "compare NEW and OLD even when their sources are the same (a bot against itself: "
            "refused otherwise, as it tests nothing)"
        ),
    )


@dataclass(frozen=True, slots=True)
class StartedCompare:
    """A compare stored for an account: its tournament, its name, whether the broker took
    its matches (if not they wait, pending, for the sweep)."""

    tournament_id: int
    name: str
    sent: bool


def _checked_rules(store: Store, wanted: CompareRequest) -> Rules:
    """The request's rule set (a preset or any stored one, :mod:`arena.service.rule_sets`),
    its players, games, time and batch checked.

    Raises:
        NotFound: no rule set is called so (the sentence says what is).
        ArenaError: a parameter out of its range (the message says which).
        RulesError: players or teams the rule set does not allow.
    """
    rules = find_rules(store, wanted.rules)
    if not 2 <= wanted.players <= max(rules.players):
        raise ArenaError(f"players must be 2 to {max(rules.players)} under {rules.name}")
    rules.check_players(wanted.players, wanted.teams)
    size = group_size(wanted.players, wanted.teams)
    if not size <= wanted.max_games <= MAX_COMPARE_GAMES:
        raise ArenaError(f"games must be {size} to {MAX_COMPARE_GAMES}")
    if not 10 <= wanted.move_ms <= 10_000:
        raise ArenaError("the time a move must be 10 to 10000 ms")
    if not 1 <= wanted.batch <= 1000:
        raise ArenaError("the batch must be 1 to 1000 deal groups")
    return rules


def _check_bots(store: Store, actor: Actor, wanted: CompareRequest) -> None:
    """Both bots are stored as ``OWNER/NAME[@VERSION]``, NEW is one ``actor`` may test, and
    NEW and OLD are two versions (a version against itself tests nothing: its games cost
    the workers and its verdict is noise).

    Raises:
        ArenaError: a reference without its owner; NEW and OLD the same version.
        NotFound: a bot, or the version asked for, is not stored.
        PermissionDenied: NEW is not ``actor``'s bot (nor ``actor`` an admin).
    """
    chosen: list[tuple[str, str, int]] = []
    for which, spec in (("NEW", wanted.new), ("OLD", wanted.old)):
        reference = parse_reference(spec)
        if reference.owner is None:
            raise ArenaError(f"{which} must be OWNER/NAME[@VERSION], not {spec!r}")
        view = bot_view(store, reference.owner, reference.name, actor)
        if view is None:
            raise NotFound(f"no bot {reference.owner}/{reference.name}")
        if which == "NEW":
            message = f"only the owner of {spec} may test it against others"
            require(actor, "start-compare", Target(view.owner_id), message=message)
        numbers = {v.version for v in view.versions}
        version = max(numbers) if reference.version is None else reference.version
        if version not in numbers:
            raise NotFound(f"no version {version} of {view.owner}/{view.name}")
        chosen.append((view.owner, view.name, version))
    if chosen[0] == chosen[1]:
        owner, name, version = chosen[0]
        raise ArenaError(
            f"NEW and OLD are the same version ({owner}/{name}@{version}): "
            "compare it with another version or another bot"
        )


def start_compare(store: Store, actor: Actor, wanted: CompareRequest) -> StartedCompare:
    """Store the compare ``actor`` asks for and send its matches to the workers. NEW must be
    the actor's own bot (any bot, for an admin), OLD another version than NEW's, and of
    another source unless ``wanted.allow_same_source``.

    Raises:
        PermissionDenied: NEW is someone else's bot (or no one is logged in).
        NotFound: a bot or a version is not stored.
        ArenaError, ValueError: a bad parameter, NEW = OLD, or the same source (the
            message says which).
    """
    rules = _checked_rules(store, wanted)
    _check_bots(store, actor, wanted)
    try:
        test = make_test(wanted.statistic, wanted.elo0, wanted.elo1, wanted.alpha, wanted.beta)
    except ValueError as exc:
        raise ArenaError(f"the test's parameters: {exc}") from None
    tournament_id, name = create_compare(
        store,
        new=wanted.new,
        old=wanted.old,
        rules=rules,
        players=wanted.players,
        teams=wanted.teams,
        test=test,
        max_games=wanted.max_games,
        batch=wanted.batch,
        seed=random.SystemRandom().getrandbits(62),
        settings=MatchSettings(move_seconds=wanted.move_ms / 1000),
        owner_id=actor_id(actor),
        allow_same_source=wanted.allow_same_source,
    )
    return StartedCompare(tournament_id, name, advance_compare(store, tournament_id).sent)
