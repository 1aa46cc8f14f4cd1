"""Game records at rest (arena.store.records, migration 0024): stored as compact bytes and
read back by every reader exactly as given (the keys' order included), and the conversion
of a database that holds them as JSON, stopped and resumed, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import inspect, select, text

from arena import find_rules
from arena.cli.main import cli
from arena.engine.branch import branch_game, branch_record
from arena.engine.codec import CODEC_VERSION, FALLBACK, decode
from arena.engine.events import Termination
from arena.engine.records import game_record
from arena.engine.rules import Rules, rules_from_record
from arena.match.play import play_games
from arena.match.players import InProcessPlayer, Player, StrategyPlayer
from arena.match.referee import play_match
from arena.store.branches import branch_inputs
from arena.store.db import Store, connect, upgrade
from arena.store.games import game_summary
from arena.store.models import Branch, GameRecord, Match, Tournament
from arena.store.queue import complete_match
from arena.store.ratings import finished_matches, tournament_records
from arena.store.records import convert_records, load_records, unconverted_records
from tests.engine.test_codec import SETUPS, as_json, forfeited_record, random_game, version_1
from tests.paths import ZOO
from tests.rawsql import insert_row

T = "2026-11-01 12:00:00"
CUSTOM = rules_from_record("house", find_rules("block").params() | {"target": 50})


def _records() -> list[dict[str, Any]]:
    """Every kind of record: each preset, player count and team play; a custom rule set
    and a preset with an override; forfeits with stderr tails, timed and not; the
    referee's timed records; version 1; a branch; and JSON that is no record at all."""
    records = []
    for name, players, teams in SETUPS:
        names = ["greedy", "random", "greedy", "random"][:players]
        (game,) = play_games(find_rules(name), names, games=1, seed=players, teams=teams)
        records.append(as_json(game_record(game, names)))
    for rules in (CUSTOM, find_rules("draw", target=60)):
        records.append(as_json(game_record(random_game(rules, 3, 4), ["a", "b", "c"])))
    records.append(forfeited_record(2, Termination.TIMEOUT, timed=True))
    records.append(forfeited_record(1, Termination.CRASH, timed=False))
    seated: list[Player] = [InProcessPlayer(ZOO / "illegal.py"), StrategyPlayer("greedy")]
    for outcome in play_match(find_rules("draw"), seated, games=2, seed=3):
        verdict = None if outcome.verdict is None else outcome.verdict.to_dict()
        record = game_record(
            outcome.game, ["illegal", "greedy"], verdict=verdict, times=outcome.times
        )
        records.append(as_json(record))
    records.append(version_1(forfeited_record(3, Termination.ILLEGAL_MOVE, timed=True)))
    records.append(
        version_1(as_json(game_record(random_game(find_rules("wooden"), 3, 2), list("abc"))))
    )
    original = as_json(game_record(random_game(find_rules("draw"), 2, 8), ["a", "b"]))
    game = branch_game(original, 2, 3)
    rng = random.Random(2)
    while not game.is_terminal() and len(game.rounds) == 2:
        game.apply(rng.choice(game.legal_moves()))
    records.append(
        as_json(branch_record(original, game, ["c", "d"], round_number=2, turn=3, seed=4))
    )
    records.append({"not": "a record", "n": [1.5, None, True, "é"]})
    return records


RECORDS = _records()


def _match(store: Store, rules: Rules, name: str = "t") -> tuple[int, int]:
    """A tournament of ``rules`` with one pending match: (tournament id, match id)."""
    rule_set = store.ensure_rule_set(rules)
    with store.write() as session:
        tournament = Tournament(
            name=name, format="round-robin", rule_set_id=rule_set.id, players=2,
            games_per_match=len(RECORDS), seed=1,
        )  # fmt: skip
        session.add(tournament)
        session.flush()
        match = Match(tournament_id=tournament.id, key="a-b", seats=[1, 2], games=2, seed=7)
        session.add(match)
        session.flush()
        return tournament.id, match.id


def _result(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"games": [{"index": index} for index in range(len(records))]}


def _every_reader(store: Store, tournament_id: int, match_id: int) -> list[list[dict[str, Any]]]:
    """The records as each reader gets them: the export, the ratings' margins, one game's
    page (and the API), a branch's worker."""
    count = len(RECORDS)
    found = finished_matches(store, tournament_id, records=True).records
    pages = [game_summary(store, match_id, index) for index in range(count)]
    user = store.add_user("alice").id
    with store.write() as session:
        branches = [
            Branch(
                match_id=match_id, game_index=i, round_number=1, turn=0, seats=[1, 2], times=1,
                seed=1, requested_by=user,
            )
            for i in range(count)
        ]  # fmt: skip
        session.add_all(branches)
        session.flush()
        ids = [branch.id for branch in branches]
    return [
        list(tournament_records(store, tournament_id)),
        [found[match_id, index] for index in range(count)],
        [page.record if page is not None and page.record else {} for page in pages],
        [_branch_record(store, branch) for branch in ids],
    ]


def _branch_record(store: Store, branch_id: int) -> dict[str, Any]:
    inputs = branch_inputs(store, branch_id)
    assert inputs is not None and inputs.record is not None
    return inputs.record


def _assert_identical(readings: list[list[dict[str, Any]]]) -> None:
    for reading in readings:
        assert len(reading) == len(RECORDS)
        for got, stored in zip(reading, RECORDS, strict=True):
            # byte for byte, the keys' order too (an export writes them unsorted)
            assert json.dumps(got) == json.dumps(stored)


def test_every_reader_gets_every_kind_of_record_back_as_stored(url: str) -> None:
    """Stored through the queue (a worker's completion), the records rest as compact
    bytes (the custom rule set by its digest, from the rule_sets table) and come back
    identical through every reader, also from another process's store (no cache)."""
    store = connect(url)
    try:
        tournament_id, match_id = _match(store, CUSTOM)
        assert complete_match(store, match_id, "w", records=RECORDS, result=_result(RECORDS))
        with store.read() as session:
            rows = session.execute(
                select(GameRecord.data, GameRecord.record).order_by(GameRecord.game_index)
            ).all()
        assert all(record is None for _, record in rows)
        kinds = [data[0] for data, _ in rows]
        assert kinds[:-1] == [CODEC_VERSION] * (len(RECORDS) - 1) and kinds[-1] == FALLBACK
        custom = rows[len(SETUPS)][0]
        with pytest.raises(Exception, match=f"names rule set {CUSTOM.version}"):
            decode(custom)  # by digest: the rule_sets table's
        assert max(len(data) for data, _ in rows[: len(SETUPS)]) < 400
    finally:
        store.close()
    fresh = connect(url)
    try:
        _assert_identical(_every_reader(fresh, tournament_id, match_id))
    finally:
        fresh.close()


def _at_0023(url: str, rules: Rules, records: list[dict[str, Any]]) -> tuple[int, int]:
    """A database at revision 0023 with one done match of ``records``, stored as JSON as
    0023 stored them: (tournament id, match id)."""
    upgrade(url, "0023")
    store = connect(url)
    try:
        with store.write() as session:
            rule_set = insert_row(
                session, "rule_sets", name=rules.name, version=rules.version,
                params=json.dumps(rules.params()), is_preset=False,
            )  # fmt: skip
            tournament = insert_row(
                session, "tournaments", name="t", format="round-robin", rule_set_id=rule_set,
                players=2, teams=False, games_per_match=len(records), seed=1, status="done",
                created=T,
            )  # fmt: skip
            match = insert_row(
                session, "matches", tournament_id=tournament, key="a-b", seats="[1, 2]",
                games=len(records), seed=7, status="done", attempts=1,
                result=json.dumps(_result(records)), created=T, finished=T,
            )  # fmt: skip
            for index, record in enumerate(records):
                session.execute(
                    text(
                        "INSERT INTO game_records (match_id, game_index, record) "
                        "VALUES (:match, :index, :record)"
                    ),
                    {"match": match, "index": index, "record": json.dumps(record)},
                )
        return tournament, match
    finally:
        store.close()


class StoppedError(Exception):
    """What the test's progress callback raises to stop a conversion mid-way."""


@pytest.mark.backends("sqlite", "postgresql")
@pytest.mark.empty_database
def test_a_living_database_converts_stopped_and_resumed_without_losing_a_game(url: str) -> None:
    """A database at 0023 with JSON records: upgraded, converted two rows a batch and
    stopped after two batches (readers meanwhile get every record, half converted),
    resumed to the end, then nothing left to do; every record identical throughout."""
    tournament_id, match_id = _at_0023(url, CUSTOM, RECORDS)
    upgrade(url)
    store = connect(url)
    try:
        column = {c["name"]: c for c in inspect(store.engine).get_columns("game_records")}
        binary = "BYTEA" if store.dialect == "postgresql" else "BLOB"
        assert str(column["data"]["type"]) == binary and column["record"]["nullable"]
        assert unconverted_records(store) == len(RECORDS)
        batches: list[int] = []

        def stop_after_two(count: int) -> None:
            batches.append(count)
            if len(batches) == 2:
                raise StoppedError

        with pytest.raises(StoppedError):
            convert_records(store, batch=2, progress=stop_after_two)
        assert unconverted_records(store) == len(RECORDS) - 4
        _assert_identical([list(tournament_records(store, tournament_id))])
        done = convert_records(store, batch=2)
        assert done.converted == len(RECORDS) - 4 and done.compact_bytes * 10 < done.json_bytes
        assert unconverted_records(store) == 0
        assert convert_records(store).converted == 0
        with store.read() as session:
            assert (
                session.scalar(text("SELECT count(*) FROM game_records WHERE record IS NOT NULL"))
                == 0
            )
            assert [r for _, _, r in load_records(store, session)] == RECORDS
    finally:
        store.close()
    fresh = connect(url)  # the custom rule set looked up while the records stream
    try:
        _assert_identical(_every_reader(fresh, tournament_id, match_id))
    finally:
        fresh.close()


@pytest.mark.empty_database
def test_arena_db_upgrade_converts_and_says_how_to_give_the_space_back(url: str) -> None:
    _at_0023(url, find_rules("draw"), RECORDS[:5] * 4)
    result = CliRunner().invoke(cli, ["db", "upgrade", "--url", url])
    assert result.exit_code == 0, result.output
    assert "converting 20 game records to compact bytes" in result.output
    assert "20 game records converted in" in result.output
    assert "stop the server and run `sqlite3" in result.output and "VACUUM" in result.output
    again = CliRunner().invoke(cli, ["db", "upgrade", "--url", url])
    assert again.exit_code == 0 and "converting" not in again.output
