"""Tournaments from the web (web/tournaments.py): organisers create them (their matches go
to the broker at once) and cancel them; bad forms say what is wrong and store nothing."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from arena.service.accounts import create_account
from arena.store.db import Store
from arena.store.models import Match, Tournament
from arena.store.queue import tournament_progress
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, play


@pytest.fixture
def app(app: Flask, store: Store) -> Flask:
    """tests/web/conftest.py's app with accounts (two organisers, an admin) and bots."""
    for name, role in (("ada", "user"), ("olga", "organiser"), ("otto", "organiser")):
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    create_account(store, "root", PASSWORD, role="admin", hasher=HASHER)
    for bot in ("random", "greedy", "counter"):
        store.add_bot_version("ada", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    store.add_bot_version("olga", "greedy", (REFERENCE_BOTS / "fives.py").read_text(), {})
    return app


def _create(client: FlaskClient, **fields: object) -> tuple[int, str]:
    form: dict[str, object] = {
        "name": "spring",
        "rules": "draw",
        "format": "round-robin",
        "bots": ["ada/random", "ada/greedy", "olga/greedy"],
        "games": "2",
        "players": "2",
        "move_seconds": "500",
        **fields,
        "csrf_token": csrf_token(client, "/tournaments/new"),
    }
    reply = client.post("/tournaments/new", data=form)
    return reply.status_code, reply.headers.get("Location", "") or reply.get_data(as_text=True)


def _tournaments(store: Store) -> int:
    with store.read() as session:
        return session.scalar(select(func.count()).select_from(Tournament)) or 0


def test_an_organiser_creates_a_tournament_and_its_matches_are_sent(
    app: Flask, store: Store
) -> None:
    olga = logged_in(app, "olga")
    assert "New tournament" in olga.get("/tournaments").get_data(as_text=True)
    page = olga.get("/tournaments/new").get_data(as_text=True)
    assert 'value="ada/random"' in page and 'value="olga/greedy"' in page
    status, location = _create(olga)
    assert status == 302 and location == "/tournaments/spring"
    with store.read() as session:
        tournament = session.scalars(select(Tournament)).one()
        assert tournament.settings == {"move_seconds": 0.5, "memory_mb": 512}
        matches = list(session.scalars(select(Match)))
    assert len(matches) == 6 and all(m.queued is not None for m in matches)  # sent
    page = olga.get(location).get_data(as_text=True)
    assert "created by olga" in page and "Cancel the tournament" in page
    # two owners' bots called greedy: labelled apart
    assert {label for m in matches for label in (m.labels or [])} == {
        "random",
        "ada.greedy",
        "olga.greedy",
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": ""}, "A tournament needs a name."),
        ({"name": "a/b"}, "is not a valid name"),
        ({"rules": "chess"}, "Choose a rule set"),
        ({"format": "gauntlet"}, "Choose a format"),
        ({"bots": ["ada/random"]}, "Choose at least two bots"),
        ({"bots": ["ada/random", "nobody/nothing"]}, "nothing"),
        ({"games": "0"}, "Games must be 1 to 1000, not 0"),
        ({"games": "lots"}, "Games must be a whole number"),
        ({"players": "9"}, "Players must be 2 to 4, not 9"),
        ({"move_seconds": "5"}, "The time a move must be 10 to 10000 ms, not 5 ms."),
    ],
)
def test_bad_tournament_forms_say_what_is_wrong(
    app: Flask, store: Store, fields: dict[str, object], message: str
) -> None:
    status, page = _create(logged_in(app, "olga"), **fields)
    assert status == 400
    assert message in page, page[-3000:]
    assert _tournaments(store) == 0


def test_a_taken_name_is_refused(app: Flask, store: Store) -> None:
    olga = logged_in(app, "olga")
    assert _create(olga)[0] == 302
    status, page = _create(olga)
    assert status == 400 and "exists" in page
    assert _tournaments(store) == 1


def test_only_organisers_and_admins_create(app: Flask) -> None:
    reply = logged_in(app, None).get("/tournaments/new")
    assert reply.status_code == 302 and reply.headers["Location"].startswith("/login")
    ada = logged_in(app, "ada")
    assert ada.get("/tournaments/new").status_code == 403
    assert "New tournament" not in ada.get("/tournaments").get_data(as_text=True)
    assert logged_in(app, "root").get("/tournaments/new").status_code == 200


def test_cancelling_voids_what_is_left_and_keeps_what_was_played(
    app: Flask, store: Store, tmp_path: object
) -> None:
    from pathlib import Path

    olga = logged_in(app, "olga")
    _create(olga, name="first")
    _create(olga, name="second")
    assert isinstance(tmp_path, Path)
    play(store, "first", tmp_path / "cache")  # first is done: nothing to cancel
    # another organiser may not cancel olga's tournament; an admin may
    before = olga.get("/tournaments/second").get_data(as_text=True)
    assert 'data-confirm="Cancel second? Matches not finished will never be played."' in before
    otto = logged_in(app, "otto")
    token = csrf_token(otto, "/")
    assert otto.post("/tournaments/second/cancel", data={"csrf_token": token}).status_code == 403
    reply = olga.post("/tournaments/second/cancel", data={"csrf_token": csrf_token(olga, "/")})
    assert reply.status_code == 302
    page = olga.get("/tournaments/second").get_data(as_text=True)
    assert "cancelled: 6 matches will not be played" in page
    assert '<span class="status cancelled">cancelled</span>' in page
    assert "Cancel the tournament" not in page and "hx-get" not in page
    with store.read() as session:
        second = session.scalars(select(Tournament).where(Tournament.name == "second")).one()
        assert second.status == "cancelled" and second.finished is not None
        first_id = session.scalar(select(Tournament.id).where(Tournament.name == "first"))
    assert first_id is not None
    assert tournament_progress(store, first_id)["done"] == 6
    root = logged_in(app, "root")
    reply = root.post("/tournaments/first/cancel", data={"csrf_token": csrf_token(root, "/")})
    assert reply.status_code == 302  # done: nothing voided, still done
    with store.read() as session:
        assert session.scalar(select(Tournament.status).where(Tournament.id == first_id)) == "done"
    assert logged_in(app, None).post("/tournaments/nope/cancel").status_code == 400  # no token


def test_a_tournament_under_a_custom_rule_file(app: Flask, store: Store) -> None:
    import io

    from tests.paths import REPO

    olga = logged_in(app, "olga")
    example = (REPO / "docs" / "examples" / "block-to-200.json").read_bytes()
    status, location = _create(olga, rules_file=(io.BytesIO(example), "block-to-200.json"))
    assert status == 302, location
    page = olga.get(location).get_data(as_text=True)
    assert "block-to-200 · round-robin" in page
    bad = [
        (b"name = [", "rules.toml", "not valid TOML"),
        (b"\xff\xfe", "rules.json", "is not UTF-8 text"),
        (b'{"name": "x"}', "rules.json", "x"),  # no base: every parameter is required
        (b"{}", "rules.txt", "must end in .toml or .json"),
        (b" " * (64 * 1024 + 1), "big.toml", "A rule file is at most 64 KiB."),
    ]
    for data, filename, message in bad:
        status, page = _create(olga, name="autumn", rules_file=(io.BytesIO(data), filename))
        assert status == 400 and message in page, (filename, page[-3000:])
    assert _tournaments(store) == 1


def test_a_rule_file_too_large_for_the_form_says_so_and_the_browser_refuses_it_first(
    app: Flask, store: Store
) -> None:
    """A 2 MB rule file: the page checks its size before sending (data-max-bytes, so the
    form is kept); sent anyway, the 413 page speaks of rule files, not of bot files."""
    import io

    olga = logged_in(app, "olga")
    form_page = olga.get("/tournaments/new").get_data(as_text=True)
    assert 'name="rules_file" accept=".toml,.json" data-max-bytes="65536"' in form_page
    from werkzeug.datastructures import FileStorage, MultiDict
    from werkzeug.test import encode_multipart

    form = MultiDict(
        {
            "name": "spring",
            "rules_file": FileStorage(io.BytesIO(b"#" * 2_000_000), "big.toml"),
            "csrf_token": csrf_token(olga, "/tournaments/new"),
        }
    )
    boundary, body = encode_multipart(form)  # in memory: the refused request reads none
    reply = olga.post(
        "/tournaments/new", data=body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    status, page = reply.status_code, reply.get_data(as_text=True)
    assert status == 413
    assert "a rule file is at most 64 KiB" in page and "Python file" not in page
    assert _tournaments(store) == 0
