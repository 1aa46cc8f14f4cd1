"""The competition pages (web/competitions.py): every page renders on both databases, the
creation form reads its dates in the chosen time zone and says what is wrong, the entry
form, the organiser's controls, and who may do what (anonymous visitors create, enter and
manage nothing; a user manages no one else's competition; an entrant never sees another's
private source or faults)."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from celery import Celery
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from arena.service.accounts import Account, authenticate, create_account
from arena.service.broker import current
from arena.service.clock import tick_competitions
from arena.service.competitions import (
    CompetitionError,
    NewCompetition,
    close_now,
    competition_view,
    create_competition,
    enter_with_version,
)
from arena.service.matches import Config, run_match
from arena.service.permissions import OPERATOR
from arena.service.work import accept_upload
from arena.store.db import Store
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionRating,
    Match,
    Tournament,
    User,
)
from arena.store.queue import add_match_seats
from tests.paths import REFERENCE_BOTS, ZOO
from tests.web.conftest import HASHER, PASSWORD, RULES, csrf_token, logged_in
from web.competitions import countdown, parse_local, zoned


def test_dates_are_shown_in_the_competitions_zone() -> None:
    moment = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
    assert zoned(moment, "Europe/Paris") == "2026-12-01 18:00 CET"
    assert zoned(moment, "America/New_York") == "2026-12-01 12:00 EST"
    assert zoned(moment, "UTC") == "2026-12-01 17:00 UTC"
    assert zoned(moment, "Nowhere/Atlantis") == "2026-12-01 17:00 UTC"
    assert zoned(None) == ""


def test_a_countdown_before_the_script_ticks() -> None:
    now = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
    assert countdown(now + timedelta(days=2, hours=3, minutes=4, seconds=5), now) == (
        "2 d 03:04:05"
    )
    assert countdown(now + timedelta(minutes=1), now) == "00:01:00"
    assert countdown(now, now) == "passed"
    # the page's "left" follows the time, never "passed" (issue 31: "passed left")
    assert countdown(now + timedelta(minutes=1), now, " left") == "00:01:00 left"
    assert countdown(now, now, " left") == "passed"
    assert countdown(now - timedelta(days=1), now) == "passed"


def test_the_forms_local_times_are_read_in_the_chosen_zone() -> None:
    assert parse_local("2026-12-01T18:00", "Europe/Paris", "deadline") == datetime(
        2026, 12, 1, 17, 0, tzinfo=UTC
    )
    assert parse_local("2026-07-01T18:00", "Europe/Paris", "deadline") == datetime(
        2026, 7, 1, 16, 0, tzinfo=UTC
    )  # summer time
    with pytest.raises(CompetitionError, match="deadline must be a date and time"):
        parse_local("tomorrow", "UTC", "deadline")
    with pytest.raises(CompetitionError, match="is no time zone"):
        parse_local("2026-12-01T18:00", "Mars/Olympus", "deadline")


# --- on both databases ------------------------------------------------------------------------

GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()
RANDOM = (REFERENCE_BOTS / "random.py").read_text()
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def app(app: Flask, store: Store) -> Flask:
    """tests/web/conftest.py's app with :func:`accounts_and_bots`."""
    accounts_and_bots(store)
    return app


def accounts_and_bots(store: Store) -> None:
    """Users ada and bob, organisers olga and otto, admin root; ada/greedy and bob/rando."""
    for name, role in (("ada", "user"), ("bob", "user"), ("olga", "organiser"),
                       ("otto", "organiser"), ("root", "admin")):  # fmt: skip
        create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    store.add_bot_version("ada", "greedy", GREEDY, {})
    store.add_bot_version("bob", "rando", RANDOM, {})


@pytest.fixture
def celery(app: Flask) -> Celery:
    """The service's broker (the app's fixture made it)."""
    return current()


def account_named(store: Store, name: str) -> Account:
    found = authenticate(store, name, PASSWORD, hasher=HASHER)
    assert found is not None
    return found


def open_competition(store: Store, name: str = "cup", **changes: Any) -> None:
    """olga's competition ``name``, open since an hour, deadline in a week (Paris time)."""
    new = NewCompetition(
        name=name,
        opens=NOW - timedelta(hours=1),
        deadline=NOW + timedelta(days=7),
        time_zone="Europe/Paris",
        description="Beat greedy.",
    )
    create_competition(store, account_named(store, "olga"), replace(new, **changes))


def version_id_of(store: Store, owner: str, bot: str) -> int:
    with store.read() as session:
        found = session.scalar(
            select(BotVersion.id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(User.name == owner, Bot.name == bot)
        )
    assert found is not None
    return found


def rate_ladder(store: Store, name: str, fits: list[dict[str, Any]]) -> None:
    """Store a ladder fit as the scheduler would: ``fits`` in order, with a history point
    each (two for the first)."""
    with store.write() as session:
        competition = session.scalars(select(Competition).where(Competition.name == name)).one()
        competition.standings = fits
        competition.standings_computed = NOW
        for fit in fits:
            for back, games in ((2, fit["games"] // 2), (1, fit["games"])):
                session.add(
                    CompetitionRating(
                        competition_id=competition.id,
                        bot_version_id=fit["version_id"],
                        rating=fit["rating"] - 10 * back,
                        low=fit["low"],
                        high=fit["high"],
                        games=games,
                        rank=fit["rank"],
                        time=NOW - timedelta(minutes=back),
                    )
                )


def entered_and_rated(store: Store) -> tuple[int, int]:
    """The cup with ada's and bob's versions entered and rated (ada best, bob provisional);
    their version ids."""
    open_competition(store)
    ada, bob = version_id_of(store, "ada", "greedy"), version_id_of(store, "bob", "rando")
    enter_with_version(store, account_named(store, "ada"), "cup", ada)
    enter_with_version(store, account_named(store, "bob"), "cup", bob)
    rate_ladder(
        store,
        "cup",
        [
            {"version_id": ada, "rating": 1580.0, "low": 1500.0, "high": 1660.0, "games": 40,
             "rank": 1, "rank_best": 1, "rank_worst": 2, "provisional": False,
             "last_game": NOW.isoformat()},
            {"version_id": bob, "rating": 1420.0, "low": 1300.0, "high": 1540.0, "games": 12,
             "rank": 2, "rank_best": 1, "rank_worst": 2, "provisional": True},
        ],
    )  # fmt: skip
    return ada, bob


def play_ladder_match(store: Store, name: str, versions: list[int], cache: Path) -> int:
    """One ladder match between ``versions`` (2 games, seats as given), added and played
    as the scheduler and a worker would; its id (one a tournament: its seat index is
    written for the whole tournament)."""
    view = competition_view(store, None, name)
    labels = {row.version_id: row.label for row in view.standings}
    with store.write() as session:
        ladder = session.scalars(select(Tournament).where(Tournament.name == view.ladder)).one()
        match = Match(
            tournament_id=ladder.id, key=f"test-{len(versions)}-{versions[0]}", seats=versions,
            labels=[labels[v] for v in versions], games=2, seed=7,
        )  # fmt: skip
        session.add(match)
        session.flush()
        match_id = match.id
        add_match_seats(session, ladder.id)  # as the store adds any match (its seat index)
    assert run_match(store, match_id, config=Config(bot_cache=cache), sandboxed=False) == "done"
    return match_id


def _post(client: FlaskClient, path: str, page: str, **fields: Any) -> TestResponse:
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, page)})


def test_the_list_and_the_page_render_with_the_ladder(app: Flask, store: Store) -> None:
    ada, bob = entered_and_rated(store)
    anonymous = app.test_client()
    listing = anonymous.get("/competitions").get_data(as_text=True)
    assert 'href="/competitions/cup"' in listing and "open" in listing
    deadline = (NOW + timedelta(days=7)).astimezone(ZoneInfo("Europe/Paris"))
    assert deadline.strftime("%Y-%m-%d %H:%M %Z") in listing
    assert "data-countdown" in listing and "New competition" not in listing
    assert 'href="/competitions"' in listing  # the nav link
    reply = anonymous.get("/competitions/cup")
    assert reply.status_code == 200
    page = reply.get_data(as_text=True)
    assert "Beat greedy." in page and "organised by olga" in page
    assert deadline.strftime("%Y-%m-%d %H:%M %Z") in page and "Europe/Paris" in page
    ladder = page[page.index('<table class="list ladder') :]
    ladder = ladder[: ladder.index("</table>")]
    assert ladder.index("ada/greedy v1") < ladder.index("bob/rando v1")
    assert ladder.count("1\u20132") == 2  # the rank ranges (an en dash)
    assert 'href="/bots/ada/greedy"' in ladder and "1580" in ladder and "1500 to 1660" in ladder
    assert ladder.count('class="interval') == 2 and "interval provisional" in ladder
    assert ladder.count("provisional</span>") == 1  # bob's row only
    assert 'href="/competitions/cup/entrants/ada-greedy-v1"' in ladder
    assert "data-live" in page  # open: it polls
    exports = re.findall(r'href="(/competitions/cup/[a-z]+\.(?:csv|json))"', page)
    assert exports == ["/competitions/cup/ladder.csv", "/competitions/cup/ladder.json"]
    csv_rows = anonymous.get(exports[0]).get_data(as_text=True).splitlines()
    assert csv_rows[0].startswith("rank,rank_best,rank_worst,name,version_id,label")
    assert csv_rows[1].startswith("1,1,2,ada/greedy v1,") and len(csv_rows) == 3
    rows = anonymous.get(exports[1]).get_json()["rows"]
    assert [r["name"] for r in rows] == ["ada/greedy v1", "bob/rando v1"]
    assert rows[0]["last_game"] == NOW.isoformat()
    for forbidden in ("Log out", "Enter the competition", "Organiser", "Disqualify"):
        assert forbidden not in page
    live = anonymous.get("/competitions/cup/live").get_data(as_text=True)
    assert live.startswith('<div id="live"') or live.lstrip().startswith('<div id="live"')
    assert "ada/greedy v1" in live and "<html" not in live
    assert anonymous.get("/competitions/nope").status_code == 404
    del ada, bob


def test_an_entrants_page_has_its_rating_history_and_games(
    app: Flask, store: Store, tmp_path: Path
) -> None:
    ada, bob = entered_and_rated(store)
    client = app.test_client()
    assert "No games yet." in client.get("/competitions/cup/entrants/ada-greedy-v1").get_data(
        as_text=True
    )
    match_id = play_ladder_match(store, "cup", [ada, bob], tmp_path / "cache")
    page = client.get("/competitions/cup").get_data(as_text=True)
    recent = page[page.index('<table class="list games recent">') :]
    assert f'href="/games/{match_id}/0"' in recent and "ladder" in recent
    assert "ada/greedy v1 · bob/rando v1" in recent
    for key in ("ada-greedy-v1", str(ada)):
        reply = client.get(f"/competitions/cup/entrants/{key}")
        assert reply.status_code == 200
        page = reply.get_data(as_text=True)
        assert "ada/greedy v1" in page and 'class="rating-chart"' in page
        assert "uPlot.iife.min.js" in page and "1570" in page and "1580" in page
        assert page.count(f'href="/games/{match_id}/') == 2  # its two games, to replay
    assert client.get("/competitions/cup/entrants/nobody").status_code == 404
    assert client.get("/competitions/nope/entrants/1").status_code == 404


def test_the_final_announces_its_winners_with_ties_marked(app: Flask, store: Store) -> None:
    ada, bob = entered_and_rated(store)
    with store.write() as session:
        competition = session.scalars(select(Competition)).one()
        competition.status = "done"
        competition.final_table = [
            {"version_id": ada, "label": "ada-greedy-v1", "place": 1, "rating": 1560.0,
             "low": 1500.0, "high": 1620.0, "games": 300, "separated_from_next": False},
            {"version_id": bob, "label": "bob-rando-v1", "place": 1, "rating": 1440.0,
             "low": 1380.0, "high": 1500.0, "games": 300, "separated_from_next": None},
        ]  # fmt: skip
    page = logged_in(app, "ada").get("/competitions/cup").get_data(as_text=True)
    winners = page[page.index('class="winners"') : page.index("</ol>")]
    assert "ada/greedy v1" in winners and "bob/rando v1" in winners and "1=" in winners
    assert page.count('<tr class="tie">') == 2 and "final table" in page
    assert "The final is done" in page  # ada's notice
    assert "data-live" not in page  # done: no polling
    assert 'href="/competitions/cup/final.csv"' in page
    final = app.test_client().get("/competitions/cup/final.json").get_json()["rows"]
    assert [(r["place"], r["name"]) for r in final] == [(1, "ada/greedy v1"), (1, "bob/rando v1")]
    assert "Enter the competition" not in page


def test_an_organiser_creates_a_competition_in_her_time_zone(app: Flask, store: Store) -> None:
    olga = logged_in(app, "olga")
    assert "New competition" in olga.get("/competitions").get_data(as_text=True)
    form = olga.get("/competitions/new").get_data(as_text=True)
    assert 'name="deadline" type="datetime-local"' in form and "data-browser-zone" in form
    assert '<option value="Europe/Paris">' in form and '<option value="2v2">' in form
    reply = _post(
        olga, "/competitions/new", "/competitions/new",
        name="winter", rules="muggins", players="2v2", move_ms="500", memory_mb="128",
        runtimes="python", time_zone="Europe/Paris", opens="", deadline="2030-01-15T18:00",
        daily_submissions="3", sources_public="1", games_per_deal="4", final_top="4",
        final_confidence="0.9", final_max_games="500", description="Cold cup.",
    )  # fmt: skip
    assert reply.status_code == 302, reply.get_data(as_text=True)
    assert reply.headers["Location"] == "/competitions/winter"
    with store.read() as session:
        stored = session.scalars(select(Competition)).one()
    assert stored.deadline.replace(tzinfo=UTC) == datetime(2030, 1, 15, 17, 0, tzinfo=UTC)
    assert (stored.time_zone, stored.players, stored.teams) == ("Europe/Paris", 4, True)
    assert (stored.daily_submissions, stored.sources_public, stored.final_top) == (3, True, 4)
    assert stored.settings["move_seconds"] == 0.5 and stored.settings["games_per_deal"] == 4
    page = olga.get("/competitions/winter").get_data(as_text=True)
    assert "2030-01-15 18:00 CET" in page and "Cold cup." in page and "2 against 2" in page
    assert "Competition winter created." in page and "Extend the deadline" in page
    # the time control as the workers enforce it (tests/match/test_time_rule.py)
    assert (
        "500 ms of CPU time a move (the bot&#39;s whole process tree), with a bank of 5 s a game "
        "for moves over it; 1.5 s of wall-clock time a move, with a wall-clock bank of 15 s a "
        "game beyond it; a move that finds either bank spent loses its game (timeout)"
    ) in page


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"deadline": ""}, "Choose a deadline."),
        ({"deadline": "soon"}, "The deadline must be a date and time like"),
        ({"players": "6"}, "Players must be 2 to 5, not 6."),
        ({"deadline": "2020-01-01T00:00"}, "must come after the opening"),
        ({"final_top": "many"}, "Final top must be a whole number, not &#39;many&#39;."),
        ({"name": "a b"}, "is not a valid name"),
        ({"time_zone": "Mars/Olympus"}, "is no time zone"),
    ],
)
def test_a_refused_form_comes_back_with_the_sentence_and_what_was_typed(
    app: Flask, store: Store, fields: dict[str, str], message: str
) -> None:
    olga = logged_in(app, "olga")
    form = {"name": "spring", "rules": "draw", "players": "2", "runtimes": "python",
            "time_zone": "Asia/Tokyo", "deadline": "2030-01-15T18:00",
            "description": "kept as typed", **fields}  # fmt: skip
    reply = _post(olga, "/competitions/new", "/competitions/new", **form)
    assert reply.status_code == 400
    page = reply.get_data(as_text=True)
    assert message in page, page[page.find("flashes") :][:300]
    assert "kept as typed" in page
    assert ('<option value="Asia/Tokyo" selected>' in page) == (form["time_zone"] == "Asia/Tokyo")
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(Competition)) == 0


def test_a_user_enters_with_a_file_or_a_version(app: Flask, store: Store, celery: Celery) -> None:
    open_competition(store)
    ada = logged_in(app, "ada")
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "Enter the competition" in page and "ada/greedy v1" in page  # her version offered
    assert "bob/rando" not in page  # nobody else's
    token = re.search(r'name="upload_token" value="([^"]+)"', page)
    assert token is not None  # the form's one-time token: sent twice, one entry
    form_csrf = csrf_token(ada, "/competitions/cup")
    for _ in range(2):
        reply = ada.post(
            "/competitions/cup/enter",
            data={"source": (io.BytesIO(GREEDY.encode() + b"\n# v2\n"), "mine.py"),
                  "bot_name": "mine", "csrf_token": form_csrf, "upload_token": token.group(1)},
            content_type="multipart/form-data",
        )  # fmt: skip
        assert reply.status_code == 302
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "Received mine.py" in page and "Your upload is being checked." in page
    assert "Already received: mine.py as upload" in page
    [upload_id] = re.findall(r'href="/uploads/(\d+)"', page)
    assert accept_upload(store, int(upload_id), config=Config(), sandboxed=False) == ("accepted")
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "ada/mine v1 was accepted at" in page and "Europe/Paris" in page
    assert 'href="/bots/ada/mine"' in page  # on the ladder, not rated yet
    version = version_id_of(store, "ada", "greedy")
    reply = _post(ada, "/competitions/cup/enter", "/competitions/cup", version=str(version))
    assert reply.status_code == 302
    page = ada.get("/competitions/cup").get_data(as_text=True)
    assert "plays on the ladder now" in page
    assert '<span class="status superseded">' in page and '<span class="status active">' in page
    # neither: one sentence, the page again
    reply = _post(ada, "/competitions/cup/enter", "/competitions/cup")
    assert reply.status_code == 400
    assert (
        "Choose a bot file to upload (a .py, .js, .cpp, .c, .go, .rs or .java file), or one of "
        "your versions." in reply.get_data(as_text=True)
    )
    # someone else's version: refused as not found
    bob = version_id_of(store, "bob", "rando")
    reply = _post(ada, "/competitions/cup/enter", "/competitions/cup", version=str(bob))
    assert reply.status_code == 404


def test_an_entrant_never_sees_anothers_private_source_or_faults(
    app: Flask, store: Store, celery: Celery
) -> None:
    entered_and_rated(store)
    bob = logged_in(app, "bob")
    crash = (ZOO / "exit_at_import.py").read_bytes()
    bob.post(
        "/competitions/cup/enter",
        data={"source": (io.BytesIO(crash), "crash.py"),
              "csrf_token": csrf_token(bob, "/competitions/cup")},
        content_type="multipart/form-data",
    )  # fmt: skip
    [entry] = [e for e in competition_view(store, account_named(store, "bob"), "cup").entries
               if e.status == "pending"]  # fmt: skip
    assert entry.upload_id is not None
    accept_upload(store, entry.upload_id, config=Config(), sandboxed=False)
    own = bob.get("/competitions/cup").get_data(as_text=True)
    assert "Rejected:" in own  # bob sees why his own entry was refused
    for who in ("ada", "otto", None):
        client = logged_in(app, who)
        for path in ("/competitions/cup", "/competitions/cup/live",
                     "/competitions/cup/entrants/bob-rando-v1"):  # fmt: skip
            page = client.get(path).get_data(as_text=True)
            assert "Rejected" not in page and "crash.py" not in page, (who, path)
            assert "/source" not in page and "def play" not in page, (who, path)


MANAGE = [
    ("/competitions/cup/close", {}),
    ("/competitions/cup/deadline", {"deadline": "2031-01-01T12:00"}),
    ("/competitions/cup/disqualify", {"version": "VERSION", "reason": "copied"}),
    ("/competitions/cup/rerun", {}),
]


@pytest.mark.parametrize(("path", "fields"), MANAGE)
def test_only_the_organiser_and_admins_manage_a_competition(
    app: Flask, store: Store, path: str, fields: dict[str, str]
) -> None:
    ada, _ = entered_and_rated(store)
    data = {k: str(ada) if v == "VERSION" else v for k, v in fields.items()}
    before = competition_view(store, None, "cup")
    for who, status in ((None, 302), ("ada", 403), ("otto", 403)):
        client = logged_in(app, who)
        reply = _post(client, path, "/competitions/cup" if who else "/login", **data)
        assert reply.status_code == status, (who, reply.get_data(as_text=True)[:300])
        if who is None:
            assert reply.headers["Location"].startswith("/login")
        else:
            page = client.get("/competitions/cup").get_data(as_text=True)
            assert "Extend the deadline" not in page and "Disqualify" not in page
    assert competition_view(store, None, "cup") == before  # nothing changed
    owner = "root" if path.endswith("rerun") else "olga"
    reply = _post(logged_in(app, owner), path, "/competitions/cup", **data)
    # the rerun of a final that has not started is refused, in a sentence, on the page
    assert reply.status_code == (400 if path.endswith("rerun") else 302)


def test_anonymous_visitors_neither_create_nor_enter(app: Flask, store: Store) -> None:
    open_competition(store)
    anonymous = app.test_client()
    reply = anonymous.get("/competitions/new")
    assert reply.status_code == 302 and reply.headers["Location"].startswith("/login")
    for path in ("/competitions/new", "/competitions/cup/enter"):
        reply = _post(anonymous, path, "/login", name="x", deadline="2030-01-01T00:00")
        assert reply.status_code == 302 and reply.headers["Location"].startswith("/login")
    ada = logged_in(app, "ada")
    assert ada.get("/competitions/new").status_code == 403
    assert _post(ada, "/competitions/new", "/competitions", name="x").status_code == 403
    page = anonymous.get("/competitions/cup").get_data(as_text=True)
    assert "Log in</a> to enter a bot" in page


def test_the_organiser_disqualifies_and_the_row_says_why(app: Flask, store: Store) -> None:
    ada, _ = entered_and_rated(store)
    olga = logged_in(app, "olga")
    page = olga.get("/competitions/cup").get_data(as_text=True)
    assert "Close now" in page and "Extend the deadline" in page and "data-confirm" in page
    deadline = (NOW + timedelta(days=7)).astimezone(ZoneInfo("Europe/Paris"))
    assert f'value="{deadline:%Y-%m-%dT%H:%M}" required' in page  # the current one, to edit
    reply = _post(olga, "/competitions/cup/disqualify", "/competitions/cup",
                  version=str(ada), reason="Copied from bob")  # fmt: skip
    assert reply.status_code == 302
    page = app.test_client().get("/competitions/cup").get_data(as_text=True)
    row = page[page.index("ada/greedy v1") :]
    row = row[: row.index("</tr>")]
    assert "disqualified" in row and "Copied from bob" in row
    notice = logged_in(app, "ada").get("/competitions/cup").get_data(as_text=True)
    assert "Disqualified: Copied from bob" in notice
    # a mistake comes back as a sentence on the page
    reply = _post(olga, "/competitions/cup/deadline", "/competitions/cup", deadline="never")
    assert reply.status_code == 400
    assert "The deadline must be a date and time" in reply.get_data(as_text=True)
    reply = _post(olga, "/competitions/cup/deadline", "/competitions/cup",
                  deadline="2030-06-01T12:00")  # fmt: skip
    assert reply.status_code == 302, reply.get_data(as_text=True)
    page = olga.get("/competitions/cup").get_data(as_text=True)
    assert "The deadline is now 2030-06-01 12:00 CEST." in page
    reply = _post(olga, "/competitions/cup/close", "/competitions/cup")
    assert reply.status_code == 302
    page = olga.get("/competitions/cup").get_data(as_text=True)
    assert '<span class="status final">final</span>' in page and "Close now" not in page
    assert "Rerun the final" in page


def play_until(store: Store, name: str, cache: Path, done: str) -> int:
    """Tick the competition's clock and play what it sends, as workers would, until its
    status is ``done`` (``open``: until the ladder has rated every active entrant); the
    matches played."""
    config, played = Config(bot_cache=cache), 0
    for _ in range(60):
        tick_competitions(store)
        view = competition_view(store, None, name)
        rated = all(row.rating is not None for row in view.standings)
        if view.summary.status == done and (done != "open" or (rated and played)):
            return played
        with store.read() as session:
            pending = list(session.scalars(select(Match.id).where(Match.status == "pending")))
        for match_id in pending:
            assert run_match(store, match_id, config=config, sandboxed=False) == "done"
            played += 1
    raise AssertionError(f"{name} never reached {done}")


def test_a_competition_run_by_its_clock_shows_its_ladder_and_final(
    app: Flask, store: Store, celery: Celery, tmp_path: Path
) -> None:
    """Real games, the scheduler's own standings and final table (arena.service.clock)."""
    store.add_bot_version("cy", "counter", (REFERENCE_BOTS / "counter.py").read_text(), {})
    open_competition(
        store, custom_rules=RULES, final_top=3, final_max_games=10, games_per_deal=2,
        description="A short one.",
    )  # fmt: skip
    for owner, bot in (("ada", "greedy"), ("bob", "rando"), ("cy", "counter")):
        version = version_id_of(store, owner, bot)
        enter_with_version(store, OPERATOR, "cup", version, owner=owner)
    ladder_games = play_until(store, "cup", tmp_path / "cache", "open")
    client = app.test_client()
    page = client.get("/competitions/cup").get_data(as_text=True)
    ladder = page[page.index('<table class="list ladder') :]
    ladder = ladder[: ladder.index("</table>")]
    assert ladder.count("<tr class=") == 3 and ladder.count('class="interval') == 3
    assert "provisional" in ladder  # a handful of games: still placing
    recent = page[page.index('<table class="list games recent">') :]
    assert recent.count('href="/games/') == min(ladder_games, 20)
    entrant = client.get("/competitions/cup/entrants/ada-greedy-v1").get_data(as_text=True)
    assert 'class="rating-chart"' in entrant and "Its games" in entrant
    assert entrant.count('href="/games/') >= 2
    close_now(store, account_named(store, "olga"), "cup")
    _play_final_round(store, tmp_path / "cache")
    live = client.get("/competitions/cup/live").get_data(as_text=True)  # the final plays:
    assert "playing: live standings" in live and "data-live" in live  # its standings so far
    standings = live[live.index('<table class="list final-table live">') :]
    assert standings[: standings.index("</table>")].count('class="interval') == 3
    assert "covers the whole table" in live and "reruns included" in live
    play_until(store, "cup", tmp_path / "cache", "done")
    page = logged_in(app, "ada").get("/competitions/cup").get_data(as_text=True)
    assert '<span class="status done">done</span>' in page and 'class="winners"' in page
    final = page[page.index('<table class="list final-table">') :]
    final = final[: final.index("</table>")]
    assert final.count("<tr") == 4 and final.count('class="interval') == 3
    assert "The final is done: see the final table." in page
    table = client.get("/competitions/cup/final.json").get_json()["rows"]
    assert sorted(r["name"] for r in table) == ["ada/greedy v1", "bob/rando v1", "cy/counter v1"]
    olga = logged_in(app, "olga")  # a rerun: the table stays in force, marked replaced
    refused = _post(olga, "/competitions/cup/rerun", "/competitions/cup", reason=" ")
    assert refused.status_code == 400 and "the reason for the rerun: it is shown" in refused.text
    reply = _post(olga, "/competitions/cup/rerun", "/competitions/cup", reason="a host fault")
    assert reply.status_code == 302
    page = client.get("/competitions/cup").get_data(as_text=True)
    assert "replaced: a rerun plays" in page and "a host fault" in page
    kept = client.get("/competitions/cup/final.json").get_json()["rows"]
    assert [r["place"] for r in kept] == [r["place"] for r in table]
    assert {(r["final"], r["replaced"]) for r in kept} == {(1, "a host fault")}
    play_until(store, "cup", tmp_path / "cache", "done")
    page = client.get("/competitions/cup").get_data(as_text=True)
    assert "Final 2" in page and "replaced: a rerun plays" not in page
    earlier = page[page.index('<details class="earlier-finals">') :]
    assert "Final 1" in earlier and "a host fault" in earlier
    again = client.get("/competitions/cup/final.json").get_json()["rows"]
    assert {r["final"] for r in again} == {2}


def _play_final_round(store: Store, cache: Path) -> None:
    """The deadline's ticks (the ladder's last matches played) until the final's first
    round is sent; that round played, and no tick after it (the final is playing)."""
    config = Config(bot_cache=cache)
    for _ in range(10):
        tick_competitions(store)
        if competition_view(store, None, "cup").final_tournament is not None:
            break
        with store.read() as session:
            pending = list(session.scalars(select(Match.id).where(Match.status == "pending")))
        for match_id in pending:
            run_match(store, match_id, config=config, sandboxed=False)
    with store.read() as session:
        pending = list(session.scalars(select(Match.id).where(Match.status == "pending")))
    assert pending, "the final's first round"
    for match_id in pending:
        assert run_match(store, match_id, config=config, sandboxed=False) == "done"


def test_an_upcoming_competition_counts_down_to_its_opening(app: Flask, store: Store) -> None:
    opens = NOW + timedelta(days=1)
    open_competition(store, opens=opens, deadline=opens + timedelta(days=3))
    listing = app.test_client().get("/competitions").get_data(as_text=True)
    assert '<span class="status upcoming">upcoming</span>' in listing
    page = logged_in(app, "ada").get("/competitions/cup").get_data(as_text=True)
    dates = page[page.index('<section class="dates">') : page.index("</section>")]
    assert dates.count("data-countdown") == 2  # to the opening and to the deadline
    assert f'datetime="{opens.isoformat()}"' in dates
    assert "Enter a bot" not in page and "Enter the competition" not in page
    assert "data-live" not in page  # nothing plays yet
