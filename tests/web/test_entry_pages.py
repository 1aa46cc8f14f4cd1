"""An entrant's submissions on the web (issue 31, item 1): the same file posted twice by the
form or the API (another token or key, another bot name) is one entry, the second post told
why in a sentence; the page's control and the API's route for the versions that go to the
final (limits in sentences, JSON under /api/); the page says how long placement takes."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from celery import Celery
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select, update

from arena.service.accounts import create_token
from arena.service.broker import current
from arena.store.db import Store
from arena.store.models import CompetitionEntry
from tests.web.conftest import csrf_token, logged_in
from tests.web.test_competition_pages import (
    GREEDY,
    account_named,
    accounts_and_bots,
    entered_and_rated,
    open_competition,
)


@pytest.fixture
def app(app: Flask, store: Store) -> Flask:
    accounts_and_bots(store)
    return app


@pytest.fixture
def celery(app: Flask) -> Celery:
    return current()


def _entries(store: Store) -> int:
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(CompetitionEntry)) or 0)


def _form_post(client: FlaskClient, bot: str) -> Any:
    page = client.get("/competitions/cup").get_data(as_text=True)
    token = re.search(r'name="upload_token" value="([^"]+)"', page)
    assert token is not None
    return client.post(
        "/competitions/cup/enter",
        data={"source": (io.BytesIO(GREEDY.encode() + b"# new\n"), f"{bot}.py"),
              "bot_name": bot, "csrf_token": csrf_token(client, "/competitions/cup"),
              "upload_token": token.group(1)},
        content_type="multipart/form-data",
    )  # fmt: skip


def test_the_same_file_posted_by_the_form_and_the_api_is_one_entry(
    app: Flask, store: Store, celery: Celery
) -> None:
    open_competition(store)
    ada = logged_in(app, "ada")
    assert _form_post(ada, "mine").status_code == 302
    # the form again, a new token (the page reloaded), another bot's name: the same bytes
    again = _form_post(ada, "twin")
    assert again.status_code == 400
    said = "twin.py is the same source as your upload 1, still being checked (entry 1 in cup"
    assert said in again.get_data(as_text=True)
    # the API, another Idempotency-Key: the same
    token = create_token(store, account_named(store, "ada").id, "t", ["read", "upload"])
    reply = app.test_client().post(
        "/api/v1/competitions/cup/entries",
        data={"source": (io.BytesIO(GREEDY.encode() + b"# new\n"), "api.py"), "name": "api"},
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "another-key"},
        content_type="multipart/form-data",
    )
    assert reply.status_code == 400
    assert "it costs none of your daily entries" in reply.get_json()["error"]["message"]
    assert _entries(store) == 1


def test_an_entrant_chooses_its_versions_for_the_final_on_the_page_and_the_api(
    app: Flask, store: Store, celery: Celery
) -> None:
    ada_version, bob_version = entered_and_rated(store)
    with store.write() as session:  # as the ladder's clock marks a placed version
        session.execute(update(CompetitionEntry).values(placed=func.now()))
    ada = logged_in(app, "ada")
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "Your versions for the final" in page and "goes" in page
    assert "A new version is placed once it has played 8 ladder games" in page
    path = "/competitions/cup/final-choice"
    reply = ada.post(path, data={"version": [str(ada_version)],
                                 "csrf_token": csrf_token(ada, "/competitions/cup")})  # fmt: skip
    assert reply.status_code == 302
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "Saved: your choice goes to the final; as things stand: ada/greedy v1." in page
    reply = ada.post(path, data={"version": [str(bob_version)],
                                 "csrf_token": csrf_token(ada, "/competitions/cup")})  # fmt: skip
    assert reply.status_code == 400
    assert f"Version {bob_version} is not one of your versions in cup" in reply.get_data(
        as_text=True
    )
    anonymous = app.test_client()
    form = {"version": ["1"], "csrf_token": csrf_token(anonymous)}
    reply = anonymous.post(path, data=form)
    assert reply.status_code == 302 and "/login" in reply.headers["Location"]
    # the API: read it, too many, a negative id, the default again
    token = create_token(store, account_named(store, "ada").id, "t", ["read", "upload"])
    api = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    url = "/api/v1/competitions/cup/final-choice"
    shown = api.get(url, headers=headers).get_json()
    assert (shown["limit"], shown["chosen"]) == (2, [ada_version])
    too_many = api.put(url, json={"versions": [1, 2, 3]}, headers=headers)
    assert too_many.status_code == 400
    assert too_many.get_json()["error"]["message"] == (
        "cup takes at most 2 of an entrant's versions to its final: you chose 3."
    )
    assert api.put(url, json={"versions": [-1]}, headers=headers).status_code == 400
    back = api.put(url, json={"versions": []}, headers=headers)
    assert back.status_code == 200 and back.get_json()["chosen"] == []
    assert api.put(url, json={"versions": []}).status_code == 401
