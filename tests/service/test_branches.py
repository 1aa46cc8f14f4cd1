"""What-if branches asked from the web (arena/service/branches.py), on both databases: each
bad request refused with its own sentence, the bots an account may seat, the cap on
branches waiting; played as a worker plays them (records that verify, the original's
prefix kept, N repetitions; a bot's fault is a result, a harness failure fails the branch);
lost and stale tasks found again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from arena.engine.codec import encode
from arena.engine.records import verify_record
from arena.engine.rules import PRESETS
from arena.match.sandbox import SandboxUnavailable
from arena.service.accounts import Account
from arena.service.bots import set_source_public
from arena.service.branches import (
    MAX_TIMES,
    MAX_WAITING,
    BranchError,
    bot_choices,
    branch_point,
    branch_view,
    create_branch,
    mark_branches_sent,
    run_branch,
    start_step,
    unsent_branches,
)
from arena.service.games import game_record
from arena.service.matches import Config, create_stored_tournament, run_match
from arena.store.db import Store
from arena.store.models import Bot, BotVersion, GameRecord, Match, User
from arena.store.models import Branch as BranchRow
from tests.paths import REFERENCE_BOTS, ZOO

RULES = PRESETS["draw"].with_overrides(target=40)


def _account(store: Store, name: str, role: str = "user") -> Account:
    user = store.add_user(name)
    return Account(user.id, name, role, 0)


def _version(store: Store, label: str) -> int:
    owner, rest = label.split("/")
    name, number = rest.split("@v")
    with store.read() as session:
        found = session.scalar(
            select(BotVersion.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(User.name == owner, Bot.name == name, BotVersion.version == int(number))
        )
    assert found is not None, label
    return found


def _world(store: Store, tmp_path: Path) -> dict[str, Any]:
    """alice (greedy v1, v2), bob (counter, private), carol (fives, public), mallory
    (raiser, public: it crashes at its third move), the reference random; a played game of
    random against greedy v1 (match 1, game 0). Built once per test process
    (tests/conftest.py's seed marker)."""
    accounts = {
        name: _account(store, name, "admin" if name == "root" else "user")
        for name in ("alice", "bob", "carol", "mallory", "root")
    }
    source = (REFERENCE_BOTS / "greedy.py").read_text()
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    store.add_bot_version("alice", "greedy", source, {})
    store.add_bot_version("alice", "greedy", source + "\n# v2\n", {})
    store.add_bot_version("bob", "counter", (REFERENCE_BOTS / "counter.py").read_text(), {})
    store.add_bot_version("carol", "fives", (REFERENCE_BOTS / "fives.py").read_text(), {})
    store.add_bot_version("mallory", "raiser", (ZOO / "raise_in_move.py").read_text(), {})
    with store.read() as session:
        public = list(session.scalars(select(Bot.id).where(Bot.name.in_(("fives", "raiser")))))
    for bot_id in public:
        set_source_public(store, bot_id, True)
    create_stored_tournament(
        store,
        name="spring",
        rules=RULES,
        format="round-robin",
        entrants=["reference/random", "alice/greedy@1"],
        games_per_match=1,
        seed=11,
    )
    config = Config(bot_cache=tmp_path / "cache")
    assert run_match(store, 1, config=config, sandboxed=False) == "done"
    found = game_record(store, 1, 0)
    assert found is not None
    record = found.record
    assert len(record["rounds"]) >= 2, "the test wants a game of several rounds"
    return {"accounts": accounts, "record": record}


pytestmark = pytest.mark.seed(build=_world)


@pytest.fixture
def world(store: Store, tmp_path: Path, seeded: dict[str, Any]) -> dict[str, Any]:
    """:func:`_world`'s accounts and game record (copies the test may change), a bot cache,
    and bot versions' ids by label."""
    return {
        "accounts": seeded["accounts"],
        "config": Config(bot_cache=tmp_path / "cache"),
        "record": seeded["record"],
        "v": lambda label: _version(store, label),
    }


def _plays(record: dict[str, Any], round_number: int) -> int:
    return sum(e["type"] == "play" for e in record["rounds"][round_number - 1]["events"])


def test_each_account_may_seat_its_own_the_reference_and_public_bots(
    store: Store, world: dict[str, Any]
) -> None:
    alice, root = world["accounts"]["alice"], world["accounts"]["root"]
    mine = [(c.label, c.kind) for c in bot_choices(store, alice)]
    assert mine == [
        ("alice/greedy@v2", "yours"),
        ("alice/greedy@v1", "yours"),
        ("reference/random@v1", "reference"),
        ("carol/fives@v1", "public"),
        ("mallory/raiser@v1", "public"),
    ]
    everything = {c.label: c.kind for c in bot_choices(store, root)}
    assert everything["bob/counter@v1"] == "other" and len(everything) == 6


def test_the_branch_point_of_a_viewer_state(world: dict[str, Any]) -> None:
    record = world["record"]
    events = record["rounds"][0]["events"]
    plays = [k for k, e in enumerate(events) if e["type"] == "play"]
    assert branch_point(record, 1, 0) == (0, 0)
    assert branch_point(record, 1, plays[1] + 1) == (2, plays[2])
    for step in range(len(events) + 1):
        turn, start = branch_point(record, 1, step)
        assert turn == sum(1 for k in plays if k < step)
        assert start == start_step(record, 1, turn) >= step or start == len(events)
    assert branch_point(record, 1, len(events)) == (len(plays), len(events))
    with pytest.raises(BranchError, match="step 999 is out of range"):
        branch_point(record, 1, 999)
    beyond = len(record["rounds"]) + 1
    with pytest.raises(BranchError, match=f"round {beyond} is out of range"):
        branch_point(record, beyond, 0)


Refusal = Callable[[dict[str, Any]], dict[str, Any]]

REFUSALS: list[tuple[str, Refusal, str]] = [
    ("no game", lambda w: {"match_id": 99}, "no stored game 0 of match 99"),
    ("round", lambda w: {"round_number": 99}, "round 99 is out of range: the game has rounds 1 to"),
    ("turn", lambda w: {"turn": 999}, "turn 999 is out of range: round 1 has"),
    (
        "round over",
        lambda w: {"turn": _plays(w["record"], 1)},
        "round 1 is over after its .* plays: choose a turn from 0 to",
    ),
    (
        "seats",
        lambda w: {"seats": [w["v"]("alice/greedy@v2")]},
        "choose one bot for each of the game's 2 seats, not 1",
    ),
    (
        "unknown bot",
        lambda w: {"seats": [w["v"]("alice/greedy@v2"), 9999]},
        "seat 1: no bot version 9999 is stored",
    ),
    (
        "private bot",
        lambda w: {"seats": [w["v"]("bob/counter@v1"), w["v"]("alice/greedy@v2")]},
        "seat 0: you may not choose bob/counter@v1: choose one of your bots, a reference bot, "
        "or a bot whose source is public",
    ),
    ("no repetition", lambda w: {"times": 0}, f"the repetitions must be 1 to {MAX_TIMES}, not 0"),
    (
        "too many",
        lambda w: {"times": MAX_TIMES + 1},
        f"the repetitions must be 1 to {MAX_TIMES}, not {MAX_TIMES + 1}",
    ),
]


@pytest.mark.parametrize(("what", "change", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_each_bad_request_is_refused_with_its_sentence(
    store: Store, world: dict[str, Any], what: str, change: Refusal, message: str
) -> None:
    v = world["v"]
    request: dict[str, Any] = {
        "match_id": 1,
        "index": 0,
        "round_number": 1,
        "turn": 2,
        "seats": [v("reference/random@v1"), v("carol/fives@v1")],
        "times": 3,
    }
    request.update(change(world))
    with pytest.raises(BranchError, match=message):
        create_branch(store, world["accounts"]["alice"], **request)
    with store.read() as session:
        assert session.scalar(select(BranchRow.id)) is None  # nothing stored


def test_a_record_that_does_not_verify_is_refused(store: Store, world: dict[str, Any]) -> None:
    record = dict(world["record"])
    rounds = [dict(r) for r in record["rounds"]]
    hands = [list(h) for h in rounds[0]["deal"]["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    rounds[0]["deal"] = {**rounds[0]["deal"], "hands": hands}
    record["rounds"] = rounds
    with store.write() as session:
        session.execute(update(GameRecord).values(data=encode(record)))
    seats = [world["v"]("reference/random@v1")] * 2
    with pytest.raises(BranchError, match="the record does not verify up to round 1, turn 2"):
        create_branch(store, world["accounts"]["alice"], 1, 0, 1, 2, seats, 1)


def test_admins_may_seat_any_bot(store: Store, world: dict[str, Any]) -> None:
    seats = [world["v"]("bob/counter@v1"), world["v"]("alice/greedy@v1")]
    branch = create_branch(store, world["accounts"]["root"], 1, 0, 1, 0, seats, 1)
    view = branch_view(store, branch)
    assert view is not None and view.seats == ("bob/counter@v1", "alice/greedy@v1")


def test_at_most_a_few_branches_wait_per_account(store: Store, world: dict[str, Any]) -> None:
    alice, carol = world["accounts"]["alice"], world["accounts"]["carol"]
    seats = [world["v"]("reference/random@v1")] * 2
    made = [create_branch(store, alice, 1, 0, 1, turn, seats, 1) for turn in range(MAX_WAITING)]
    with pytest.raises(BranchError, match=f"you have {MAX_WAITING} branches waiting"):
        create_branch(store, alice, 1, 0, 1, 0, seats, 1)
    create_branch(store, carol, 1, 0, 1, 0, seats, 1)  # another account's count
    assert run_branch(store, made[0], config=world["config"], sandboxed=False) == "done"
    create_branch(store, alice, 1, 0, 1, 0, seats, 1)  # one is done: room for one more


def test_a_branch_played_as_a_worker_plays_it(store: Store, world: dict[str, Any]) -> None:
    """Four repetitions from round 2 after 3 plays: four records that verify, each with the
    original's first round and round 2's deal and first plays, its bots seeded apart; the
    page's outcomes and summary; running it again changes nothing."""
    v, record = world["v"], world["record"]
    seats = [v("alice/greedy@v2"), v("reference/random@v1")]
    branch = create_branch(store, world["accounts"]["alice"], 1, 0, 2, 3, seats, 4, seed=5)
    pending = branch_view(store, branch)
    assert pending is not None and pending.status == "pending" and pending.waiting
    assert pending.repetitions == () and pending.records == ()
    assert run_branch(store, branch, config=world["config"], sandboxed=False) == "done"
    view = branch_view(store, branch)
    assert view is not None and view.status == "done" and not view.waiting
    assert len(view.records) == 4 and len(view.repetitions) == 4
    start = start_step(record, 2, 3)
    assert view.start_step == start
    seeds = set()
    for k, data in enumerate(view.records):
        assert verify_record(data) == [], k
        assert data["rounds"][0] == record["rounds"][0]
        assert len(data["rounds"]) == 2
        assert data["rounds"][1]["deal"] == record["rounds"][1]["deal"]
        assert data["rounds"][1]["events"][:start] == record["rounds"][1]["events"][:start]
        assert data["seats"] == ["alice/greedy@v2", "reference/random@v1"]
        assert data["branch"]["round"] == 2 and data["branch"]["turn"] == 3
        assert data["branch"]["source"] == "match 1 game 0"
        seeds.add(data["branch"]["seed"])
    assert len(seeds) == 4
    assert view.original.points == tuple(record["rounds"][1]["result"]["points"])
    assert sum(s.wins for s in view.summary) <= 4
    assert [s.label for s in view.summary] == [
        "seat 0 (alice/greedy@v2)",
        "seat 1 (reference/random@v1)",
    ]
    for side, summary in enumerate(view.summary):
        points = [r.points[side] for r in view.repetitions if r.points]
        assert summary.mean_points == pytest.approx(sum(points) / 4)
    assert run_branch(store, branch, config=world["config"], sandboxed=False) == "done"
    again = branch_view(store, branch)
    assert again is not None and again.records == view.records


def test_a_branch_in_the_sandbox(store: Store, world: dict[str, Any]) -> None:
    seats = [world["v"]("carol/fives@v1"), world["v"]("alice/greedy@v1")]
    branch = create_branch(store, world["accounts"]["alice"], 1, 0, 1, 1, seats, 2)
    assert run_branch(store, branch, config=world["config"]) == "done"
    view = branch_view(store, branch)
    assert view is not None and len(view.records) == 2
    assert all(verify_record(data) == [] for data in view.records)


def test_a_bot_fault_is_part_of_the_result(store: Store, world: dict[str, Any]) -> None:
    seats = [world["v"]("mallory/raiser@v1"), world["v"]("reference/random@v1")]
    branch = create_branch(store, world["accounts"]["alice"], 1, 0, 1, 0, seats, 2)
    assert run_branch(store, branch, config=world["config"], sandboxed=False) == "done"
    view = branch_view(store, branch)
    assert view is not None and view.status == "done"
    faulted = [r for r in view.repetitions if r.forfeit is not None]
    assert faulted and faulted[0].text == "seat 0 (mallory/raiser@v1) forfeited: crash"
    assert faulted[0].points is None
    assert view.summary[0].forfeits == len(faulted)
    assert all(verify_record(data) == [] for data in view.records)


def test_a_harness_failure_fails_the_branch_with_the_reason(
    store: Store, world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sandbox(*_: Any, **__: Any) -> Any:
        raise SandboxUnavailable("cannot run bot files in a sandbox here: no bwrap")

    monkeypatch.setattr("arena.service.branches.make_players", no_sandbox)
    seats = [world["v"]("reference/random@v1")] * 2
    branch = create_branch(store, world["accounts"]["alice"], 1, 0, 1, 0, seats, 1)
    assert run_branch(store, branch, config=world["config"]) == "failed"
    view = branch_view(store, branch)
    assert view is not None and view.status == "failed" and view.records == ()
    assert view.message == "The harness failed: cannot run bot files in a sandbox here: no bwrap"
    assert run_branch(store, branch, config=world["config"]) == "failed"  # not again


def test_lost_and_stale_tasks_are_found_again(store: Store, world: dict[str, Any]) -> None:
    seats = [world["v"]("reference/random@v1")] * 2
    alice = world["accounts"]["alice"]
    sent, never = (create_branch(store, alice, 1, 0, 1, 0, seats, 1) for _ in range(2))
    mark_branches_sent(store, [sent])
    assert unsent_branches(store, older_than=60, stale_seconds=600) == [never]
    later = datetime.now(UTC) + timedelta(seconds=120)
    assert unsent_branches(store, older_than=60, stale_seconds=600, now=later) == [sent, never]
    # a worker died holding it: running since long ago
    with store.write() as session:
        session.execute(
            update(BranchRow)
            .where(BranchRow.id == sent)
            .values(status="running", started=datetime.now(UTC) - timedelta(hours=2))
        )
    assert unsent_branches(store, older_than=60, stale_seconds=600) == [sent, never]
    assert run_branch(store, sent, config=world["config"], sandboxed=False) == "done"
    with store.write() as session:  # running, and recently: another worker holds it
        session.execute(
            update(BranchRow)
            .where(BranchRow.id == never)
            .values(status="running", started=datetime.now(UTC))
        )
    assert run_branch(store, never, config=world["config"], sandboxed=False) == "running"
    assert run_branch(store, 999, config=world["config"]) == "missing"


def test_a_game_over_at_the_point_is_refused(store: Store, world: dict[str, Any]) -> None:
    record = world["record"]
    last = len(record["rounds"])
    seats = [world["v"]("reference/random@v1")] * 2
    with pytest.raises(BranchError, match=f"(the game is over|round {last} is over)"):
        create_branch(store, world["accounts"]["alice"], 1, 0, last, _plays(record, last), seats, 1)
    with store.read() as session:
        assert session.scalar(select(Match.status)) == "done"
