"""Whose address a per-address limit counts (issue 32 items 6 and 7): the connection's by
default, whatever ``X-Forwarded-For`` a client forges; the client's behind
``ARENA_TRUSTED_PROXIES`` reverse proxies, so two clients behind one proxy get a limit each;
and the join page's views are limited per address."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.store.db import Store
from tests.web.conftest import make_app
from web.auth import public
from web.limits import FORM_REFUSAL, address_key

PROXY = "10.0.0.1"


@pytest.fixture
def proxied(store: Store, url: str, tmp_path: Path) -> Iterator[tuple[Flask, Flask]]:
    """Two apps, three views of a join page a minute each: trusting no proxy (the default),
    and trusting one. Each answers ``/test-address`` with the address its limits count."""
    apps = []
    for trusted in (None, "1"):
        config = {"ARENA_JOIN_PAGE_LIMIT": "3 per minute"}
        if trusted is not None:
            config["ARENA_TRUSTED_PROXIES"] = trusted
        app = make_app(url, tmp_path / f"broker{trusted}", **config)
        app.add_url_rule("/test-address", "test_address", public(address_key))
        apps.append(app)
    yield apps[0], apps[1]
    for app in apps:
        app.extensions["arena_store"].close()


def _views(client: FlaskClient, forwarded: list[str]) -> list[int]:
    """The join page's statuses, one view for each ``X-Forwarded-For`` in ``forwarded``."""
    return [
        client.get("/join/ABCD2345", headers={"X-Forwarded-For": header}).status_code
        for header in forwarded
    ]


def test_the_join_page_is_limited_per_address(proxied: tuple[Flask, Flask]) -> None:
    client = proxied[0].test_client()
    assert [client.get("/join/ABCD2345").status_code for _ in range(3)] == [404] * 3
    refused = client.get("/join/abcd-2345")  # however the code is spelt
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert FORM_REFUSAL in refused.get_data(as_text=True)


def test_without_trusted_proxies_a_forged_header_changes_nothing(
    proxied: tuple[Flask, Flask],
) -> None:
    client = proxied[0].test_client()
    forged = client.get("/test-address", headers={"X-Forwarded-For": "203.0.113.9"})
    assert forged.get_data(as_text=True) == "address:127.0.0.1"  # the hashing line's key too
    assert _views(client, ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"]) == [
        404, 404, 404, 429,
    ]  # fmt: skip


def test_behind_a_trusted_proxy_each_client_has_its_own_limit(
    proxied: tuple[Flask, Flask],
) -> None:
    behind = proxied[1].test_client()
    behind.environ_base["REMOTE_ADDR"] = PROXY
    seen = behind.get("/test-address", headers={"X-Forwarded-For": "203.0.113.9"})
    assert seen.get_data(as_text=True) == "address:203.0.113.9"
    assert _views(behind, ["203.0.113.1"] * 4) == [404, 404, 404, 429]
    assert _views(behind, ["203.0.113.2"]) == [404]  # another client, another limit
    # what a client writes before the proxy's own entry is not read
    assert _views(behind, ["198.51.100.7, 203.0.113.1"]) == [429]
    assert _views(behind, [""]) == [404]  # no header: the proxy's own address


@pytest.mark.parametrize("value", ["two", "-1", "11", "1.5"])
def test_a_wrong_count_of_proxies_is_a_sentence(store: Store, url: str, value: str) -> None:
    with pytest.raises(ValueError, match="set it to the number of reverse proxies") as caught:
        make_app(url, Path("/nonexistent"), ARENA_TRUSTED_PROXIES=value)
    assert f"ARENA_TRUSTED_PROXIES is {value!r}" in str(caught.value)
