"""``arena remote``: talk to an arena server's JSON API (docs/api.md) from a bot author's
machine or CI: upload a version, follow its check, and test it against another bot.

The token comes from ``$ARENA_TOKEN`` (made on the account page, with the ``read`` and
``upload`` scopes, and ``run`` to start a compare), never from an option, so it stays out of
shell histories and CI logs. Exit statuses are ``arena compare``'s: 0 accepted (and passed),
1 rejected (or failed), 2 undecided (or cancelled before its test decided), 64 a mistake in
the command or a request the server refused, 69 the server cannot be reached.

Polling outlives a dropped connection: a server closes a kept-alive connection when it has
been idle for its keep-alive time (gunicorn: 2 s, our poll's interval), and a request sent
on it just then gets no answer ("Server disconnected without sending a response") or a
reset. So idle connections are not kept past :data:`KEEPALIVE_SECONDS`, and a GET (safe to
repeat) whose connection fails, or that a proxy answers 502-504, is sent again after
:data:`RETRY_DELAYS`; a POST only when it never left (the connection could not be made).
``ARENA_DEBUG=1`` prints each retry's cause, and the traceback of the last failure.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli.common import (
    FAILED,
    MOVE_SECONDS,
    OK,
    UNDECIDED,
    UnavailableError,
    UsageError,
    elo0_option,
    elo1_option,
    runtime_option,
)
from arena.cli.compare import figures
from arena.compete.testspec import STATISTICS

# httpx is imported as a command talks to a server, not by its --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    import httpx

__all__ = ["remote_group"]

#: Seconds between two looks at a pending check or a running compare.
POLL_SECONDS = 2.0
#: Seconds an idle connection is kept for the next request: below the servers' keep-alive
#: time (gunicorn's default 2 s), so a poll opens a new connection rather than racing the
#: server's close of an old one.
KEEPALIVE_SECONDS = 1.0
#: Seconds before each new try of a request that may be sent again (see the module's doc).
RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0)


def retried(safe: bool) -> tuple[type[Exception], ...]:
    """The failures after which a request is sent again: for any request, those after which
    nothing reached the server; for one ``safe`` to repeat (a GET), also those of a sent
    request whose connection dropped or was reset, with no answer."""
    import httpx

    not_sent = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
    return (*not_sent, httpx.NetworkError, httpx.RemoteProtocolError) if safe else not_sent


#: Answers of a proxy in front of a server restarting: a GET tries again.
GATEWAY_STATUSES = frozenset({502, 503, 504})


@click.group("remote", short_help="Upload and test bots on an arena server.")
def remote_group() -> None:
    """Talk to an arena server's API (docs/api.md); the token is $ARENA_TOKEN."""


class _Server:
    """The API of the server at ``base``, with the token from the environment."""

    def __init__(self, base: str, timeout: float) -> None:
        import httpx

        token = os.environ.get("ARENA_TOKEN", "").strip()
        if not token:
            raise UsageError(
                "set ARENA_TOKEN to an API token: make one on the server's account page "
                "(/account/tokens) with the read and upload scopes (and run, to compare)"
            )
        if not base.startswith(("http://", "https://")):
            raise UsageError(f"--server must be an http:// or https:// URL, not {base!r}")
        self.base = base.rstrip("/")
        self.client = httpx.Client(
            base_url=self.base + "/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS),
        )

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer; a refused request is a :class:`UsageError` with the server's
        message, an unreachable or failing server an :class:`UnavailableError` (after the
        retries the module's docstring describes)."""
        return self.answer(self._send(method, path, **kwargs))

    def answer(self, response: httpx.Response) -> Any:
        """:meth:`call`'s reading of the server's answer."""
        if response.status_code >= 500:
            raise UnavailableError(f"{self.base} answered {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            raise UnavailableError(
                f"{self.base} answered {response.status_code} without JSON: is it an arena server?"
            ) from None
        if response.status_code >= 400:
            message = body.get("error", {}).get("message") if isinstance(body, dict) else None
            raise UsageError(f"the server refused: {message or response.status_code}")
        return body

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The server's answer to the request, tried again after each of
        :data:`RETRY_DELAYS` while it fails in a way that repeating it is safe for."""
        # A POST with an Idempotency-Key is as safe to repeat as a GET: the server answers a
        # repeated key with the first upload (docs/api.md).
        import httpx

        safe = method in ("GET", "HEAD") or "Idempotency-Key" in kwargs.get("headers", {})
        again = retried(safe)
        for delay in (*RETRY_DELAYS, None):
            try:
                response = self.client.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                if delay is None or not isinstance(exc, again):
                    _debug_traceback()
                    cause = f"{type(exc).__name__}: {exc}"
                    raise UnavailableError(
                        f"cannot reach {self.base} ({method} {path}): {cause}"
                    ) from None
                _debug(f"{method} {path} failed ({type(exc).__name__}: {exc}); again in {delay} s")
            else:
                if delay is None or method != "GET" or response.status_code not in GATEWAY_STATUSES:
                    return response
                _debug(f"{method} {path} answered {response.status_code}; again in {delay} s")
            time.sleep(delay)
        raise AssertionError("unreachable")  # the last try returns or raises


def _debug(message: str) -> None:
    """With ``ARENA_DEBUG`` set, ``message`` on stderr."""
    if os.environ.get("ARENA_DEBUG"):
        click.echo(f"arena remote: {message}", err=True)


def _debug_traceback() -> None:
    """With ``ARENA_DEBUG`` set, the exception being handled's traceback on stderr."""
    if os.environ.get("ARENA_DEBUG"):
        traceback.print_exc(file=sys.stderr)


def _wait(what: str, deadline: float) -> None:
    if time.monotonic() > deadline:
        raise UnavailableError(f"{what} has not finished within --timeout; it goes on")
    time.sleep(POLL_SECONDS)


def _table(players: int | None, teams: bool, move_time: float | None) -> dict[str, Any]:
    """The compare's seats and time a move as the API takes them (the server's defaults for
    those not given)."""
    table: dict[str, Any] = {}
    if players is not None or teams:
        table["players"] = 4 if teams and players is None else players
    if teams:
        table["teams"] = True
    if move_time is not None:
        table["move_ms"] = round(move_time * 1000)
    return table


@remote_group.command("push", short_help="Upload a bot version; optionally compare it.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--server",
    envvar="ARENA_SERVER",
    required=True,
    help="The arena's URL (or $ARENA_SERVER), e.g. https://arena.example.org.",
)
@click.option(
    "--name", default="", help="The bot's name (default: the NAME the file sets, else its stem)."
)
@click.option(
    "--compare",
    "old",
    metavar="OLD",
    help="Then test the new version against OLD (OWNER/NAME[@VERSION]) under --rules.",
)
@click.option(
    "--rules",
    help="The compare's rule set: a preset or any the server stores, NAME or NAME@VERSION "
    "(its /rules page; a competition's kit names its own).",
)
@click.option("--players", type=click.IntRange(2, 9), default=None, help="Seats (default: 2).")
@click.option("--teams", is_flag=True, help="2v2 (4 players): NEW and OLD each partner a copy.")
@click.option(
    "--move-time", type=MOVE_SECONDS, default=None, help="The compare's seconds a move (1)."
)
@runtime_option
@click.option(
    "--statistic",
    type=click.Choice(STATISTICS),
    default="margin",
    show_default=True,
    help="What the compare's test counts (as arena compare --statistic).",
)
@elo0_option
@elo1_option
@click.option(
    "--max-games",
    type=click.IntRange(2, 20000),
    default=2000,
    show_default=True,
    help="The compare plays at most this many games.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 86400),
    default=3600,
    show_default=True,
    help="Seconds to wait for the check and the compare.",
)
def remote_push_command(
    file: Path,
    server: str,
    name: str,
    old: str | None,
    rules: str | None,
    players: int | None,
    teams: bool,
    move_time: float | None,
    runtime: str | None,
    statistic: str,
    elo0: float,
    elo1: float,
    max_games: int,
    timeout: float,
) -> int:
    """Upload FILE as a new version of your bot, wait for the server's sandboxed check, and
    with --compare, test the new version against OLD until the sequential test decides.
    Exit status: 0 accepted (or already stored) and, with --compare, passed; 1 rejected or
    failed; 2 undecided."""
    if old is not None and not rules:
        raise UsageError("--compare needs --rules (the rule set to compare under)")
    if old is None and (rules or players is not None or teams or move_time is not None):
        raise UsageError("--rules, --players, --teams and --move-time are for --compare")
    api = _Server(server, timeout=60.0)
    with api.client:  # its connections closed as the command ends, run in-process too
        deadline = time.monotonic() + timeout
        source = file.read_bytes()  # bytes, not the open file: a retried POST sends it all again
        form = {"name": name, **({"runtime": runtime} if runtime else {})}
        # one key for this push: a POST retried after its answer was lost makes one upload
        key = {"Idempotency-Key": uuid.uuid4().hex}
        response = api._send(
            "POST", "/bots", files={"source": (file.name, source)}, data=form, headers=key
        )
        upload = api.answer(response)
        how = (
            "already received"
            if response.headers.get("Idempotent-Replayed") == "true"
            else "uploaded"
        )
        click.echo(
            f"{how} {file.name} as {upload['owner']}/{upload['bot']} (upload {upload['id']})"
        )
        while upload["status"] == "pending":
            _wait("the check", deadline)
            upload = api.call("GET", f"/uploads/{upload['id']}")
        bot = f"{upload['owner']}/{upload['bot']}"
        if upload["status"] == "rejected":
            click.echo(f"{bot}: rejected: {upload['message']}")
            return FAILED
        word = "accepted as" if upload["status"] == "accepted" else "already stored as"
        click.echo(f"{bot}: {word} version {upload['version']}")
        if old is None:
            return OK
        new = f"{bot}@{upload['version']}"
        compare = api.call(
            "POST",
            "/compares",
            json={
                "new": new, "old": old, "rules": rules, "statistic": statistic, "elo0": elo0,
                "elo1": elo1, "max_games": max_games, **_table(players, teams, move_time),
            },
        )  # fmt: skip
        click.echo(f"compare {new} against {old} under {rules}: {api.base}{compare['url']}")
        shown = -1
        while compare["verdict"] == "running":
            _wait("the compare", deadline)
            compare = api.call("GET", f"/compares/{compare['name']}")
            shown_figures = figures(compare)
            if compare["games"] != shown and shown_figures is not None:
                shown = compare["games"]
                click.echo(" | ".join([f"games {compare['games']:>6}", *shown_figures]))
        verdict = compare["verdict"]
        if verdict == "cancelled":  # ended before its test decided: say why
            click.echo(
                f"NEW undecided: the compare ended before its test decided ({compare['problem']}), "
                f"after {compare['games']} games"
            )
        else:
            click.echo(f"NEW {verdict} ({compare['games']} games)")
        return {"passed": OK, "failed": FAILED}.get(verdict, UNDECIDED)
