"""Retention (arena.service.retention, arena.store.retention): pruning deletes the game
records the limits no longer keep, the oldest first, in bounded batches; it keeps the
newest (by days, by games a tournament), finals' (current and replaced), assignments'
gauntlets' and branched games' records forever; results, standings and ratings do not
change; a second pruning finds nothing; the workers' sweep prunes; bad settings are
refused with a sentence. Real (built-in) games, played once per test process."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, func, select, update

from arena.engine.rules import PRESETS
from arena.errors import RecordPruned
from arena.service.broker import make_app, using
from arena.service.games import GameFilter, game_list, game_record
from arena.service.matches import Config
from arena.service.results import load_results, rating_table, refit_ratings
from arena.service.retention import (
    KEEP_DAYS_ENV,
    KEEP_GAMES_ENV,
    RetentionPolicy,
    prune_records,
    pruned_note,
)
from arena.service.work import sweep_all
from arena.store import assignments as assignment_rows
from arena.store.db import Store
from arena.store.models import (
    Branch,
    Competition,
    GameRecord,
    Match,
    SchoolClass,
    Submission,
    SubmissionTest,
    User,
)
from tests.service.ladder_fixtures import make_competition
from tests.service.test_results import stored_tournament

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
RULES = PRESETS["block"]
ENTRANTS = {"a": ("ann", "random"), "b": ("bob", "greedy"), "c": ("cy", "random")}
PAIR = {"a": ("ann", "random"), "b": ("bob", "greedy")}
GAMES = 2  # a pair's: a match of one game a seating in a round robin of three


def build_played(store: Store, directory: Path) -> dict[str, Any]:
    """Tournaments played here, every match finished long ago but ``plain``'s newest:
    ``plain`` (a round robin of three: its matches a day apart, the last one yesterday; a
    branch taken from its first), a competition's ``final`` (two matches of two games), a
    final a rerun replaced (``earlier``) and an assignment's gauntlet (``gauntlet``), two
    matches of a game each."""
    ids: dict[str, Any] = {}
    for name, entrants, games in (
        ("plain", ENTRANTS, GAMES), ("final", PAIR, 2 * GAMES), ("earlier", PAIR, GAMES),
        ("gauntlet", PAIR, GAMES),
    ):  # fmt: skip
        ids[name], _ = stored_tournament(store, name, entrants, rules=RULES, games=games)
    competition, versions = make_competition(
        store, "cup", ["dora", "eve"], opens=NOW - timedelta(days=60),
        deadline=NOW - timedelta(days=40), rules="block",
    )  # fmt: skip
    with store.write() as session:
        plain = list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == ids["plain"]).order_by(Match.id)
            )
        )
        for n, match_id in enumerate(plain):  # a day apart, the newest yesterday
            finished = NOW - timedelta(days=len(plain) - n)
            session.execute(update(Match).where(Match.id == match_id).values(finished=finished))
        session.execute(
            update(Match)
            .where(Match.tournament_id != ids["plain"])
            .values(finished=NOW - timedelta(days=30))
        )
        session.execute(
            update(Competition)
            .where(Competition.id == competition)
            .values(
                status="done",  # the clock leaves it be
                final_id=ids["final"],
                earlier_finals=[{"number": 1, "tournament": "earlier"}],
            )
        )
        user = session.scalar(select(User.id).where(User.name == "ann"))
        assert user is not None
        school = SchoolClass(name="5b", rule_sets=["block"], settings={})
        session.add(school)
        session.flush()
        session.add(
            Branch(match_id=plain[0], game_index=0, round_number=1, turn=0,
                   seats=list(versions.values()), times=1, seed=1, requested_by=user)
        )  # fmt: skip
    assignment = assignment_rows.insert_assignment(
        store, class_id=school.id, name="hw", rules=RULES, values={
            "settings": {}, "references": [], "grades": [{"grade": "F", "beats": []}],
            "opens": NOW - timedelta(days=60), "deadline": NOW, "seed": 1,
        },
    )  # fmt: skip
    submission = assignment_rows.insert_submission(
        store, assignment, user, upload_id=None, version_id=None, late=False
    )
    with store.write() as session:
        session.add(  # settled: the sweep leaves it be
            SubmissionTest(
                submission_id=submission, reference="r", tournament_id=ids["gauntlet"],
                verdict="pass",
            )
        )  # fmt: skip
        session.execute(
            update(Submission).where(Submission.id == submission).values(status="graded")
        )
    ids["plain_matches"] = plain
    return ids


pytestmark = pytest.mark.seed(build=build_played)


def _records(store: Store) -> dict[int, int]:
    """Game records stored, by match id."""
    with store.read() as session:
        rows = session.execute(
            select(GameRecord.match_id, func.count()).group_by(GameRecord.match_id)
        ).all()
    return {match_id: count for match_id, count in rows}


def _matches(store: Store, tournament_id: int) -> list[int]:
    with store.read() as session:
        return list(
            session.scalars(
                select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)
            )
        )


def _ratings(store: Store) -> list[tuple[int, float, float, float, int, int]]:
    return [
        (r.bot_version_id, r.rating, r.low, r.high, r.games, r.rank)
        for r in rating_table(store, RULES)
    ]


@pytest.mark.backends("sqlite", "postgresql")  # the prune's queries and deletes on both
def test_the_days_limit_keeps_the_window_and_what_is_kept_forever(
    store: Store, seeded: dict[str, Any]
) -> None:
    plain = seeded["plain_matches"]
    forever = [
        m for name in ("final", "earlier", "gauntlet") for m in _matches(store, seeded[name])
    ]
    refit_ratings(store, RULES)
    ratings = _ratings(store)
    results = {name: load_results(store, seeded[name]) for name in ("plain", "final", "gauntlet")}
    before = _records(store)
    assert set(before) == set(plain) | set(forever)

    report = prune_records(store, RetentionPolicy(keep_days=2.5), now=NOW)

    # the newest two (1 and 2 days old) kept; the first kept for its branch; the rest gone
    kept = {plain[0], *plain[-2:], *forever}
    assert _records(store) == {m: before[m] for m in kept}
    gone = set(plain) - kept
    assert gone and report.matches == len(gone)
    assert report.records == sum(before[m] for m in gone)
    with store.read() as session:
        stamped = dict(session.execute(select(Match.id, Match.records_pruned)).all())
    assert {m for m, when in stamped.items() if when is not None} == gone
    # results, standings and ratings: as they were
    assert {name: load_results(store, seeded[name]) for name in results} == results
    refit_ratings(store, RULES, now=NOW + timedelta(hours=1))
    assert _ratings(store) == ratings
    # a second pruning finds nothing more
    assert prune_records(store, RetentionPolicy(keep_days=2.5), now=NOW) == type(report)()
    assert set(_records(store)) == kept


@pytest.mark.backends("sqlite", "postgresql")  # the grouping by tournament on both
def test_the_games_limit_keeps_each_tournaments_newest_games(
    store: Store, seeded: dict[str, Any]
) -> None:
    plain = seeded["plain_matches"]  # a game each (a pair's games: a match a seating)
    prune_records(store, RetentionPolicy(keep_games=2), now=NOW)
    stored = _records(store)
    # the newest two matches hold the newest two games; the branched first one stays
    assert {m for m in plain if m in stored} == {plain[0], *plain[-2:]}
    for name in ("final", "earlier", "gauntlet"):  # one match of two games each: kept
        assert set(_matches(store, seeded[name])) <= set(stored)
    assert prune_records(store, RetentionPolicy(keep_games=2), now=NOW).records == 0
    prune_records(store, RetentionPolicy(keep_games=1), now=NOW)
    assert {m for m in plain if m in _records(store)} == {plain[0], plain[-1]}


def test_both_limits_each_bound_what_is_kept(store: Store, seeded: dict[str, Any]) -> None:
    plain = seeded["plain_matches"]
    # the days keep the newest two, the games the newest one: the newest one is kept
    prune_records(store, RetentionPolicy(keep_days=2.5, keep_games=1), now=NOW)
    assert {m for m in plain if m in _records(store)} == {plain[0], plain[-1]}


def test_a_big_prune_goes_in_batches_bounded_a_sweep(store: Store, seeded: dict[str, Any]) -> None:
    with store.write() as session:  # forget the branch: every plain match may go
        session.execute(delete(Branch))
    plain = seeded["plain_matches"]
    assert len(plain) == 6
    policy = RetentionPolicy(keep_days=0.5, batch_records=2, sweep_records=4)
    first = prune_records(store, policy, now=NOW)
    assert (first.matches, first.records, first.batches) == (4, 4, 2)
    assert set(plain[:4]).isdisjoint(_records(store))  # the oldest first
    second = prune_records(store, policy, now=NOW)
    assert (second.matches, second.records, second.batches) == (2, 2, 1)
    assert prune_records(store, policy, now=NOW) == type(first)()
    assert set(plain).isdisjoint(_records(store))


def test_matches_of_several_games_go_whole(store: Store, seeded: dict[str, Any]) -> None:
    final = _matches(store, seeded["final"])  # two matches of two games, finished at once
    with store.write() as session:  # no longer a final: the limits apply
        session.execute(update(Competition).values(final_id=None))
        session.execute(
            update(Match).where(Match.id == final[1]).values(finished=NOW - timedelta(days=29))
        )
    # the newest match holds 2 of the newest 3 games: the one crossing the count stays whole
    prune_records(store, RetentionPolicy(keep_games=3), now=NOW)
    assert set(final) <= set(_records(store))
    # a match bigger than a batch, and than a sweep's bound, is a batch of its own
    policy = RetentionPolicy(keep_days=29.5, batch_records=1, sweep_records=1)
    report = prune_records(store, policy, now=NOW)
    assert (report.matches, report.records, report.batches) == (1, 2, 1)
    assert final[0] not in _records(store) and final[1] in _records(store)
    prune_records(store, RetentionPolicy(keep_games=2), now=NOW)
    assert final[1] in _records(store)  # it holds the newest 2


def test_a_pruned_game_says_so_and_a_never_stored_one_is_not_found(
    store: Store, seeded: dict[str, Any]
) -> None:
    plain = seeded["plain_matches"]
    prune_records(store, RetentionPolicy(keep_days=1.5), now=NOW)
    with pytest.raises(
        RecordPruned,
        match=rf"^record pruned: the record of game 0 of match {plain[1]} was deleted on "
        r"2026-06-01 by this deployment's retention",
    ):
        game_record(store, plain[1], 0)
    assert game_record(store, plain[-1], 0) is not None
    assert game_record(store, plain[1], 9) is None  # no such game
    listed = {(r.match_id, r.record_pruned) for r in game_list(store, GameFilter()).rows}
    assert (plain[1], True) in listed and (plain[-1], False) in listed
    with store.write() as session:  # a record never stored (not pruned): not found
        session.execute(delete(GameRecord).where(GameRecord.match_id == plain[-1]))
    assert game_record(store, plain[-1], 0) is None
    note = pruned_note(store, [seeded["plain"]])
    assert note is not None and "the game records of 4 matches' are not in" in note
    assert pruned_note(store, [seeded["final"]]) is None


def test_the_workers_sweep_prunes(
    store: Store, seeded: dict[str, Any], url: str, tmp_path: Path
) -> None:
    config = Config(retention=RetentionPolicy(keep_days=2.5))
    with using(make_app(f"filesystem://{tmp_path / 'broker'}", config, url)):
        first = sweep_all(store, config)  # the clock's now: every plain match is days old
        assert first.pruned > 0
        assert sweep_all(store, config).pruned == 0
        assert sweep_all(store, Config()).pruned == 0  # no limit: nothing to do


def test_the_settings_are_read_and_bad_ones_refused_with_a_sentence() -> None:
    assert not RetentionPolicy.from_env({}).active
    assert not RetentionPolicy.from_env({KEEP_DAYS_ENV: "", KEEP_GAMES_ENV: " "}).active
    policy = RetentionPolicy.from_env({KEEP_DAYS_ENV: "30", KEEP_GAMES_ENV: "5000"})
    assert (policy.keep_days, policy.keep_games) == (30.0, 5000)
    assert Config.from_env({KEEP_DAYS_ENV: "0.5"}).retention.keep_days == 0.5
    for name, raw in (
        (KEEP_DAYS_ENV, "0"), (KEEP_DAYS_ENV, "-3"), (KEEP_DAYS_ENV, "a month"),
        (KEEP_DAYS_ENV, "inf"), (KEEP_GAMES_ENV, "0"), (KEEP_GAMES_ENV, "2.5"),
        (KEEP_GAMES_ENV, "many"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=rf"^{name} must be .* not {raw!r}$"):
            Config.from_env({name: raw})
