"""Tables through the web (Flask's test client): open one from a bot's page, play it to the
end by posting the moves the state offers (refereed here as a worker would, the reference
bots unsandboxed), the replay and the record, who may see it, and the sentences."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from arena.engine.records import verify_record
from arena.service.accounts import create_account, create_token
from arena.service.matches import Config
from arena.service.tables import run_table
from arena.store.db import Store
from tests.web.conftest import HASHER, PASSWORD, csrf_token, logged_in, store_bots


def _attr(html: str, name: str) -> str:
    found = re.search(rf'id="table-state"[^>]*\b{name}="([^"]*)"', html)
    assert found, f"no {name} in the state"
    return found.group(1)


def _play_out(client: FlaskClient, table_id: int, html: str, token: str) -> str:
    """Post the first move the state offers until the game is over; the last state."""
    for _ in range(300):
        if _attr(html, "data-status") == "done":
            return html
        if not _attr(html, "data-mine"):
            after = _attr(html, "data-after")
            html = client.get(f"/tables/{table_id}/state?after={after}").get_data(as_text=True)
            continue
        move = re.search(r'<button type="button" class="move" data-move="([^"]+)"', html)
        assert move, html
        answer = client.post(
            f"/tables/{table_id}/move",
            data={
                "move": move.group(1),
                "turn": _attr(html, "data-turn"),
                "after": _attr(html, "data-after"),
                "csrf_token": token,
            },
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
        html = answer.get_data(as_text=True)
    raise AssertionError("the game did not end")


def test_a_person_plays_a_bot_from_its_page_to_the_replay(
    app: Flask, store: Store, tables_channel: str, tmp_path: Path
) -> None:
    store_bots(store)
    for name in ("carol", "dave"):
        create_account(store, name, PASSWORD, hasher=HASHER)
    carol = logged_in(app, "carol")
    bot_page = carol.get("/bots/bob/counter").get_data(as_text=True)
    link = re.search(
        r'<a class="button" href="(/tables/new\?bot=\d+)">Play against this bot', bot_page
    )
    assert link, bot_page
    assert "Against people: no game yet." in bot_page
    form = carol.get(link.group(1)).get_data(as_text=True)
    assert "120 seconds for each move" in form
    token = csrf_token(carol, link.group(1))
    bot = link.group(1).rsplit("=", 1)[1]
    opened = carol.post(
        "/tables/new",
        data={"rules": "draw", "players": "2", "seat": "0", "bot": bot, "csrf_token": token},
    )
    assert opened.status_code == 302 and opened.location == "/tables/1"
    page = carol.get("/tables/1").get_data(as_text=True)
    assert "Waiting for a worker to deal" in page
    watch = re.search(r'<code id="watch-url">http://localhost(/tables/1/watch/\w+)</code>', page)
    assert watch, page
    spectator = app.test_client()  # anyone with the link, logged in or not
    assert "Waiting for the worker to deal" in spectator.get(watch.group(1)).get_data(as_text=True)
    assert spectator.get("/tables/1/watch/nope").status_code == 404
    assert spectator.get("/tables/1/watch/nope/state").status_code == 404
    assert logged_in(app, "dave").get("/tables/1").status_code == 404  # not seated there
    assert app.test_client().get("/tables/1").status_code == 302  # to the login page
    stale = carol.post("/tables/1/move", data={"move": "6-6", "turn": "0", "csrf_token": token})
    assert stale.status_code == 400
    assert (
        stale.get_data(as_text=True)
        == "The table's game is waiting for a worker: no move is taken."
    )
    referee = threading.Thread(
        target=run_table,
        args=(store, 1),
        kwargs={"config": Config(bot_cache=tmp_path / "bots"), "sandboxed": False},
    )
    referee.start()
    state = carol.get("/tables/1/state?after=0").get_data(as_text=True)
    watched = spectator.get(f"{watch.group(1)}/state").get_data(as_text=True)
    assert 'data-status="running"' in watched and "data-live" in watched
    assert "Seat 0 · carol" in watched and "Boneyard:" in watched
    hands = watched[watched.index('class="hands"') :]
    assert "data-tile" not in hands  # every hand face down while the round is played
    if _attr(state, "data-mine"):
        wrong = carol.post(
            "/tables/1/move",
            data={"move": "9-9L", "turn": _attr(state, "data-turn"), "csrf_token": token},
        )
        assert wrong.status_code == 400
        assert "is not a legal move here: play one of" in wrong.get_data(as_text=True)
    last = _play_out(carol, 1, state, token)
    referee.join(30)
    assert "Game over: you" in last and "Replay it in the viewer" in last
    over = spectator.get(f"{watch.group(1)}/state").get_data(as_text=True)
    assert "The game is over" in over and "data-live" not in over
    assert "watch-url" not in carol.get("/tables/1").get_data(as_text=True)
    replay = carol.get("/tables/1/replay")
    assert replay.status_code == 200
    assert "carol" in replay.get_data(as_text=True)
    assert carol.get("/tables/1/replay/state?round=1&step=1").status_code == 200
    record = carol.get("/tables/1.json").get_json()
    assert verify_record(record) == []
    assert record["seats"][0] == "carol" and record["seats"][1] == "bob/counter@v1"
    assert record["humans"] == [0]
    after = carol.get("/bots/bob/counter").get_data(as_text=True)
    assert re.search(r"Against people: \d won, \d lost of 1 game \(not rated\)", after)


def test_the_form_says_what_is_wrong(app: Flask, store: Store, tables_channel: str) -> None:
    store_bots(store)
    create_account(store, "carol", PASSWORD, hasher=HASHER)
    carol = logged_in(app, "carol")
    token = csrf_token(carol, "/tables/new")
    for data, sentence in (
        ({"players": "7"}, "Players must be a whole number 2 to 5."),
        ({"players": "4", "teams": "1", "rules": "draw"}, "Draw has no team play with 4 players"),
        ({"players": "2", "seat": "3"}, "Your seat must be 0 to 1, not 3."),
        ({"players": "2", "bot": "x"}, "The bot must be a version&#39;s number, not &#39;x&#39;."),
        ({"players": "2", "bot": "999"}, "No bot version 999 is stored."),
        ({"players": "2", "invite": "1"}, "A second person needs a table of 3 or more seats"),
        ({"players": "2", "rules": "nope"}, "No rule set called &#39;nope&#39;"),
    ):
        answer = carol.post("/tables/new", data={"csrf_token": token, **data})
        assert answer.status_code == 400, data
        assert sentence in answer.get_data(as_text=True), (data, answer.get_data(as_text=True))
    # a leaderboard's row names the bot by owner, name and version
    row = carol.get("/tables/new?owner=bob&name=counter&version=1&rules=block")
    assert row.status_code == 200
    assert re.search(r'name="bot" value="\d+"', row.get_data(as_text=True))
    assert '<option value="block" selected>' in row.get_data(as_text=True)
    missing = carol.get("/tables/new?owner=bob&name=counter&version=9")
    assert missing.status_code == 400
    assert "No bot bob/counter v9 is stored." in missing.get_data(as_text=True)


def test_an_invitation_seats_a_second_person(app: Flask, store: Store, tables_channel: str) -> None:
    store_bots(store)
    for name in ("carol", "dave"):
        create_account(store, name, PASSWORD, hasher=HASHER)
    carol, dave = logged_in(app, "carol"), logged_in(app, "dave")
    token = csrf_token(carol, "/tables/new")
    opened = carol.post(
        "/tables/new",
        data={"rules": "draw", "players": "3", "seat": "0", "invite": "1", "csrf_token": token},
    )
    assert opened.status_code == 302
    page = carol.get(opened.location).get_data(as_text=True)
    assert "Waiting for the invited person to sit down" in page
    link = re.search(r'<code id="invite-url">http://localhost(/tables/1/join/[^<]+)</code>', page)
    assert link, page
    assert dave.get("/tables/1").status_code == 404
    assert "Sit down" in dave.get(link.group(1)).get_data(as_text=True)
    wrong = dave.post("/tables/1/join/nope", data={"csrf_token": csrf_token(dave, link.group(1))})
    assert wrong.status_code == 404
    joined = dave.post(link.group(1), data={"csrf_token": csrf_token(dave, link.group(1))})
    assert joined.status_code == 302 and joined.location == "/tables/1"
    assert "Waiting for a worker to deal" in dave.get("/tables/1").get_data(as_text=True)


def test_a_program_plays_a_table_through_the_api(
    app: Flask, store: Store, tables_channel: str, tmp_path: Path
) -> None:
    """POST /api/v1/tables, then the state and the moves, as the pages do; every refusal
    is the API's JSON error with the service's sentence."""
    store_bots(store)
    carol = create_account(store, "carol", PASSWORD, hasher=HASHER)
    dave = create_account(store, "dave", PASSWORD, hasher=HASHER)

    def bearer(account_id: int, scopes: list[str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {create_token(store, account_id, 't', scopes)}"}

    player, reader = bearer(carol.id, ["read", "upload"]), bearer(carol.id, ["read"])
    client = app.test_client()
    assert client.post("/api/v1/tables", json={}, headers=reader).status_code == 403
    bad = client.post("/api/v1/tables", json={"players": 2, "seat": 3}, headers=player)
    assert bad.status_code == 400
    assert bad.get_json()["error"]["message"] == "your seat must be 0 to 1, not 3"
    opened = client.post("/api/v1/tables", json={"rules": "draw", "seat": 1}, headers=player)
    assert opened.status_code == 201, opened.get_data(as_text=True)
    table = opened.get_json()
    assert table["id"] == 1 and table["join"] is None
    assert table["state"].endswith("/api/v1/tables/1") and "/tables/1/watch/" in table["watch"]
    assert client.get("/api/v1/tables/1", headers=bearer(dave.id, ["read"])).status_code == 404
    assert client.get("/api/v1/tables/1?wait=99", headers=reader).status_code == 422
    referee = threading.Thread(
        target=run_table,
        args=(store, 1),
        kwargs={"config": Config(bot_cache=tmp_path / "bots"), "sandboxed": False},
    )
    referee.start()
    state = client.get("/api/v1/tables/1?after=0&wait=5", headers=reader).get_json()
    moves = 0
    for _ in range(300):
        view = state["view"]
        if view is not None and view["status"] == "done":
            break
        if view is None or view["round"]["to_move"] != 1:
            after = state["view_id"] or "0"
            state = client.get(f"/api/v1/tables/1?after={after}&wait=5", headers=reader).get_json()
            continue
        if moves == 0:
            wrong = client.post(
                "/api/v1/tables/1/moves", json={"turn": view["turn"], "move": "9-9L"},
                headers=player,
            )  # fmt: skip
            assert wrong.status_code == 400
            assert "is not a legal move here" in wrong.get_json()["error"]["message"]
        answer = client.post(
            "/api/v1/tables/1/moves",
            json={"turn": view["turn"], "move": view["round"]["legal_moves"][0]},
            headers=player,
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
        state, moves = answer.get_json(), moves + 1
    referee.join(30)
    assert moves > 0 and state["view"]["status"] == "done" and state["seat"] == 1
    final = client.get("/api/v1/tables/1", headers=reader).get_json()
    assert final["status"] == "done"


def test_sit_down_pressed_twice_opens_one_table(
    app: Flask, store: Store, tables_channel: str
) -> None:
    """The form's one-time token and the API's Idempotency-Key: the same request sent
    again answers with the first table, and opens no second."""
    store_bots(store)
    create_account(store, "carol", PASSWORD, hasher=HASHER)
    client = logged_in(app, "carol")
    form = client.get("/tables/new").get_data(as_text=True)
    found = re.search(r'name="upload_token" value="([^"]+)"', form)
    assert found, form
    data = {"rules": "draw", "players": "2", "seat": "0", "upload_token": found.group(1)}
    data["csrf_token"] = csrf_token(client, "/tables/new")
    first, second = (client.post("/tables/new", data=data) for _ in range(2))
    assert first.status_code == second.status_code == 302
    assert first.location == second.location == "/tables/1"
    fresh = client.post("/tables/new", data={**data, "upload_token": "another"})
    assert fresh.location == "/tables/2"
    # the API: the header sent again answers the first table, said by Idempotent-Replayed
    dave = create_account(store, "dave", PASSWORD, hasher=HASHER)
    token = create_token(store, dave.id, "t", ["read", "upload"])
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "retry-1"}
    api = app.test_client()
    opened, again = (api.post("/api/v1/tables", json={}, headers=headers) for _ in range(2))
    assert opened.status_code == again.status_code == 201
    assert opened.get_json() == again.get_json() and opened.get_json()["id"] == 3
    assert "Idempotent-Replayed" not in opened.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    other = api.post("/api/v1/tables", json={"players": 3}, headers=headers)
    assert other.status_code == 400
    assert (
        "this idempotency key (or form) opened another table (table 3)"
        in (other.get_json()["error"]["message"])
    )
    bad = api.post("/api/v1/tables", json={}, headers={**headers, "Idempotency-Key": "x" * 101})
    assert bad.status_code == 400
    assert "an idempotency key is 1 to 100" in bad.get_json()["error"]["message"]


def test_a_program_takes_an_invited_seat_through_the_api(
    app: Flask, store: Store, tables_channel: str
) -> None:
    """POST /api/v1/tables/ID/join with the invitation's code: join_table, as the page."""
    store_bots(store)
    people = {
        n: create_account(store, n, PASSWORD, hasher=HASHER) for n in ("carol", "dave", "erin")
    }

    def bearer(name: str, scopes: tuple[str, ...] = ("read", "upload")) -> dict[str, str]:
        token = create_token(store, people[name].id, "t", list(scopes))
        return {"Authorization": f"Bearer {token}"}

    api = app.test_client()
    opened = api.post(
        "/api/v1/tables", json={"players": 3, "invite": True}, headers=bearer("carol")
    ).get_json()
    code = opened["join"].rsplit("/", 1)[1]
    dave = bearer("dave")
    for table, body, status, message in (
        (1, {"code": "nope"}, 404, "no table 1 has this invitation"),
        (9, {"code": code}, 404, "no table 9 has this invitation"),
    ):
        answer = api.post(f"/api/v1/tables/{table}/join", json=body, headers=dave)
        assert answer.status_code == status and answer.get_json()["error"]["message"] == message
    assert api.post("/api/v1/tables/1/join", json={}, headers=dave).status_code == 422
    assert api.post("/api/v1/tables/1/join", json={"code": code}).status_code == 401
    reader = bearer("dave", ("read",))
    assert api.post("/api/v1/tables/1/join", json={"code": code}, headers=reader).status_code == 403
    joined = api.post("/api/v1/tables/1/join", json={"code": code}, headers=dave)
    assert joined.status_code == 200, joined.get_data(as_text=True)
    assert joined.get_json()["seat"] == 2 and joined.get_json()["status"] == "pending"
    again = api.post("/api/v1/tables/1/join", json={"code": code}, headers=dave)
    assert again.get_json()["seat"] == 2  # sent again: the same seat
    late = api.post("/api/v1/tables/1/join", json={"code": code}, headers=bearer("erin"))
    assert late.status_code == 400
    assert late.get_json()["error"]["message"] == (
        "this table's seats are all taken, or its game is over"
    )
    assert api.get("/api/v1/tables/1", headers=dave).get_json()["seat"] == 2


def test_a_person_finds_their_open_tables_again(
    app: Flask, store: Store, tables_channel: str
) -> None:
    """/tables and GET /api/v1/tables: the tables a person opened or joined, while open;
    linked from the form where "Sit down" is."""
    store_bots(store)
    people = {n: create_account(store, n, PASSWORD, hasher=HASHER) for n in ("carol", "dave")}
    carol, dave = logged_in(app, "carol"), logged_in(app, "dave")
    assert "You have no table open." in carol.get("/tables").get_data(as_text=True)
    token = csrf_token(carol, "/tables/new")
    seats = {"rules": "block", "players": "3", "seat": "1", "csrf_token": token}
    carol.post("/tables/new", data={**seats, "invite": "1"})
    carol.post("/tables/new", data={**seats, "rules": "draw", "players": "2", "seat": "0"})
    form = carol.get("/tables/new").get_data(as_text=True)
    assert '<a href="/tables">Your open tables</a> (2 open)' in form
    mine = carol.get("/tables").get_data(as_text=True)
    rows = re.findall(r'<a href="/tables/(\d+)">Table \d+</a>', mine)
    assert rows == ["2", "1"]  # newest first
    assert "waiting for the invited person" in mine and "waiting for a worker" in mine
    assert "an invited person" in mine and "carol" in mine
    assert re.findall(r'href="/tables/\d+"', dave.get("/tables").get_data(as_text=True)) == []
    page = carol.get("/tables/1").get_data(as_text=True)
    link = re.search(r'<code id="invite-url">http://localhost(/tables/1/join/[^<]+)</code>', page)
    assert link, page
    dave.post(link.group(1), data={"csrf_token": csrf_token(dave, link.group(1))})
    assert 'href="/tables/1"' in dave.get("/tables").get_data(as_text=True)
    assert app.test_client().get("/tables").status_code == 302  # to the login page
    bearer = {"Authorization": f"Bearer {create_token(store, people['dave'].id, 't', ['read'])}"}
    listed = app.test_client().get("/api/v1/tables", headers=bearer)
    assert listed.status_code == 200, listed.get_data(as_text=True)
    (table,) = listed.get_json()["tables"]
    assert table["id"] == 1 and table["seat"] == 0 and table["status"] == "pending"
    assert table["rules"] == "block" and table["seats"][:2] == ["dave", "carol"]
    assert table["state"].endswith("/api/v1/tables/1") and table["page"].endswith("/tables/1")
    assert app.test_client().get("/api/v1/tables").status_code == 401
