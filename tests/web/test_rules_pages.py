"""The rules anyone can read (web/rules.py, web/api_rules.py): /rules and /rules/NAME for a
preset and for a competition's custom rule set, read without logging in; their files read
back to the same rules; the API's answers, a compare under the custom rule set over the API
and the web's form; unknown names in a sentence (JSON under /api/); the competition's page
links its rules and its kit (a zip)."""

from __future__ import annotations

import io
import json
import tomllib
import zipfile
from datetime import UTC, datetime, timedelta

from flask import Flask

from arena.engine.rules import PRESETS, parse_rules, rules_from_document
from arena.service.accounts import create_account, create_token
from arena.service.competitions import NewCompetition, create_competition
from arena.service.permissions import OPERATOR
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in

RULES = rules_from_document(
    {
        "name": "cup-rules",
        "base": "draw",
        "players": [3],
        "target": 40,
        "description": "Three at a table, to 40.",
    }
)


def competition(store: Store) -> None:
    """The competition ``cup`` under the custom rule set ``RULES``, open a week."""
    new = NewCompetition(
        name="cup", deadline=datetime.now(UTC) + timedelta(days=7), rules=RULES.name,
        custom_rules=RULES, players=3,
    )  # fmt: skip
    create_competition(store, OPERATOR, new)


def test_anyone_reads_a_rule_set_and_downloads_its_files(app: Flask, store: Store) -> None:
    competition(store)
    anonymous = app.test_client()
    index = anonymous.get("/rules").get_data(as_text=True)
    assert all(f'href="/rules/{name}"' in index for name in PRESETS)
    assert 'href="/rules/cup-rules"' in index and 'href="/rules"' in index  # the nav's link
    preset = anonymous.get("/rules/muggins").get_data(as_text=True)
    assert "a point for every 5" in preset and PRESETS["muggins"].version in preset
    page = anonymous.get("/rules/cup-rules")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "custom rule set" in text
    assert (
        "tiles dealt to each player: 5" in text and "the first to 40 points wins the game" in text
    )
    assert "--players 3 --bots mybot.py,greedy,greedy" in text
    assert 'href="/competitions/cup"' in text
    for kind, read in (("toml", tomllib.loads), ("json", json.loads)):
        got = anonymous.get(f"/rules/cup-rules/download.{kind}")
        assert got.headers["Content-Disposition"] == f'attachment; filename="cup-rules.{kind}"'
        body = got.get_data(as_text=True)
        assert read(body)["target"] == 40
        assert parse_rules(body, f"cup-rules.{kind}") == RULES
    draw = anonymous.get("/rules/draw/download.toml").get_data(as_text=True)
    assert parse_rules(draw, "draw.toml") is PRESETS["draw"]
    missing = anonymous.get("/rules/chess")
    assert missing.status_code == 404
    assert "No rule set called &#39;chess&#39;: a preset (block, draw" in missing.get_data(
        as_text=True
    )
    assert anonymous.get("/rules/cup-rules/download.yaml").status_code == 404


def test_the_api_answers_the_rules_and_compares_under_a_custom_set(
    app: Flask, store: Store
) -> None:
    competition(store)
    ada = create_account(store, "ada", PASSWORD, hasher=HASHER)
    store.add_bot_version("ada", "greedy", (REFERENCE_BOTS / "greedy.py").read_text(), {})
    store.add_bot_version("bob", "first", (ZOO / "first.py").read_text(), {})
    token = {"Authorization": f"Bearer {create_token(store, ada.id, 'ci', ['read', 'run'])}"}
    client = app.test_client()
    listed = client.get("/api/v1/rules", headers=token).get_json()["rule_sets"]
    assert [r["reference"] for r in listed] == [*PRESETS, "cup-rules"]
    one = client.get("/api/v1/rules/cup-rules", headers=token).get_json()
    assert one["summary"]["version"] == RULES.version and one["competitions"] == ["cup"]
    assert rules_from_document(one["document"]) == RULES
    assert one["toml"] == "/rules/cup-rules/download.toml"
    assert {p["name"]: p["meaning"] for p in one["parameters"]}["players"] == (
        "players at a table: 3"
    )
    missing = client.get("/api/v1/rules/chess", headers=token)
    assert missing.status_code == 404
    assert missing.get_json()["error"]["message"].startswith("no rule set called 'chess'")
    assert client.get("/api/v1/rules").status_code == 401  # a token, as the whole API
    body = {"new": "ada/greedy", "old": "bob/first", "rules": "cup-rules", "players": 3}
    started = client.post("/api/v1/compares", json=body, headers=token)
    assert started.status_code == 202, started.get_json()
    assert (started.get_json()["rules"], started.get_json()["players"]) == ("cup-rules", 3)
    unknown = client.post("/api/v1/compares", json={**body, "rules": "chess"}, headers=token)
    assert unknown.status_code == 400
    assert unknown.get_json()["error"]["message"].startswith("no rule set called 'chess': ")
    # the web's form offers it, and starts a compare under it
    web = logged_in(app, "ada")
    form = web.get("/compares/new?rules=cup-rules").get_data(as_text=True)
    assert '<option value="cup-rules" selected>' in form
    posted = web.post("/compares/new", data={
        "csrf_token": csrf_token(web, "/compares/new"), "new": "ada/greedy", "old": "bob/first",
        "rules": "cup-rules", "players": "3", "elo0": "0", "elo1": "25", "max_games": "30",
    })  # fmt: skip
    assert posted.status_code == 302, posted.get_data(as_text=True)


def test_the_competition_page_shows_its_rules_and_its_kit(app: Flask, store: Store) -> None:
    competition(store)
    anonymous = app.test_client()
    page = anonymous.get("/competitions/cup").get_data(as_text=True)
    assert '<a href="/rules/cup-rules">cup-rules</a> (custom, version' in page
    assert "tiles dealt to each player: 5" in page  # its parameters, with their meanings
    assert 'href="/rules/cup-rules/download.json"' in page
    assert 'href="/competitions/cup/kit.zip"' in page
    kit = anonymous.get("/competitions/cup/kit.zip")
    assert kit.headers["Content-Disposition"] == 'attachment; filename="cup-kit.zip"'
    with zipfile.ZipFile(io.BytesIO(kit.get_data())) as archive:
        assert archive.namelist() == ["cup-kit/cup-rules.toml", "cup-kit/mybot.py",
                                      "cup-kit/README.md"]  # fmt: skip
        readme = archive.read("cup-kit/README.md").decode()
    assert "Its page: http://localhost/competitions/cup" in readme
    assert "--rules cup-rules --players 3" in readme
    assert anonymous.get("/competitions/nope/kit.zip").status_code == 404
    # another organiser stores a rule set of the same name: the page still links its own
    store.ensure_rule_set(rules_from_document({"name": "cup-rules", "base": "block"}))
    exact = f"cup-rules@{RULES.version}"
    page = anonymous.get("/competitions/cup").get_data(as_text=True)
    assert f'<a href="/rules/{exact}">cup-rules</a>' in page
    linked = anonymous.get(f"/rules/{exact}").get_data(as_text=True)
    assert "the first to 40 points wins the game" in linked
    assert 'href="/rules/cup-rules"' in linked  # the other one, under the plain name
    with zipfile.ZipFile(io.BytesIO(anonymous.get("/competitions/cup/kit.zip").get_data())) as z:
        assert f"--rules {exact} --players 3" in z.read("cup-kit/README.md").decode()
