"""The organiser's tools on the web and the API (web/competition_tools.py,
web/api_competition_tools.py): the organiser's page (settings with the action log, the
ladder's pause, announcements), the copies' page, an entrant's withdrawal, the games'
download; who may do what; every API error as JSON. Beside them, two defects of issue 31:
the creation form's limits are the service's, and a refusal never capitalises an
identifier ("D9cup takes...")."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from flask import Flask

from arena.service.accounts import create_account, create_token
from arena.service.competitions import BOUNDS, NewCompetition, create_competition
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in
from tests.web.test_competition_pages import account_named

NOW = datetime.now(UTC).replace(microsecond=0)
SOURCE = (REFERENCE_BOTS / "greedy.py").read_text()
#: The creation form's number fields and the setting each one is (the time a move in ms).
FORM_FIELDS = {
    "move_ms": ("move_seconds", 1000), "memory_mb": ("memory_mb", 1),
    "games_per_deal": ("games_per_deal", 1), "daily_submissions": ("daily_submissions", 1),
    "final_top": ("final_top", 1), "final_confidence": ("final_confidence", 1),
    "final_max_games": ("final_max_games", 1), "min_account_days": ("min_account_days", 1),
}  # fmt: skip


def _people(store: Store) -> dict[str, str]:
    """Accounts (olga organises) and an API token each, by name."""
    tokens = {}
    for name, role in (("olga", "organiser"), ("alice", "user"), ("bob", "user")):
        account = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
        tokens[name] = create_token(store, account.id, "t", ["read", "upload", "run"])
    return tokens


def _cup(store: Store, name: str = "cup", **changes: object) -> None:
    """Competition ``name``, organised by olga."""
    olga = account_named(store, "olga")
    new = NewCompetition(
        name=name, deadline=NOW + timedelta(days=7), opens=NOW - timedelta(hours=1),
        time_zone="Europe/Paris", **changes,  # type: ignore[arg-type]
    )  # fmt: skip
    create_competition(store, olga, new)


def _flashes(page: str) -> list[str]:
    return re.findall(r"<li>([^<]*)</li>", page.split('class="flashes"', 1)[-1].split("</ul>")[0])


def test_the_creation_forms_limits_are_the_services(app: Flask, store: Store) -> None:
    _people(store)
    page = logged_in(app, "olga").get("/competitions/new").get_data(as_text=True)
    for field, (setting, scale) in FORM_FIELDS.items():
        tag = re.search(rf'<input name="{field}"[^>]*>', page)
        assert tag, field
        low, high, _ = BOUNDS[setting]
        assert f'min="{low * scale:g}"' in tag.group(0), (field, tag.group(0))
        assert f'max="{high * scale:g}"' in tag.group(0), (field, tag.group(0))


def test_a_refusal_keeps_an_identifiers_case(app: Flask, store: Store) -> None:
    _people(store)
    _cup(store, "d9cup", daily_submissions=1)
    version = store.add_bot_version("alice", "greedy", SOURCE, {})[0].id
    other = store.add_bot_version("alice", "greedy", SOURCE + "\n# 2\n", {})[0].id
    client = logged_in(app, "alice")
    for chosen, status in ((version, 302), (other, 400)):
        token = csrf_token(client, "/competitions/d9cup")
        sent = client.post("/competitions/d9cup/enter",
                           data={"version": str(chosen), "csrf_token": token})  # fmt: skip
        assert sent.status_code == status
    page = sent.get_data(as_text=True)
    [message] = [m for m in _flashes(page) if "24 hours" in m]
    assert message.startswith("Competition d9cup takes 1 entries a user in any 24 hours")
    assert "D9cup" not in page


def test_the_organisers_page_and_the_entrants_withdrawal(app: Flask, store: Store) -> None:
    _people(store)
    _cup(store)
    olga, alice = logged_in(app, "olga"), logged_in(app, "alice")
    assert alice.get("/competitions/cup/organiser").status_code == 403
    assert app.test_client().get("/competitions/cup/organiser").status_code == 302  # login
    assert alice.get("/competitions/cup/copies").status_code == 403
    page = olga.get("/competitions/cup/organiser").get_data(as_text=True)
    assert "Action log" in page and "Pause the ladder" in page
    token = csrf_token(olga, "/competitions/cup/organiser")
    deadline = re.search(r'name="deadline" value="([^"]+)"', page)
    assert deadline
    form = {"csrf_token": token, "description": "", "deadline": deadline.group(1),
            "daily_submissions": "5", "min_account_days": "0", "final_top": "4",
            "final_confidence": "0.95", "final_max_games": "14000"}  # fmt: skip
    changed = olga.post("/competitions/cup/settings", data=form, follow_redirects=True)
    assert "Changed: final top from 8 to 4." in _flashes(changed.get_data(as_text=True))
    refused = olga.post("/competitions/cup/settings", data={**form, "final_top": "40"})
    assert refused.status_code == 400
    assert "Final top must be 2 to 32, not 40." in _flashes(refused.get_data(as_text=True))
    said = olga.post("/competitions/cup/announcements",
                     data={"csrf_token": token, "body": "Welcome <all>!"})  # fmt: skip
    assert said.status_code == 302
    assert olga.post("/competitions/cup/pause", data={"csrf_token": token}).status_code == 302
    log = olga.get("/competitions/cup/organiser").get_data(as_text=True)
    assert log.index("pause: ladder") < log.index("settings: final top")  # the latest first
    # everyone reads the announcement (escaped) and the pause; the entrant withdraws
    shown = app.test_client().get("/competitions/cup").get_data(as_text=True)
    assert "Welcome &lt;all&gt;!" in shown and "The ladder is paused since" in shown
    assert "Organiser&#39;s tools" not in shown and "Organiser's tools" not in shown
    version = store.add_bot_version("alice", "greedy", SOURCE, {})[0].id
    entering = {"version": str(version), "csrf_token": csrf_token(alice, "/competitions/cup")}
    assert alice.post("/competitions/cup/enter", data=entering).status_code == 302
    assert "Withdraw from the competition" in alice.get("/competitions/cup").get_data(as_text=True)
    gone = alice.post("/competitions/cup/withdraw", data={"csrf_token": entering["csrf_token"]},
                      follow_redirects=True).get_data(as_text=True)  # fmt: skip
    assert "You withdrew: your versions play no more" in gone and ">withdrawn<" in gone
    again = alice.post("/competitions/cup/withdraw", data={"csrf_token": entering["csrf_token"]},
                       follow_redirects=True).get_data(as_text=True)  # fmt: skip
    assert "You withdrew from competition cup already." in _flashes(again)
    download = app.test_client().get("/competitions/cup/games.jsonl")
    assert download.status_code == 200 and download.mimetype == "application/x-ndjson"
    assert (
        download.get_data() == b"" and "cup-games.jsonl" in download.headers["Content-Disposition"]
    )


def test_the_api_answers_every_refusal_as_json(app: Flask, store: Store) -> None:
    tokens = _people(store)
    _cup(store)
    client = app.test_client()

    def call(method: str, path: str, who: str, **kwargs: object) -> tuple[int, object]:
        headers = {"Authorization": f"Bearer {tokens[who]}"}
        answer = client.open(f"/api/v1/competitions/cup/{path}", method=method,
                             headers=headers, **kwargs)  # type: ignore[arg-type]  # fmt: skip
        body = answer.get_data(as_text=True)
        found = json.loads(body) if answer.is_json else body
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            return answer.status_code, {"error": found["error"]["message"]}
        return answer.status_code, found

    status, body = call("POST", "settings", "olga", json={"final_top": 40})
    assert (status, body) == (400, {"error": "final top must be 2 to 32, not 40."})
    status, body = call("POST", "settings", "olga", json={"final_top": 4, "min_account_days": 2})
    assert status == 200 and {c["what"] for c in body["changes"]} == {  # type: ignore[index]
        "final top", "min account days"
    }  # fmt: skip
    assert call("POST", "settings", "alice", json={"final_top": 5})[0] == 403
    status, body = call("GET", "log", "olga")
    changes = {c["what"]: (c["from"], c["to"]) for c in body["actions"][0]["changes"]}  # type: ignore[index]
    assert status == 200 and changes == {"final top": ("8", "4"), "min account days": ("0", "2")}
    assert call("GET", "log", "alice")[0] == 403
    assert call("POST", "announcements", "olga", json={"body": "Hello"})[0] == 201
    status, body = call("POST", "announcements", "olga", json={"body": " "})
    assert (status, body) == (400, {"error": "write the announcement: it is empty."})
    status, body = call("GET", "announcements", "bob")
    assert [a["body"] for a in body["announcements"]] == ["Hello"]  # type: ignore[index]
    status, body = call("POST", "pause", "olga")
    assert status == 200 and body["paused"]  # type: ignore[index]
    status, body = call("POST", "pause", "olga")
    assert (status, body) == (400, {"error": "the ladder of competition cup is paused already."})
    assert call("POST", "resume", "olga")[1] == {"name": "cup", "paused": None}
    status, body = call("POST", "withdraw", "bob")
    assert (status, body) == (400, {"error": "you have no entry in competition cup to withdraw."})
    status, body = call("GET", "copies", "alice")
    assert status == 403 and "error" in body  # type: ignore[operator]
    status, body = call("GET", "copies?threshold=0.2", "olga")
    assert status == 200 and body["pairs"] == [] and body["scope"] == "every entered version"  # type: ignore[index]
    assert call("GET", "games.jsonl", "bob") == (200, "")
    status, body = call("GET", "../nope/games.jsonl", "bob")
    assert status == 404 and "error" in body  # type: ignore[operator]
