"""What if… on the web (web/branches.py), on both databases: the viewer's link, the form at
a state, the branch stored and sent to the broker, played by the worker's code (called here
as the worker calls it), its page with each repetition's outcome and the summary, each
repetition beside the original and as records that verify; who may choose which bots and
see which branch; bad requests each with a sentence."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select, update

from arena.engine.records import verify_record
from arena.service.branches import MAX_TIMES, run_branch
from arena.service.games import game_record
from arena.service.matches import Config
from arena.store.db import Store
from arena.store.models import Branch as BranchRow
from tests.web.conftest import csrf_token, logged_in, played_spring

pytestmark = pytest.mark.seed(build=played_spring)


def _text(client: FlaskClient, path: str, status: int = 200) -> str:
    reply = client.get(path)
    assert reply.status_code == status, (path, reply.status_code)
    return reply.get_data(as_text=True)


class _Inline(HTMLParser):
    """What the Content-Security-Policy would block: inline scripts and styles, handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if (tag == "script" and "src" not in names) or tag == "style" or "style" in names:
            self.found.append(tag)
        self.found += [name for name in names if name.startswith("on")]


def _clean(page: str) -> bool:
    audit = _Inline()
    audit.feed(page)
    return audit.found == []


def _options(page: str, seat: int) -> dict[str, str]:
    """The seat's select: option text -> value (the selected one marked with a star)."""
    select_ = page.split(f'name="seat{seat}"', 1)[1].split("</select>", 1)[0]
    return {
        label + ("*" if " selected" in attrs else ""): value
        for value, attrs, label in re.findall(
            r'<option value="(\d+)"([^>]*)>([^<]+)</option>', select_
        )
    }


def _post(client: FlaskClient, path: str, **fields: str) -> tuple[int, str]:
    data = {"csrf_token": csrf_token(client, "/"), **fields}
    reply = client.post(path, data=data)
    return reply.status_code, reply.headers.get("Location", "") or reply.get_data(as_text=True)


def _last_state(store: Store) -> tuple[int, int]:
    found = game_record(store, 1, 0)
    assert found is not None
    rounds = found.record["rounds"]
    return len(rounds), len(rounds[-1]["events"])


def test_the_viewer_offers_what_if_to_logged_in_users(app: Flask, store: Store) -> None:
    anonymous, alice = app.test_client(), logged_in(app, "alice")
    assert "/games/1/0/branch" not in _text(anonymous, "/games/1/0?round=1&step=2")
    page = _text(alice, "/games/1/0?round=1&step=2")
    assert 'href="/games/1/0/branch?round=1&amp;step=2">What if…</a>' in page
    state = _text(alice, "/games/1/0/state?round=1&step=3")
    assert 'href="/games/1/0/branch?round=1&amp;step=3"' in state
    last_round, last_step = _last_state(store)  # the game is over: nothing to branch
    final = _text(alice, f"/games/1/0?round={last_round}&step={last_step}")
    assert "/games/1/0/branch" not in final


def test_what_if_from_the_form_to_the_results_beside_the_original(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    alice = logged_in(app, "alice")
    form = _text(alice, "/games/1/0/branch?round=1&step=3")
    assert "What if other bots had played on?" in form
    assert 'name="turn" value="' in form and 'name="csrf_token"' in form
    seat0, seat1 = _options(form, 0), _options(form, 1)
    # the game's own bots preselected; alice's two versions, the reference bot; not bob's
    assert "reference/random@v1*" in seat0 and "alice/greedy@v1*" in seat1
    assert set(seat1) == {"alice/greedy@v2", "alice/greedy@v1*", "reference/random@v1"}
    turn = re.search(r'name="turn" value="(\d+)"', form)
    assert turn is not None
    status, location = _post(
        alice,
        "/games/1/0/branch",
        round="1",
        turn=turn.group(1),
        seat0=seat1["alice/greedy@v1*"],
        seat1=seat0["reference/random@v1*"],
        times="3",
    )
    assert (status, location) == (302, "/branches/1")
    page = _text(alice, "/branches/1")
    assert "pending" in page and 'hx-get="/branches/1/live"' in page
    assert "alice/greedy@v1" in page and "reference/random@v1" in page
    with store.read() as session:
        branch = session.get(BranchRow, 1)
        assert branch is not None and branch.sent is not None  # sent to the broker
        assert branch.turn == int(turn.group(1)) and branch.times == 3
    config = Config(bot_cache=tmp_path / "cache")
    assert run_branch(store, 1, config=config, sandboxed=False) == "done"  # as a worker
    live = _text(alice, "/branches/1/live")
    assert "hx-get" not in live and "done" in live  # polling stops
    assert "How round 1 ended" in live and "The original" in live
    assert all(f"Repetition {k}" in live for k in (1, 2, 3))
    assert "Over 3 repetitions" in live and "Mean points" in live
    assert 'href="/branches/1/1"' in live and 'href="/branches/1.jsonl"' in live
    side = _text(alice, "/branches/1/1")
    assert "beside the original" in side and "The original: game 0 of match 1" in side
    assert "Repetition 1 of 3" in side and "The branch takes up here" in side
    assert side.count('<section class="column') == 2 and 'data-state="/branches/1/1/state"' in side
    state = _text(alice, "/branches/1/1/state?round=1&step=0")
    assert state.startswith('<div id="state"') or 'id="state"' in state
    assert "The branch takes up at" in state
    assert _text(alice, "/branches/1/3").count('<section class="column') == 2
    _text(alice, "/branches/1/4", 404)
    record = json.loads(_text(alice, "/branches/1/2.json"))
    assert verify_record(record) == [] and record["branch"]["round"] == 1
    for path in ("/games/1/0/branch?round=1&step=3", "/branches/1", "/branches/1/1"):
        assert _clean(_text(alice, path)), path
    lines = _text(alice, "/branches/1.jsonl").splitlines()
    assert len(lines) == 3 and all(verify_record(json.loads(line)) == [] for line in lines)


def test_who_may_see_a_branch_and_choose_which_bots(app: Flask, store: Store) -> None:
    alice, bob, root = (logged_in(app, name) for name in ("alice", "bob", "root"))
    anonymous = app.test_client()
    form = _text(bob, "/games/1/0/branch?round=1&step=0")
    counter = _options(form, 0)["bob/counter@v1"]  # bob's own
    # alice may not seat bob's private bot, even by posting its id
    status, page = _post(
        alice, "/games/1/0/branch", round="1", turn="0", seat0=counter, seat1=counter
    )
    assert status == 400
    assert "Seat 0: you may not choose bob/counter@v1" in html.unescape(page)
    assert "bob/counter" not in "".join(_options(page, 0))
    # an admin may seat any bot
    assert "bob/counter@v1" in _options(_text(root, "/games/1/0/branch?round=1&step=0"), 0)
    status, location = _post(
        bob, "/games/1/0/branch", round="1", turn="0", seat0=counter, seat1=counter
    )
    assert (status, location) == (302, "/branches/1")
    for client, expected in ((bob, 200), (root, 200), (alice, 404), (anonymous, 404)):
        assert client.get("/branches/1").status_code == expected
        assert client.get("/branches/1/live").status_code == expected
    # anonymous users are sent to log in, and cannot post
    reply = anonymous.get("/games/1/0/branch?round=1&step=0")
    assert reply.status_code == 302 and reply.headers["Location"].startswith("/login?next=")
    reply = anonymous.post("/games/1/0/branch", data={"round": "1", "turn": "0"})
    assert reply.status_code in (302, 400)
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(BranchRow)) == 1


def test_bad_requests_each_say_why(app: Flask, store: Store) -> None:
    alice = logged_in(app, "alice")
    form = _text(alice, "/games/1/0/branch?round=1&step=0")
    random_bot = _options(form, 0)["reference/random@v1*"]
    reply = alice.post("/games/1/0/branch", data={"round": "1", "turn": "0", "seat0": random_bot})
    assert reply.status_code == 400  # no CSRF token
    status, page = _post(
        alice, "/games/1/0/branch", round="1", turn="0", seat0=random_bot, seat1=random_bot,
        times=str(MAX_TIMES + 30),
    )  # fmt: skip
    assert status == 400
    assert f"The repetitions must be 1 to {MAX_TIMES}, not {MAX_TIMES + 30}." in page
    status, page = _post(alice, "/games/1/0/branch", round="1", turn="0", seat0=random_bot)
    assert status == 400 and "Seat 1: choose a bot." in page
    status, page = _post(
        alice, "/games/1/0/branch", round="1", turn="999", seat0=random_bot, seat1=random_bot
    )
    assert status == 400 and "Turn 999 is out of range" in page
    bad = html.unescape(_text(alice, "/games/1/0/branch?round=99&step=0", 400))
    assert "Round must be a whole number from 1 to" in bad
    _text(alice, "/games/999/0/branch?round=1&step=0", 404)
    last_round, last_step = _last_state(store)
    over = _text(alice, f"/games/1/0/branch?round={last_round}&step={last_step}", 400)
    assert "is over" in over and '<form method="post" action="/games' not in over
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(BranchRow)) == 0


def test_a_failed_branch_says_why(app: Flask, store: Store) -> None:
    alice = logged_in(app, "alice")
    form = _text(alice, "/games/1/0/branch?round=1&step=0")
    random_bot = _options(form, 0)["reference/random@v1*"]
    _post(alice, "/games/1/0/branch", round="1", turn="0", seat0=random_bot, seat1=random_bot)
    with store.write() as session:
        session.execute(
            update(BranchRow).values(status="failed", message="The harness failed: no bwrap.")
        )
    page = _text(alice, "/branches/1")
    assert "failed" in page and "The harness failed: no bwrap." in page
    assert "hx-get" not in page
    _text(alice, "/branches/1/1", 404)  # no records
    _text(alice, "/branches/1.jsonl", 404)
