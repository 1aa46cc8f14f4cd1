"""Live ratings (arena.service.live) on both backends: a refit booked after every done match,
at most one every interval a rule set, skipped when nothing changed, one at a time a rule set;
and a running tournament's standings counted before it finishes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from celery import Celery
from sqlalchemy import delete, func, select

from arena.compete.entrants import Entrant
from arena.compete.localrun import play_one
from arena.compete.tournaments import schedule
from arena.engine.rules import PRESETS
from arena.service.board_views import leaderboard, refit_figures, tournament_view
from arena.service.broker import INTERACTIVE_QUEUE, REFIT, using
from arena.service.live import (
    RefitPolicy,
    refit_clock,
    refit_if_changed,
    resend_stale,
    schedule_refit,
)
from arena.service.results import rating_table, refit_ratings, result_json
from arena.store import ratings as stored
from arena.store import tallies
from arena.store.compares import match_ids
from arena.store.db import Store
from arena.store.models import Match, PairRecord, RatingHistory, RuleSet, Tournament
from arena.store.queue import complete_match
from tests.service.test_results import WORKER, stored_tournament

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ENTRANTS = {"g": ("alice", "greedy"), "r": ("bob", "random"), "r2": ("carol", "random")}
POLICY = RefitPolicy(min_seconds=2.0, factor=3.0)


@dataclass
class Sent:
    """A broker client that keeps what it was asked to send (no broker in these tests)."""

    tasks: list[tuple[str, tuple[Any, ...], str, float | None]] = field(default_factory=list)

    def send_task(
        self, name: str, args: tuple[Any, ...], queue: str, countdown: float | None = None
    ) -> None:
        self.tasks.append((name, args, queue, countdown))


def _pending(store: Store, tournament_id: int) -> list[int]:
    return match_ids(store, tournament_id, "pending")


def _finish(store: Store, match_id: int, now: datetime) -> None:
    """Play a pending stored match here and store it as a worker would, at ``now``."""
    with store.read() as session:
        row = session.get(Match, match_id)
        assert row is not None
        tournament = session.get(Tournament, row.tournament_id)
        assert tournament is not None
        key, seed = row.key, tournament.seed
    scheduled = {
        m.id: m
        for m in schedule(
            "round-robin",
            [Entrant.builtin(strategy, label) for label, (_o, strategy) in ENTRANTS.items()],
            rules=PRESETS["block"],
            players=2,
            games_per_match=3,
            seed=seed,
        )
    }
    result = play_one(scheduled[key], PRESETS["block"], sandboxed=False)
    records = [game.record for game in result.games]
    assert complete_match(
        store, match_id, WORKER, records=records, result=result_json(result, WORKER), now=now
    )


def _games(store: Store, match_id: int) -> int:
    with store.read() as session:
        return int(session.scalar(select(Match.games).where(Match.id == match_id)) or 0)


#: Every match of the round robin of ENTRANTS (6: each pair in both seatings).
ALL = range(6)


@pytest.fixture
def sent() -> Iterator[Sent]:
    """What the service sends while the test runs (it is the service's broker)."""
    kept = Sent()
    with using(cast(Celery, kept)):
        yield kept


@pytest.mark.backends("sqlite", "postgresql")  # the refit's claim and lease
def test_a_done_match_books_one_refit_and_later_ones_ride_on_it(store: Store, sent: Sent) -> None:
    tournament_id, _ = stored_tournament(store, "spring", ENTRANTS, unplayed=ALL)
    first, second, third, *_ = _pending(store, tournament_id)
    games = [_games(store, match_id) for match_id in (first, second, third)]
    _finish(store, first, T0)
    # Never refitted: due at once.
    assert schedule_refit(store, first, policy=POLICY, now=T0) == 0.0
    rule_set = sent.tasks[0][1][0]
    assert sent.tasks == [(REFIT, (rule_set,), INTERACTIVE_QUEUE, None)]
    live = refit_if_changed(store, rule_set, policy=POLICY, now=T0)
    assert live.outcome == "refitted" and live.refit is not None
    assert live.refit.games == games[0]
    clock = refit_clock(store, rule_set)
    assert (clock.asked, clock.covered, clock.lease) == (1, 1, None)
    # and the tournament's page figures, fitted at its tally's version (1 done, 0 void)
    figures = tallies.stored_figures(store, tournament_id)
    assert figures is not None and figures.version == (1, 0) and figures.figures
    assert clock.seconds is not None and clock.seconds < 2.0
    # A duplicate of the task finds nothing changed, and writes nothing.
    assert refit_if_changed(store, rule_set, policy=POLICY).outcome == "unchanged"
    # The next result, 0.5 s after that refit began: booked for the interval's end.
    refitted = clock.refitted
    assert refitted is not None
    now = refitted + timedelta(seconds=0.5)
    _finish(store, second, now)
    countdown = schedule_refit(store, second, policy=POLICY, now=now)
    # the interval: 2 s, or three times the refit's own time on a loaded machine
    assert countdown is not None and countdown >= 1.5
    assert countdown == pytest.approx(POLICY.interval(clock) - 0.5)
    # One more before it is due rides on the booked refit: nothing sent.
    _finish(store, third, now)
    assert schedule_refit(store, third, policy=POLICY, now=now) is None
    assert len(sent.tasks) == 2
    assert refit_clock(store, rule_set).asked == 3
    # The booked refit covers both.
    live = refit_if_changed(store, rule_set, policy=POLICY)
    assert live.outcome == "refitted" and live.refit is not None
    assert live.refit.games == sum(games)
    figures = tallies.stored_figures(store, tournament_id)
    assert figures is not None and figures.version == (3, 0)
    assert refit_figures(store, rule_set) == 0  # none lags its tally now
    assert refit_if_changed(store, rule_set, policy=POLICY).outcome == "unchanged"
    assert sum(r.games for r in rating_table(store, rule_set)) == 2 * sum(games)


def test_the_interval_grows_with_the_refits_length() -> None:
    clock = stored.RefitClock(1, 5, 4, T0, 1.5, None, None)
    assert POLICY.interval(clock) == pytest.approx(4.5)
    assert POLICY.due(clock) == T0 + timedelta(seconds=4.5)
    assert POLICY.interval(stored.RefitClock(1, 5, 4, T0, 0.01, None, None)) == 2.0
    assert POLICY.lease(clock) == 60.0
    assert RefitPolicy.from_env({"ARENA_REFIT_SECONDS": "5"}).min_seconds == 5.0
    assert RefitPolicy.from_env({"ARENA_REFIT_FACTOR": "2"}) == RefitPolicy(factor=2.0)
    with pytest.raises(ValueError, match="ARENA_REFIT_SECONDS"):
        RefitPolicy.from_env({"ARENA_REFIT_SECONDS": "soon"})


def test_a_refit_in_flight_makes_another_wait(store: Store, sent: Sent) -> None:
    tournament_id, _ = stored_tournament(store, "spring", ENTRANTS, unplayed=[0])
    (pending,) = _pending(store, tournament_id)
    _finish(store, pending, T0)
    schedule_refit(store, pending, policy=POLICY, now=T0)
    rule_set = sent.tasks[0][1][0]
    now = datetime.now(UTC)
    # Another worker holds the rule set's lease (its refit is running).
    found = stored.claim_refit(store, rule_set, now, now + timedelta(seconds=60))
    assert found.lease is None  # the claim took it
    busy = refit_if_changed(store, rule_set, policy=POLICY, now=now)
    assert busy.outcome == "busy" and busy.retry_seconds == 2.0
    assert refit_clock(store, rule_set).covered == 0
    stored.release_refit(store, rule_set, 0.1)
    assert refit_if_changed(store, rule_set, policy=POLICY).outcome == "refitted"
    # A lease that ran out (its worker died) is taken over.
    stored.claim_refit(store, rule_set, now, now + timedelta(seconds=1))
    _finish_later = now + timedelta(seconds=5)
    assert refit_clock(store, rule_set).lease is not None
    with store.write() as session:  # one more ask, as a done match adds
        row = session.get(RuleSet, rule_set)
        assert row is not None
        row.refit_asked += 1
    assert refit_if_changed(store, rule_set, policy=POLICY, now=_finish_later).outcome == (
        "refitted"
    )


def test_a_lost_refit_is_sent_again_by_the_sweep(store: Store, sent: Sent) -> None:
    tournament_id, _ = stored_tournament(store, "spring", ENTRANTS, unplayed=[0])
    (pending,) = _pending(store, tournament_id)
    _finish(store, pending, T0)
    schedule_refit(store, pending, policy=POLICY, now=T0)  # and lost
    rule_set = sent.tasks[0][1][0]
    assert resend_stale(store, policy=POLICY, now=T0) == []
    late = T0 + timedelta(seconds=POLICY.stale_seconds + 1)
    # A refit in flight (its lease holds) is not lost: a task sent would find it busy.
    stored.claim_refit(store, rule_set, late, late + timedelta(seconds=1))
    assert resend_stale(store, policy=POLICY, now=late) == []
    assert resend_stale(store, policy=POLICY, now=late + timedelta(seconds=1)) == [rule_set]
    assert sent.tasks[-1] == (REFIT, (rule_set,), INTERACTIVE_QUEUE, None)
    refit_if_changed(store, rule_set, policy=POLICY)
    assert resend_stale(store, policy=POLICY, now=late) == []


def test_a_history_point_only_for_versions_whose_games_changed(store: Store, sent: Sent) -> None:
    tournament_id, _ = stored_tournament(store, "spring", ENTRANTS, unplayed=[4])
    (pending,) = _pending(store, tournament_id)
    refit_ratings(store, PRESETS["block"])
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(RatingHistory)) == 3
    refit_ratings(store, PRESETS["block"])  # nothing new: no new point
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(RatingHistory)) == 3
    _finish(store, pending, T0)
    schedule_refit(store, pending, policy=POLICY, now=T0)
    refit_if_changed(store, sent.tasks[0][1][0], policy=POLICY)
    with store.read() as session:  # the last match seated two of the three
        assert session.scalar(select(func.count()).select_from(RatingHistory)) == 5
    # Only the changed pairs were rewritten, and the rows are those a full rewrite gives.
    kept = _pair_rows(store)
    with store.write() as session:
        session.execute(delete(PairRecord))
    refit_ratings(store, PRESETS["block"])
    assert _pair_rows(store) == kept and len(kept) == 6


def _pair_rows(store: Store) -> set[tuple[int, ...]]:
    with store.read() as session:
        return {
            tuple(row)
            for row in session.execute(
                select(
                    PairRecord.rule_set_id, PairRecord.bot_version_id,
                    PairRecord.opponent_version_id, PairRecord.games, PairRecord.wins,
                    PairRecord.draws, PairRecord.losses,
                )
            )
        }  # fmt: skip


def test_a_running_tournaments_standings_and_the_leaderboard_follow_its_results(
    store: Store, sent: Sent
) -> None:
    tournament_id, _ = stored_tournament(store, "spring", ENTRANTS, unplayed=ALL)
    pending = _pending(store, tournament_id)
    assert tournament_view(store, "spring").standings[0].games == 0
    assert leaderboard(store, "block").rows == []
    played = 0
    for match_id in pending[:2]:
        _finish(store, match_id, T0)
        played += _games(store, match_id)
        schedule_refit(store, match_id, policy=RefitPolicy(min_seconds=0.0))
        view = tournament_view(store, "spring")
        assert not view.done  # still playing (its status: no worker claimed here)
        assert sum(row.games for row in view.standings) == 2 * played
        refit_if_changed(store, sent.tasks[-1][1][0], policy=POLICY)
        board = leaderboard(store, "block")
        assert sum(row.games for row in board.rows) == 2 * played
    for match_id in pending[2:]:
        _finish(store, match_id, T0)
    assert tournament_view(store, "spring").done
