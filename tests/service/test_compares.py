"""Compares as stored tournaments (arena/service/compares.py), on both databases: the test
stored with the tournament, the stop a worker applies after each match, and the view the
page and the API show. Matches are played here by the worker's own code, unsandboxed (the
bots are trusted: greedy, and the docs' first-legal-move bot), so every game follows from
the seed."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import select

from arena.compete.entrants import Entrant
from arena.compete.margins import LUCK_TERMS, group_margin
from arena.compete.sprt import SPRT, MarginSPRT, make_test
from arena.engine.rules import PRESETS
from arena.errors import NotFound
from arena.service import compares
from arena.service.compare_views import compare_view
from arena.service.compares import (
    CompareState,
    CompareTest,
    ResultsRead,
    advance_compare,
    compare_schedule,
    compare_state,
    create_compare,
    deal_groups,
    follow_compare,
    group_of,
    stop_compare,
    stop_if_decided,
    verdict_of,
)
from arena.service.matches import Config, run_match
from arena.service.results import load_results
from arena.store.compares import keep_reading, kept_reading
from arena.store.db import Store, source_hash
from arena.store.models import Match, Tournament
from arena.store.queue import tournament_progress
from arena.store.tournaments import match_keys
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import Recorder, play_as_worker, play_compare

RULES = PRESETS["draw"]
NEW, OLD = Entrant.builtin("greedy"), Entrant.builtin("random")


@pytest.fixture
def bots(store: Store) -> Store:
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    return store


def test_a_decided_compare_voids_what_it_did_not_need(bots: Store, tmp_path: Path) -> None:
    test = SPRT(0.0, 100.0)  # decided after 32 games (elo1 = 25 took 128: 3.5x the time)
    tournament_id, name = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=test,
        max_games=2000, batch=8, seed=1,
    )  # fmt: skip
    assert name.startswith("compare-ada-greedy-v-bob-first-draw-seed1-")
    with bots.read() as session:
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None and tournament.format == "compare"
        stored = CompareTest.from_settings(tournament.settings)
    assert stored == CompareTest(
        "ada/greedy", "bob/first", 0.0, 100.0, 0.05, 0.05, 2000, 8, statistic="game",
        new_source=source_hash((REFERENCE_BOTS / "greedy.py").read_text()),
        old_source=source_hash((ZOO / "first.py").read_text()),
    )  # fmt: skip
    said = play_compare(bots, tournament_id, tmp_path / "cache")
    assert said == ["H1 accepted"]  # one stop, after the match that decided
    view = compare_view(bots, name)
    assert view.verdict == "passed" and view.status == "done"
    assert view.llr is not None and view.upper is not None and view.llr >= view.upper
    assert view.elo is not None and view.low is not None and view.elo > view.low > 0
    assert view.los is not None and view.los > 0.99
    assert view.progress["void"] > 0 and view.progress["pending"] == 0
    assert view.games == 16 * view.progress["done"] // 2  # whole deal groups: 8 deals x 2


def test_an_undecided_compare_plays_to_its_limit(bots: Store, tmp_path: Path) -> None:
    tournament_id, name = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=SPRT(0.0, 10.0), max_games=8, batch=2, seed=3,
    )  # fmt: skip
    said = play_compare(bots, tournament_id, tmp_path / "cache")
    view = compare_view(bots, name)
    assert view.games == 8 and view.progress["void"] == 0 and view.progress["done"] == 4
    assert said[-1] == "continue" and view.verdict == "undecided"


def test_compare_bad_requests(bots: Store) -> None:
    with pytest.raises(ValueError, match="fewer than one deal group"):
        create_compare(
            bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
            test=SPRT(0.0, 10.0), max_games=1, batch=2, seed=3,
        )  # fmt: skip
    with pytest.raises(LookupError, match="no bot 'nobody'"):
        create_compare(
            bots, new="nobody", old="bob/first", rules=RULES, players=2,
            test=SPRT(0.0, 10.0), max_games=10, batch=2, seed=3,
        )  # fmt: skip
    with pytest.raises(ValueError, match="are the same version"):  # arena compare --remote
        create_compare(
            bots, new="ada/greedy", old="ada/greedy", rules=RULES, players=2,
            test=SPRT(0.0, 10.0), max_games=10, batch=2, seed=3,
        )  # fmt: skip
    with pytest.raises(LookupError, match="no compare called 'x'"):
        compare_view(bots, "x")
    assert stop_if_decided(bots, 12345) is None


def test_the_schedule_rotates_seats_over_the_same_deals() -> None:
    matches = compare_schedule(RULES, 3, new=NEW, old=OLD, max_games=30, batch=4, seed=5)
    # 10 deal groups: batches of 4, 4 and 2, each played in 3 seatings
    assert [m.games for m in matches] == [4, 4, 4, 4, 4, 4, 2, 2, 2]
    assert {m.deal_group for m in matches} == {"b00000", "b00001", "b00002"}
    first = [m for m in matches if m.deal_group == "b00000"]
    assert len({m.seed for m in first}) == 1  # the same deals in every seating
    assert sorted([e.label for e in m.seats].index("new") for m in first) == [0, 1, 2]
    assert {e.label: e.strategy for m in first for e in m.seats} == {
        "new": "greedy", "old1": "random", "old2": "random"
    }  # fmt: skip


def test_the_margin_test_decides_from_the_stored_results(bots: Store, tmp_path: Path) -> None:
    # The default statistic: the same compare as above decides, and the groups the stored
    # results give (scores, margins, the luck kept with each game) are those of the records.
    tournament_id, name = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=MarginSPRT(0.0, 25.0), max_games=2000, batch=8, seed=1,
    )  # fmt: skip
    said = play_compare(bots, tournament_id, tmp_path / "cache")
    assert said == ["H1 accepted"]
    view = compare_view(bots, name)
    assert view.test is not None and view.test.statistic == "margin"
    assert view.verdict == "passed" and view.llr is not None and view.fast_llr is not None
    assert view.fast_upper is not None and view.upper is not None
    assert view.llr >= view.upper or view.fast_llr >= view.fast_upper
    assert view.elo is not None and view.low is not None and view.elo > view.low > 0
    stored = deal_groups(load_results(bots, tournament_id))
    recorded = load_results(bots, tournament_id, records=True)
    seats: dict[tuple[str, int], list[int]] = {}
    records: dict[tuple[str, int], list[dict[str, object]]] = {}
    for result in recorded:
        if result.void is None:
            seat = [entrant.label for entrant in result.match.seats].index("new")
            for game in result.games:
                key = (str(result.match.deal_group), game.index)
                records.setdefault(key, []).append(game.record)
                seats.setdefault(key, []).append(seat)
    assert stored.keys() == records.keys() and len(stored) >= 16
    for key, games in stored.items():
        expected = group_margin(records[key], seats[key])
        got = group_of(games)
        assert (got.score, got.margin, got.forfeit) == (
            expected.score, expected.margin, expected.forfeit
        )  # fmt: skip
        assert got.luck == pytest.approx(expected.luck, abs=1e-5)
    # The game-level test over the same stored groups, as the old statistic reads them.
    state = compare_state(bots, tournament_id, make_test("game", 0.0, 25.0), 2)
    assert state.reading.statistic == "game" and state.played == view.games


def test_a_team_compare(bots: Store, tmp_path: Path) -> None:
    # 2v2 muggins: NEW and OLD each partner a copy; a deal group is two games.
    matches = compare_schedule(
        PRESETS["muggins"], 4, new=NEW, old=OLD, max_games=8, batch=2, seed=5, teams=True
    )
    assert all(m.teams and len(m.seats) == 4 for m in matches)
    assert {tuple(e.label for e in m.seats) for m in matches} == {
        ("new", "old1", "new", "old1"), ("old1", "new", "old1", "new")
    }  # fmt: skip
    tournament_id, name = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=PRESETS["muggins"], players=4,
        teams=True, test=MarginSPRT(0.0, 10.0), max_games=8, batch=2, seed=5,
    )  # fmt: skip
    play_compare(bots, tournament_id, tmp_path / "cache")
    view = compare_view(bots, name)
    assert view.teams and view.games == 8 and view.progress["done"] == 4
    groups = [group_of(g) for g in deal_groups(load_results(bots, tournament_id)).values()]
    assert len(groups) == 4 and all(len(g.luck) == len(LUCK_TERMS) for g in groups)
    # A team's game score is 1, 1/2 or 0: the partner is not an opponent.
    assert {2 * g.score for g in groups} <= {0.0, 1.0, 2.0}
    with pytest.raises(ValueError, match="no team play with 2 players"):
        create_compare(
            bots, new="ada/greedy", old="bob/first", rules=PRESETS["muggins"], players=2,
            teams=True, test=MarginSPRT(0.0, 10.0), max_games=8, batch=2, seed=5,
        )  # fmt: skip


def test_a_compare_stored_before_statistics_ran_the_game_test() -> None:
    settings = {
        "sprt": {"new": "a", "old": "b", "elo0": 0, "elo1": 5, "alpha": 0.05, "beta": 0.05,
                 "max_games": 100, "batch": 4}
    }  # fmt: skip
    stored = CompareTest.from_settings(settings)
    assert stored is not None and stored.statistic == "game" and isinstance(stored.sprt, SPRT)
    settings["sprt"]["statistic"] = "margin"
    stored = CompareTest.from_settings(settings)
    assert stored is not None and isinstance(stored.sprt, MarginSPRT)
    settings["sprt"]["statistic"] = "wins"
    assert CompareTest.from_settings(settings) is None


@pytest.mark.parametrize(
    ("settings", "expected"),
    [(None, None), ({}, None), ({"sprt": "x"}, None), ({"sprt": {"new": "a"}}, None)],
)
def test_a_stored_test_that_is_not_one(settings: dict[str, object] | None, expected: None) -> None:
    assert CompareTest.from_settings(settings) is expected


def test_verdicts() -> None:
    assert verdict_of("H1 accepted", False) == "passed"
    assert verdict_of("H0 accepted", True) == "failed"
    assert verdict_of("continue", True) == "undecided"
    assert verdict_of("continue", False) == "running"


def _batch_count(store: Store, tournament_id: int, match_ids: set[int]) -> int:
    """How many batches of deal groups ``match_ids`` touch."""
    return len(
        {key.partition("-")[0] for i, key in match_keys(store, tournament_id) if i in match_ids}
    )


def test_the_remote_loop_sends_batches_ahead_and_voids_once_decided(
    bots: Store, recorder: Recorder, tmp_path: Path
) -> None:
    """``arena compare --remote``'s step (advance_compare, two batches ahead), after each
    match as the CLI's loop polls: never more than two batches beyond those finished are
    sent, each match once, only sent matches are played, and once the test decides the
    rest is void."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 100.0),
        max_games=2000, batch=4, seed=1,
    )  # fmt: skip
    config = Config(bot_cache=tmp_path / "cache")
    read = ResultsRead()  # the results read so far, kept from step to step: the same test
    step = advance_compare(bots, tournament_id, ahead=2)
    while not step.done:
        sent = [*itertools.chain(*recorder.sent)]
        assert len(sent) == len(set(sent)), "a match sent twice"
        assert _batch_count(bots, tournament_id, set(sent)) <= step.state.finished_batches + 2
        with bots.read() as session:
            pending = session.scalar(
                select(Match.id)
                .where(Match.tournament_id == tournament_id, Match.status == "pending")
                .order_by(Match.id)
                .limit(1)
            )
        assert pending in sent  # the workers only ever get what was sent
        assert run_match(bots, pending, config=config, sandboxed=False) == "done"
        step = advance_compare(bots, tournament_id, ahead=2)
        kept = compare_state(bots, tournament_id, SPRT(0.0, 100.0), 2, read=read)
        assert (kept.played, kept.reading) == (step.state.played, step.state.reading)
    assert step.decided and step.state.status == "H1 accepted" and step.sent
    assert sorted(read.by_id) == [i for i, _ in match_keys(bots, tournament_id)][: len(read.by_id)]
    progress = tournament_progress(bots, tournament_id)
    assert progress["void"] > 0 and progress["pending"] == 0
    total = len(match_keys(bots, tournament_id))
    assert len({*itertools.chain(*recorder.sent)}) < total  # the rest was never sent


def test_the_remote_loop_steps_once_a_batch_has_finished(
    bots: Store, recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena compare --remote``'s loop (follow_compare) sends the first batch before its
    first step reads anything, and steps again only once a batch has finished (a deal group
    counts once each of its seat rotations, a match each, is in): between two steps it
    polls which matches of the batches in flight have finished, and the poll that sees the
    batch's last match finished is the next step. That step shows the reading the workers
    kept after the match (their stop check): the loop reads the test itself only over no
    games (which loads nothing)."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=2,
    )  # fmt: skip
    steps: list[int] = []
    reads: list[int] = []
    polls: list[float] = []
    advanced, state = compares._advanced, compares.compare_state

    def stepped(*args: Any, **kwargs: Any) -> compares.CompareStep:
        steps.append(len(polls))
        assert len(recorder.sent) == 1  # the first batch went before the first step's reads
        return advanced(*args, **kwargs)

    def counted(store: Store, tournament_id: int, *args: Any, **kwargs: Any) -> CompareState:
        if steps and steps[-1] == len(polls):  # the loop's step reads the test itself
            reads.append(len(polls))
        return state(store, tournament_id, *args, **kwargs)

    def poll(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) in (3, 5):  # a worker plays a match of the batch sent, as the loop waits
            config = Config(bot_cache=tmp_path / "cache")
            assert play_as_worker(bots, recorder.sent[0][len(polls) // 4], config) is None

    monkeypatch.setattr(compares, "_advanced", stepped)
    monkeypatch.setattr(compares, "compare_state", counted)
    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=poll, monotonic=time.monotonic))
    followed = follow_compare(bots, tournament_id, config=Config(sweep_seconds=3600), ahead=1)
    first = next(followed)
    assert first.sent and steps == [0] and len(recorder.sent) == 1 and len(recorder.sent[0]) == 2
    assert reads == [0] and first.state.played == 0  # over no games
    second = next(followed)  # not after the batch's first match: after its second
    assert steps == [0, 5] and polls == [compares.FOLLOW_POLL_SECONDS] * 5
    assert not second.done and tournament_progress(bots, tournament_id)["done"] == 2
    assert second.state.played == 8 and second.state.finished_batches == 1
    assert reads == [0] and second.state.samples is None  # the workers' kept reading
    read = compares.compare_state(bots, tournament_id, SPRT(0.0, 10.0), 2)
    assert (second.state.played, second.state.reading) == (read.played, read.reading)


def test_without_the_workers_reading_the_loop_reads_the_test_itself(
    bots: Store, recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matches stored without a stop check after them (workers of older code): the loop
    waits ``kept_seconds`` for a reading over them, then reads the test itself, the same
    figures."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=2,
    )  # fmt: skip
    config = Config(bot_cache=tmp_path / "cache", sweep_seconds=3600)
    clock = [0.0]
    waited: list[float] = []

    def poll(seconds: float) -> None:
        clock[0] += seconds
        waited.append(seconds)
        if len(waited) == 1:
            for match_id in recorder.sent[0]:
                assert run_match(bots, match_id, config=config, sandboxed=False) == "done"

    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=poll, monotonic=lambda: clock[0]))
    followed = follow_compare(bots, tournament_id, config=config, ahead=1, kept_seconds=0.5)
    next(followed)
    second = next(followed)
    assert second.state.samples is not None and second.state.played == 8  # read here
    assert clock[0] >= 0.5 + compares.FOLLOW_POLL_SECONDS  # after waiting for a reading
    read = compares.compare_state(bots, tournament_id, SPRT(0.0, 10.0), 2)
    assert second.state.reading == read.reading


def _four_matches_played(store: Store, cache: Path) -> tuple[int, str]:
    """A compare of greedy against first (64 games in batches of 4 deal groups, seed 2)
    whose first four matches are played, each with its stop check: its id and name."""
    tournament_id, name = create_compare(
        store, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=make_test("margin", 0.0, 10.0), max_games=64, batch=4, seed=2,
    )  # fmt: skip
    play_compare(store, tournament_id, cache, matches=4)
    return tournament_id, name


def test_a_kept_reading_is_the_state_it_was_kept_from(bots: Store, tmp_path: Path) -> None:
    """The stop check keeps the state over every done match, JSON and back the same
    figures; an older reading (fewer done matches) never replaces a newer one."""
    tournament_id, _ = _four_matches_played(bots, tmp_path / "cache")
    kept = kept_reading(bots, tournament_id)
    assert kept is not None and kept[0] == 4
    state = compares.compare_state(bots, tournament_id, make_test("margin", 0.0, 10.0), 2)
    assert kept[1] == "continue"
    restored = compares.kept_state(kept[2])
    assert (restored.played, restored.finished_batches, restored.reading) == (
        state.played, state.finished_batches, state.reading
    )  # fmt: skip
    assert not keep_reading(bots, tournament_id, 3, "continue", '{"older": true}')
    assert kept_reading(bots, tournament_id) == kept
    with pytest.raises(ValueError, match="not a kept reading"):
        compares.kept_state('{"older": true}')


def test_a_compares_page_shows_the_workers_reading_when_it_covers_every_done_match(
    bots: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compare's view shows the reading the workers' stop checks kept once it is over
    every done match (the same figures the test gives when read again), without reading
    every result and the test again for a page; a reading over fewer matches is not shown,
    the test is read."""
    _, name = _four_matches_played(bots, tmp_path / "cache")
    read_again = compare_view(bots, name)

    def not_read(*_: object, **__: object) -> Any:
        raise AssertionError("the test was read again")

    with monkeypatch.context() as patched:
        patched.setattr("arena.service.compare_views.compare_state", not_read)
        assert compare_view(bots, name) == read_again
    with bots.write() as session:  # a match done that no stop check has read yet
        match = session.scalars(select(Match).where(Match.status == "pending")).first()
        assert match is not None
        match.status = "done"
        match.result = session.get(Match, match.id - 1).result  # type: ignore[union-attr]
    with monkeypatch.context() as patched:
        patched.setattr("arena.service.compare_views.compare_state", not_read)
        with pytest.raises(AssertionError, match="read again"):
            compare_view(bots, name)


def test_the_web_sends_a_compare_whole_and_its_runner_may_stop_it(
    bots: Store, recorder: Recorder
) -> None:
    """The web's start (no ``ahead``) sends every match at once, as before the loop was
    shared; stop_compare voids what is not started; a tournament that is no compare is
    not found."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=2,
    )  # fmt: skip
    step = advance_compare(bots, tournament_id)
    assert step.sent and not step.done
    every = [i for i, _ in match_keys(bots, tournament_id)]
    assert sorted(itertools.chain(*recorder.sent)) == every
    assert advance_compare(bots, tournament_id).sent and len(recorder.sent) == 1  # sent once
    stop_compare(bots, tournament_id, "the runner gave up")
    assert tournament_progress(bots, tournament_id)["void"] == len(every)
    with pytest.raises(NotFound, match="no compare has the id 999"):
        advance_compare(bots, 999)


#: Plays a match in a fresh interpreter as a worker's process would, then says whether
#: scipy.special (the margin test's) was loaded by then: argv[1] the database, argv[2] the
#: match, argv[3] the bot cache.
_FRESH_MATCH = """
import sys, time
from arena.service.matches import Config, run_match
from arena.store.db import connect
store = connect(sys.argv[1])
assert "scipy.special" not in sys.modules
config = Config(bot_cache=__import__("pathlib").Path(sys.argv[3]))
assert run_match(store, int(sys.argv[2]), config=config, sandboxed=False) == "done"
deadline = time.monotonic() + 30
while "scipy.special" not in sys.modules and time.monotonic() < deadline:
    time.sleep(0.05)
print("scipy.special" in sys.modules)
"""


def test_a_workers_process_loads_the_tests_scipy_while_it_plays_a_compares_match(
    url: str, bots: Store, tmp_path: Path
) -> None:
    """The stop check after a compare's match reads the test (scipy.special for the margin
    test: a third of a second of a process's first check): a process loads it while it
    plays its first match of a compare, not at the check. (A match of another tournament
    never loads it: tests/cli/test_lazy.py, a worker's start.)"""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=make_test("margin", 0.0, 10.0), max_games=64, batch=4, seed=2,
    )  # fmt: skip
    first = match_keys(bots, tournament_id)[0][0]
    ran = subprocess.run(
        [sys.executable, "-c", _FRESH_MATCH, url, str(first), str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True"]


def test_a_match_being_played_when_its_compare_decides_stops_and_is_void(
    bots: Store, tmp_path: Path
) -> None:
    """A compare's next batches are sent ahead, so a worker is often playing one of its
    matches when another's stop check decides the test: that match stops at its bots' next
    decision and is void (its games could not change the verdict), freeing the process,
    instead of playing its games to the end."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2,
        test=SPRT(0.0, 100.0), max_games=4000, batch=500, seed=1,
    )  # fmt: skip
    match_id = match_keys(bots, tournament_id)[0][0]  # 500 games: seconds to play
    config = Config(bot_cache=tmp_path / "cache")
    outcome: list[str] = []
    worker = threading.Thread(
        target=lambda: outcome.append(run_match(bots, match_id, config=config, sandboxed=False))
    )
    worker.start()
    deadline = time.monotonic() + 30
    while tournament_progress(bots, tournament_id)["running"] == 0:
        assert time.monotonic() < deadline, "the match was never claimed"
        time.sleep(0.01)
    started = time.monotonic()
    keep_reading(bots, tournament_id, 1, "H1 accepted", "{}")  # another's check decided
    worker.join(30)
    assert outcome == ["void"] and time.monotonic() - started < 5
    with bots.read() as session:
        match = session.get(Match, match_id)
        assert match is not None and match.status == "void" and match.result is not None
        assert match.result["void"] == "its compare's test ended while it was played"
        assert "games" not in match.result


def test_a_decided_or_refused_reading_stays_and_a_refused_one_is_not_shown(
    bots: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first reading that ends the test stays kept (a match stored just after the
    decision may read the test back to ``continue``, but the compare's pending matches are
    void already); a refused one (the games cannot give a verdict) makes the loop read the
    test itself at once, for the sentence, without waiting for a reading."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=2,
    )  # fmt: skip
    assert keep_reading(bots, tournament_id, 5, "H1 accepted", '{"decided": 1}')
    assert not keep_reading(bots, tournament_id, 6, "continue", '{"later": 1}')
    assert kept_reading(bots, tournament_id) == (5, "H1 accepted", '{"decided": 1}')
    other, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=3,
    )  # fmt: skip
    keep_reading(bots, other, 2, compares.REFUSED, "{}")
    monkeypatch.setattr(compares, "match_ids", lambda *_: [1, 2])
    monkeypatch.setattr(compares, "time", SimpleNamespace(sleep=pytest.fail, monotonic=lambda: 0.0))
    assert compares._await_kept(bots, other, 5.0, 0.02) is None


def test_a_workers_stop_checks_read_each_result_once(
    bots: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's process keeps the results its stop checks read (a done match's never
    change): each check reads only the matches done since the last, so the checks of a
    long compare do not cost more and more."""
    tournament_id, _ = create_compare(
        bots, new="ada/greedy", old="bob/first", rules=RULES, players=2, test=SPRT(0.0, 10.0),
        max_games=64, batch=4, seed=2,
    )  # fmt: skip
    loaded: list[int] = []

    def counted(store: Store, tid: int, only: list[int] | None = None) -> Any:
        loaded.extend(only or [])
        return load_results(store, tid, only=only)

    monkeypatch.setattr(compares, "load_results", counted)
    play_compare(bots, tournament_id, tmp_path / "cache", matches=6)
    assert sorted(loaded) == sorted(set(loaded)) and len(loaded) == 6  # each once
