"""Compares from the web (web/compares.py), on both databases: a bot's owner starts one, its
page polls while the workers (here: the worker's own code, unsandboxed) play it, and shows
the verdict; only NEW's owner (or an admin) may start one; bad parameters are one message."""

from __future__ import annotations

import re
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import delete, select

from arena.service.accounts import create_account
from arena.store.db import Store
from arena.store.models import CompareReading, Tournament
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, play_pending


def _accounts(store: Store) -> None:
    for name, role in (("alice", "user"), ("bob", "user"), ("root", "admin")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    store.add_bot_version("alice", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})


def _start(app: Flask | FlaskClient, who: str = "", **form: str) -> tuple[int, str]:
    """Post the compare form as ``who`` (or with an already logged-in client)."""
    client = app if isinstance(app, FlaskClient) else logged_in(app, who)
    data = {
        "csrf_token": csrf_token(client, "/compares/new"),
        "new": "alice/greedy",
        "old": "bob/first",
        "rules": "draw",
        "elo0": "0",
        "elo1": "25",
        "max_games": "2000",
        **form,
    }
    reply = client.post("/compares/new", data=data)
    return reply.status_code, reply.headers.get("Location", "") or reply.get_data(as_text=True)


def test_an_owner_starts_a_compare_and_reads_the_verdict(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    _accounts(store)
    form = logged_in(app, "alice").get("/compares/new?new=alice/greedy").get_data(as_text=True)
    assert '<option value="alice/greedy" selected>' in form
    old = form.split('name="old"')[1]
    assert 'name="new"' in form and '<option value="bob/first@1">bob/first v1 (latest)' in old
    status, location = _start(app, "alice")
    assert status == 302 and location.startswith("/compares/compare-alice-greedy-v-bob-first")
    anonymous = app.test_client()
    running = anonymous.get(location).get_data(as_text=True)
    assert re.search(
        r'Is <a class="bot-name" href="/bots/alice/greedy">alice/greedy v\d+</a> stronger than '
        r'<a class="bot-name" href="/bots/bob/first">bob/first v1</a>\?',
        running,
    ), running
    assert "Running" in running and "hx-get" in running
    assert (
        "margin SPRT (point margins less the luck of the draw): elo0 0, elo1 25, alpha 0.05, "
        "beta 0.05; at most 2000 games"
    ) in running
    play_pending(store, tmp_path / "cache")
    done = anonymous.get(location).get_data(as_text=True)
    assert "NEW passed: H1 accepted" in done and "hx-get" not in done
    assert re.search(r"<dt>Elo difference</dt><dd>\+\d+\.\d \(95% interval \+", done)
    assert re.search(r"<dt>LOS</dt><dd>\d+\.\d%</dd>", done)
    fast = re.search(
        r"<dt>Fast pass</dt><dd>[+-]\d+\.\d\d \(NEW passes at \+(\d+\.\d\d): H1 elo 125\)", done
    )
    # Ville's bound log(1 / 0.01) = 4.61, widened on few deal groups (small_sample_factor)
    assert fast is not None and float(fast[1]) >= 4.6, done
    assert '<svg class="llr"' in done
    with store.read() as session:
        tournament = session.scalar(select(Tournament))
        assert tournament is not None and tournament.owner_id is not None
    # The game-level test, and 2v2, from the form.
    status, location = _start(app, "alice", statistic="game", rules="muggins", teams="on")
    assert status == 302, location
    page = anonymous.get(location).get_data(as_text=True)
    assert "game-level SPRT (game results): elo0 0, elo1 25" in page and "2v2" in page
    assert "Fast pass" not in page
    status, page = _start(app, "alice", statistic="wins")
    assert status == 400 and "The statistic is one of margin, game, not &#39;wins&#39;." in page
    status, page = _start(app, "alice", teams="on")
    assert status == 400, page
    assert "Draw has no team play with 4 players" in page
    # the tournament page of the same games links back to the verdict
    page = anonymous.get(f"/tournaments/{location.rsplit('/', 1)[1]}").get_data(as_text=True)
    assert "the test&#39;s verdict" in page or "the test's verdict" in page


def test_only_news_owner_or_an_admin_starts_a_compare(app: Flask, store: Store) -> None:
    _accounts(store)
    status, page = _start(app, "bob")
    assert status == 403 and "only the owner of alice/greedy" in page
    status, location = _start(app, "root")
    assert status == 302 and location.startswith("/compares/")
    status, location = _start(app, "bob", new="bob/first", old="alice/greedy")
    assert status == 302


def test_bad_compare_requests_are_one_message(app: Flask, store: Store) -> None:
    _accounts(store)
    cases = [
        ({"elo0": "10", "elo1": "5"}, "The test&#39;s parameters: elo0 must be below elo1"),
        ({"elo1": "lots"}, "Elo1 must be a number, not &#39;lots&#39;."),
        ({"max_games": "1"}, "Games must be 2 to 20000."),
        ({"max_games": "99999999"}, "Games must be 2 to 20000."),
        ({"rules": "chess"}, "No rule set called &#39;chess&#39;: a preset (block, draw"),
        ({"players": "9"}, "Players must be 2 to"),
        ({"old": "bob/nothing"}, "No bot bob/nothing."),
        ({"old": "nothing"}, "OLD must be OWNER/NAME[@VERSION], not &#39;nothing&#39;."),
        ({"old": "a b/c"}, "the owner &#39;a b&#39; is not a valid name"),
        ({"move_ms": "0"}, "The time a move must be 10 to 10000 ms."),
        ({"new": ""}, "Choose NEW (your bot) and OLD."),
    ]
    alice = logged_in(app, "alice")  # once: logging in is rate-limited
    for form, message in cases:
        status, page = _start(alice, **form)
        assert status == 400, (form, status)
        assert message in page, (form, page)
    with store.read() as session:
        assert session.scalar(select(Tournament)) is None  # nothing stored
    assert app.test_client().get("/compares/nothing").status_code == 404


def test_one_source_on_both_sides_is_refused_unless_the_box_is_ticked(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    """bob's copy of alice's greedy: a bot against itself (issue 29). Asked for, it runs;
    a compare whose games cannot give a verdict says so on its page."""
    _accounts(store)
    store.add_bot_version("bob", "copy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    alice = logged_in(app, "alice")
    status, page = _start(alice, old="bob/copy")
    assert status == 400
    assert "NEW alice/greedy and OLD bob/copy have the same source (sha256 " in page
    assert 'name="allow_same_source"' in page
    status, location = _start(alice, old="bob/copy", allow_same_source="on", max_games="16")
    assert status == 302, location
    play_pending(store, tmp_path / "cache")
    name = location.rsplit("/", 1)[1]
    with store.write() as session:  # as if a seat had run another source than its entrant's
        tournament = session.scalars(select(Tournament).where(Tournament.name == name)).one()
        assert tournament.settings is not None
        sprt = {**tournament.settings["sprt"], "old_source": "0" * 64}
        tournament.settings = {**tournament.settings, "sprt": sprt}
        # (and as if no stop check had kept a reading: the page reads the test itself)
        session.execute(delete(CompareReading).where(CompareReading.tournament_id == tournament.id))
    page = app.test_client().get(location).get_data(as_text=True)
    assert "No verdict: match " in page and "not its entrant&#39;s 000000000000" in page
