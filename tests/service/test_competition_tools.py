"""arena.service.competition_tools (issue 31, item 6): copies across entrants (a byte-for-byte
copy flagged always), the games export, announcements, settings edited with the action log
(the other controls logged too), the ladder's pause, an entrant's withdrawal, the minimum
account age; each write refused to whoever may not do it, in the service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from celery import Celery
from sqlalchemy import select, update

from arena.errors import NotFound, PermissionDenied
from arena.service import competition_copies as copies
from arena.service import competition_tools as tools
from arena.service import competitions as comp
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.broker import make_app, using
from arena.service.clock import tick_competition
from arena.service.competitions import CompetitionError, NewCompetition
from arena.service.permissions import OPERATOR, Actor
from arena.store.db import Store
from arena.store.models import Competition, Match, User
from arena.store.queue import complete_match
from tests.paths import REFERENCE_BOTS
from tests.service.ladder_fixtures import result

HASHER = password_hasher(cheap=True)
NOW = datetime.now(UTC).replace(microsecond=0)
#: A bot of someone's own (not boilerplate), long enough for the fingerprints.
ORIGINAL = '''"""Plays the heaviest tile that keeps a double for later."""


def weight(move):
    tile = move["tile"]
    return tile[0] + tile[1] + (5 if tile[0] == tile[1] else 0)


def play(observation):
    legal = observation["legal"]
    if not legal:
        return None
    doubles = [m for m in legal if m["tile"][0] == m["tile"][1]]
    singles = [m for m in legal if m not in doubles]
    if singles and len(doubles) == 1:
        return max(singles, key=weight)
    ranked = sorted(legal, key=weight, reverse=True)
    counts = {}
    for move in ranked:
        for pip in move["tile"]:
            counts[pip] = counts.get(pip, 0) + 1
    return max(ranked, key=lambda m: (weight(m), counts[m["tile"][0]] + counts[m["tile"][1]]))
'''
#: The same bot with every name changed: a near-copy.
RENAMED = (
    ORIGINAL.replace("weight", "heft").replace("legal", "options").replace("ranked", "order")
    .replace("counts", "tally").replace("doubles", "pairs").replace("singles", "rest")
)  # fmt: skip
OTHER = (REFERENCE_BOTS / "random.py").read_text()


@pytest.fixture
def people(store: Store) -> dict[str, Actor]:
    made: dict[str, Actor] = {"anonymous": None, "operator": OPERATOR}
    for name, role in (("owner", "organiser"), ("organiser", "organiser"), ("admin", "admin"),
                       ("alice", "user"), ("bob", "user"), ("carol", "user"),
                       ("dave", "user")):  # fmt: skip
        made[name] = create_account(store, name, "correct horse", role=role, hasher=HASHER)
    return made


@pytest.fixture
def celery(tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads, the service's while the test runs."""
    with using(make_app(f"filesystem://{tmp_path / 'broker'}")) as app:
        yield app


def _cup(store: Store, people: dict[str, Actor], **changes: object) -> int:
    new = NewCompetition(
        name="cup", deadline=NOW + timedelta(days=7), opens=NOW - timedelta(hours=1),
        **changes,  # type: ignore[arg-type]
    )  # fmt: skip
    return comp.create_competition(store, people["owner"], new)


def _enter(store: Store, people: dict[str, Actor], owner: str, source: str, bot: str = "b") -> int:
    version = store.add_bot_version(owner, bot, source, {})[0].id
    comp.enter_with_version(store, people[owner], "cup", version)
    return version


def _age(store: Store, name: str, days: int) -> None:
    with store.write() as session:
        session.execute(
            update(User).where(User.name == name).values(created=NOW - timedelta(days=days))
        )


# --- copies ----------------------------------------------------------------------------------


def test_copies_across_entrants_are_flagged_to_the_organiser_only(
    store: Store, people: dict[str, Actor]
) -> None:
    """Bob's byte-for-byte copy of Alice's bot scores 1 (identical); Carol's renamed one is
    a near-copy of both; Dave's own bot pairs with nobody; Alice's own versions are never
    compared with each other, and a copy of boilerplate is a copy too."""
    _cup(store, people)
    alice = _enter(store, people, "alice", ORIGINAL, "heavy")
    _enter(store, people, "alice", ORIGINAL + "\n# v2\n", "heavy")
    bob = _enter(store, people, "bob", ORIGINAL, "mine")
    _enter(store, people, "carol", RENAMED, "hefty")
    _enter(store, people, "dave", OTHER, "dice")
    report = copies.copy_report(store, people["owner"], "cup")
    pairs = {(p.a.entrant, p.b.entrant): p for p in report.pairs}
    assert set(pairs) == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}
    copy = pairs["alice", "bob"]
    assert copy.identical and copy.score == 1.0
    assert {copy.a.version_id, copy.b.version_id} == {alice, bob}
    assert report.pairs[0] is copy  # the highest score first
    near = pairs["alice", "carol"]
    assert not near.identical and near.score > 0.5 and near.a.lines  # renaming hides nothing
    assert (report.entrants, report.scope) == (4, "every entered version")
    # the same bytes of a reference bot (boilerplate to the fingerprints) is a copy too
    _enter(store, people, "dave", OTHER, "dice2")  # (dave's own: not a pair)
    greedy = (REFERENCE_BOTS / "greedy.py").read_text()
    _enter(store, people, "alice", greedy, "g")
    _enter(store, people, "bob", greedy, "g")
    again = copies.copy_report(store, OPERATOR, "cup")
    assert {(p.a.entrant, p.b.entrant) for p in again.pairs if p.identical} == {("alice", "bob")}
    for who in ("anonymous", "alice", "organiser"):
        with pytest.raises(PermissionDenied):
            copies.copy_report(store, people[who], "cup")
    assert copies.copy_report(store, people["admin"], "cup").pairs
    with pytest.raises(CompetitionError, match="a share from 0 to 1, not 2"):
        copies.copy_report(store, people["owner"], "cup", threshold=2.0)
    with pytest.raises(NotFound):
        copies.copy_report(store, people["owner"], "nope")


# --- settings and the log ----------------------------------------------------------------------


def test_settings_change_after_creation_and_every_change_is_logged(
    store: Store, people: dict[str, Actor]
) -> None:
    _cup(store, people, time_zone="Europe/Paris")
    owner = people["owner"]
    later = NOW + timedelta(days=10)
    changes = tools.edit_settings(
        store, owner, "cup",
        tools.SettingsChange(deadline=later, description="Be nice.", final_top=4,
                             final_confidence=0.9, min_account_days=3),
    )  # fmt: skip
    assert {c.what for c in changes} == {
        "deadline", "description", "final top", "final confidence", "min account days"
    }  # fmt: skip
    view = comp.competition_view(store, owner, "cup")
    assert (view.summary.deadline, view.description, view.final_top) == (later, "Be nice.", 4)
    assert tools.edit_settings(store, owner, "cup", tools.SettingsChange(final_top=4)) == ()
    mistakes = [
        (tools.SettingsChange(final_top=40), "final top must be 2 to 32, not 40"),
        (tools.SettingsChange(deadline=NOW - timedelta(hours=1)), "has passed already"),
        (tools.SettingsChange(deadline=datetime(2099, 1, 1)), "with its time zone"),
        (tools.SettingsChange(daily_submissions=0), "daily submissions must be 1 to 100"),
        (tools.SettingsChange(description="x" * 6000), "at most 5000 characters"),
        (tools.SettingsChange(min_account_days=-1), "min account days must be 0 to 365 days"),
    ]
    for change, message in mistakes:
        with pytest.raises(CompetitionError, match=message):
            tools.edit_settings(store, owner, "cup", change)
    for who in ("anonymous", "alice", "organiser"):
        with pytest.raises(PermissionDenied):
            tools.edit_settings(store, people[who], "cup", tools.SettingsChange(final_top=3))
    # the other controls write the log too
    comp.extend_deadline(store, people["admin"], "cup", later + timedelta(days=1))
    _age(store, "alice", 5)  # (3 days are asked for now)
    version = _enter(store, people, "alice", ORIGINAL)
    comp.disqualify(store, owner, "cup", version, "a copy")
    comp.close_now(store, OPERATOR, "cup")
    with pytest.raises(CompetitionError, match=r"closed at .*no longer change"):
        tools.edit_settings(store, owner, "cup", tools.SettingsChange(final_top=3))
    assert tools.edit_settings(store, owner, "cup", tools.SettingsChange(description="Over."))
    log = tools.action_log(store, owner, "cup")
    assert [(line.actor, line.action) for line in log] == [
        ("owner", "settings"), ("operator", "close"), ("owner", "disqualify"),
        ("admin", "deadline"), ("owner", "settings"),
    ]  # fmt: skip
    first = {c.what: (c.old, c.new) for c in log[-1].changes}
    assert first["final top"] == ("8", "4")
    assert first["deadline"][1].endswith("Europe/Paris")
    assert log[2].changes[0].new == "disqualified: a copy"
    with pytest.raises(PermissionDenied):
        tools.action_log(store, people["alice"], "cup")


# --- announcements ---------------------------------------------------------------------------


def test_announcements_are_the_organisers_and_everyones_to_read(
    store: Store, people: dict[str, Actor]
) -> None:
    _cup(store, people)
    tools.post_announcement(store, people["owner"], "cup", "  Welcome!  ", now=NOW)
    tools.post_announcement(store, OPERATOR, "cup", "The deadline moves.", now=NOW + timedelta(1))
    for who in ("anonymous", "alice"):
        read = tools.announcements(store, people[who], "cup")
        assert [(a.author, a.body) for a in read] == [
            ("operator", "The deadline moves."), ("owner", "Welcome!")
        ]  # fmt: skip
    for who in ("anonymous", "alice", "organiser"):
        with pytest.raises(PermissionDenied):
            tools.post_announcement(store, people[who], "cup", "hi")
    with pytest.raises(CompetitionError, match="it is empty"):
        tools.post_announcement(store, people["owner"], "cup", "   ")
    with pytest.raises(CompetitionError, match="at most 2000 characters"):
        tools.post_announcement(store, people["owner"], "cup", "x" * 2001)


# --- the ladder's pause, withdrawal, the games -------------------------------------------------


def _pending(store: Store, ladder: int) -> list[Match]:
    with store.read() as session:
        return list(
            session.scalars(
                select(Match).where(Match.tournament_id == ladder, Match.status == "pending")
            )
        )


def test_pause_withdrawal_and_the_games_export(
    store: Store, people: dict[str, Actor], celery: Celery
) -> None:
    cid = _cup(store, people)
    versions = {
        who: _enter(store, people, who, f"{OTHER}\n# {who}\n") for who in ("alice", "bob", "carol")
    }
    with store.read() as session:
        ladder = session.scalar(select(Competition.ladder_id).where(Competition.id == cid))
    assert ladder is not None
    assert tick_competition(store, cid, now=NOW).added
    played = _pending(store, ladder)[0]
    record = {"seats": list(played.labels or []), "result": {"verdict": {"seat": 0,
              "fault": "crash", "message": "secret", "stderr": "trace"}}}  # fmt: skip
    complete_match(store, played.id, "test", records=[record, record],
                   result=result([[0, 1], [1, 0]]), now=NOW)  # fmt: skip
    # pause: the pending ladder matches void, none added until it resumes
    assert tools.pause_ladder(store, people["owner"], "cup", now=NOW) >= 0
    assert _pending(store, ladder) == []
    assert tick_competition(store, cid, now=NOW + timedelta(seconds=1)).added == ()
    assert tools.competition_extras(store, None, "cup").paused == NOW
    with pytest.raises(CompetitionError, match="is paused already"):
        tools.pause_ladder(store, OPERATOR, "cup")
    with pytest.raises(PermissionDenied):
        tools.pause_ladder(store, people["alice"], "cup")
    tools.resume_ladder(store, people["owner"], "cup")
    with pytest.raises(CompetitionError, match="is not paused"):
        tools.resume_ladder(store, people["owner"], "cup")
    assert tick_competition(store, cid, now=NOW + timedelta(seconds=2)).added
    # withdrawal: alice's matches void, her row says so, no new entry of hers
    assert tools.competition_extras(store, people["alice"], "cup").can_withdraw
    assert tools.withdraw(store, people["alice"], "cup") == (versions["alice"],)
    assert all(versions["alice"] not in m.seats for m in _pending(store, ladder))
    [row] = [r for r in comp.competition_view(store, None, "cup").standings
             if r.owner == "alice"]  # fmt: skip
    assert (row.status, row.rank) == ("withdrawn", None)
    assert row.reason is not None and row.reason.startswith("its entrant withdrew at ")
    extras = tools.competition_extras(store, people["alice"], "cup")
    assert extras.withdrawn and not extras.can_withdraw
    with pytest.raises(CompetitionError, match="a withdrawal is final"):
        _enter(store, people, "alice", ORIGINAL, "again")
    with pytest.raises(CompetitionError, match="withdrew from competition cup already"):
        tools.withdraw(store, people["alice"], "cup")
    with pytest.raises(CompetitionError, match="no entry in competition cup to withdraw"):
        tools.withdraw(store, people["dave"], "cup")
    with pytest.raises(PermissionDenied):
        tools.withdraw(store, None, "cup")
    assert tools.withdraw(store, OPERATOR, "cup", owner="bob") == (versions["bob"],)
    assert [line.action for line in tools.action_log(store, OPERATOR, "cup")][:2] == [
        "withdraw", "withdraw"
    ]  # fmt: skip
    # the games: JSON lines, the faults' messages for admins only
    lines = list(tools.competition_games(store, people["dave"], "cup"))
    assert len(lines) == 2 and all(line.endswith("\n") for line in lines)
    verdict = json.loads(lines[0])["result"]["verdict"]
    assert (verdict["fault"], verdict["message"], verdict["stderr"]) == ("crash", None, None)
    whole = json.loads(next(tools.competition_games(store, people["admin"], "cup")))
    assert whole["result"]["verdict"]["message"] == "secret"
    with pytest.raises(NotFound):
        tools.competition_games(store, None, "nope")


def test_a_minimum_account_age_refuses_young_accounts_in_a_sentence(
    store: Store, people: dict[str, Actor]
) -> None:
    _cup(store, people, min_account_days=7)
    _age(store, "bob", 8)
    version = store.add_bot_version("alice", "b", ORIGINAL, {})[0].id
    with pytest.raises(CompetitionError) as refused:
        comp.enter_with_version(store, people["alice"], "cup", version)
    message = str(refused.value)
    assert message.startswith("competition cup takes entries from accounts at least 7 days old")
    assert "so it may enter from" in message
    alice = people["alice"]
    assert isinstance(alice, Account)
    with pytest.raises(CompetitionError, match="at least 7 days old"):
        comp.entry_checks(store, alice, "cup", "bot.py")
    _enter(store, people, "bob", ORIGINAL)  # old enough
    comp.enter_with_version(store, OPERATOR, "cup", version, owner="alice")  # the operator's
