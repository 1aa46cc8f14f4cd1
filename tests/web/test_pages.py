"""The dashboard's pages (web/pages.py) through Flask's test client, on both databases
(tests/conftest.py), over a real tournament: the reference bots' games played here by the
worker's own code (unsandboxed: trusted bots), then rated as the worker rates them."""

from __future__ import annotations

import csv
import hashlib
import io
import random
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, template_rendered
from flask.testing import FlaskClient
from sqlalchemy import event

from arena.service.accounts import create_account
from arena.service.board_views import leaderboard, rank_ranges
from arena.service.results import refit_ratings
from arena.store.db import Store
from tests.paths import REPO
from tests.web.conftest import (
    ENTRANTS,
    HASHER,
    PASSWORD,
    RULES,
    create,
    logged_in,
    play,
    store_bots,
)
from web import create_app
from web.app import CONTENT_SECURITY_POLICY, STATIC_MAX_AGE, duration
from web.render import Axis, interval_svg, progress_svg


def _played(store: Store, tmp_path: Path) -> None:
    """A finished round robin of four bot versions ("spring", 2 games a pair, rated), and
    one created but not started ("autumn"): the database of the tests marked with it, built
    once per test process (tests/conftest.py's seed marker)."""
    store_bots(store)
    create(store, "spring", ENTRANTS, 2)
    play(store, "spring", tmp_path / "cache")
    refit_ratings(store, RULES)
    create(store, "autumn", ENTRANTS[:2], 2, seed=4)


@pytest.fixture
def played(store: Store, seeded: None) -> Store:
    return store


@pytest.fixture
def client(played: Store, url: str) -> Iterator[FlaskClient]:
    app: Flask = create_app(url)
    app.config["TESTING"] = True
    yield app.test_client()
    app.extensions["arena_store"].close()


def _page(client: FlaskClient, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code)
    return response.get_data(as_text=True)


@pytest.mark.seed(build=_played)
def test_home_links_the_rule_set_and_the_tournaments(client: FlaskClient) -> None:
    page = _page(client, "/")
    assert f'href="/leaderboards/{RULES.name}"' in page
    assert '<a href="/tournaments/spring">spring</a>' in page
    assert '<a href="/tournaments/autumn">autumn</a>' in page
    assert page.index("autumn") < page.index("spring")  # newest first
    assert "12 / 12" in page  # spring's matches finished


def _rows(page: str) -> list[str]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [row for row in body.split("<tr")[1:]]


@pytest.mark.seed(build=_played)
def test_the_leaderboard_shows_latest_versions_with_intervals(client: FlaskClient) -> None:
    page = _page(client, f"/leaderboards/{RULES.name}")
    rows = _rows(page)
    assert len(rows) == 3  # alice/greedy v1 is hidden behind v2
    assert 'alice/greedy</a> <span class="version">v2</span>' in page
    assert 'alice/greedy</a> <span class="version">v1</span>' not in page
    for row in rows:
        assert row.count("<circle") == 1 and row.count('class="whisker"') == 1
        assert re.search(r"\d+ to \d+", row)
        found = re.search(r'"num">(\d+)</td>\s*<td class="num">(\d+)-(\d+)-(\d+)<', row)
        assert found, row
        games, wins, draws, losses = map(int, found.groups())
        assert wins + draws + losses == games == 6  # 2-player games: each is one of three
        assert "UTC</td>" in row  # the last game's time
    assert '<svg class="axis"' in page
    assert "How to read this table" in page
    # few games: every interval is wide, every rating provisional
    assert page.count('<abbr class="provisional"') == 3


@pytest.mark.seed(build=_played)
def test_a_leaderboard_is_read_and_rendered_once_a_refit(
    played: Store, client: FlaskClient
) -> None:
    # the board is the same object until a refit rewrites the ratings, and its table is
    # rendered once for it: a leaderboard's request reads one small aggregate, not 200 rows
    tables: list[str] = []

    def rendered(_app: Flask, **sent: Any) -> None:
        tables.append(sent["template"].name)

    first = leaderboard(played, RULES.name)
    assert leaderboard(played, RULES.name) is first
    assert leaderboard(played, RULES.name, hide_reference=True) is not first
    with template_rendered.connected_to(rendered):
        pages = [_page(client, f"/leaderboards/{RULES.name}") for _ in range(2)]
        pages.append(_page(client, f"/leaderboards/{RULES.name}/live"))
        assert tables.count("_leaderboard_table.html") == 1
        table = _rows(pages[0])
        assert _rows(pages[1]) == _rows(pages[2]) == table
        refit_ratings(played, RULES)  # the same games, fitted again: new ratings rows
        again = leaderboard(played, RULES.name)
        assert again is not first and again.computed is not None
        assert first.computed is not None and again.computed > first.computed
        assert [(r.owner, r.bot, r.version) for r in again.rows] == [
            (r.owner, r.bot, r.version) for r in first.rows
        ]
        assert _rows(_page(client, f"/leaderboards/{RULES.name}")) == table
        assert tables.count("_leaderboard_table.html") == 2


@pytest.mark.seed(build=_played)
def test_the_leaderboard_toggles(client: FlaskClient) -> None:
    every = _page(client, f"/leaderboards/{RULES.name}?versions=all")
    assert len(_rows(every)) == 4 and '<span class="version">v1</span>' in every
    assert 'name="versions" value="all" checked' in every
    hidden = _page(client, f"/leaderboards/{RULES.name}?reference=hide")
    assert len(_rows(hidden)) == 2 and "reference/random" not in hidden
    assert "reference/random" in _page(client, f"/leaderboards/{RULES.name}")


@pytest.mark.seed(build=_played)
def test_the_leaderboard_exports_csv_and_json(client: FlaskClient) -> None:
    response = client.get(f"/leaderboards/{RULES.name}/export.csv?versions=all")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    table = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert len(table) == 4
    assert {row["owner"] + "/" + row["bot"] for row in table} == {
        "reference/random",
        "alice/greedy",
        "bob/counter",
    }
    assert all(float(row["low"]) <= float(row["rating"]) <= float(row["high"]) for row in table)
    data = client.get(f"/leaderboards/{RULES.name}/export.json?reference=hide").get_json()
    assert data["rules"] == RULES.name and len(data["rows"]) == 2
    assert data["computed"] is not None


@pytest.mark.seed(build=_played)
def test_the_leaderboard_redirects_and_404s(client: FlaskClient) -> None:
    response = client.get("/leaderboards")
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/leaderboards/{RULES.name}")
    page = _page(client, "/leaderboards/nosuchrules", 404)
    assert "No rule set called" in page and "nosuchrules" in page


@pytest.mark.seed(build=_played)
def test_a_finished_tournament_page(client: FlaskClient) -> None:
    page = _page(client, "/tournaments/spring")
    assert "12 of 12 matches finished" in page and "12 of 12 games" in page
    assert "hx-get" not in page  # finished: nothing polls
    standings = page.split("<h2>Standings</h2>", 1)[1]
    assert len(_rows(standings)) == 4
    assert "Crosstable" in page
    crosstable = page.split("<h2>Crosstable</h2>", 1)[1]
    # each pair met in 2 games (a match each way): the two cells of a pair add up to 2
    cells = [
        [
            float(c) if c else None
            for c in re.findall(r'<td class="num">(?:<a [^>]*>)?([\d.]*)(?:</a>)?</td>', row)
        ]
        for row in _rows(crosstable)
    ]
    assert len(cells) == 4
    for i in range(4):
        for j in range(4):
            if i != j:
                a, b = cells[i][j], cells[j][i]
                assert a is not None and b is not None and a + b == 2
    assert '<svg class="progress"' in page and 'class="done"' in page


@pytest.mark.seed(build=_played)
def test_a_pending_tournament_polls_while_it_runs(client: FlaskClient) -> None:
    page = _page(client, "/tournaments/autumn")
    assert "0 of 2 matches finished" in page
    assert 'hx-get="/tournaments/autumn/live"' in page and "data-live" in page
    assert "No worker is alive" in page
    fragment = _page(client, "/tournaments/autumn/live")
    assert fragment.startswith('<div id="live"') and "<html" not in fragment
    assert 'hx-trigger="every 3s, refresh"' in fragment


@pytest.mark.seed(build=_played)
def test_unknown_tournament_is_a_404_page_with_the_name_escaped(client: FlaskClient) -> None:
    page = _page(client, "/tournaments/<img src=x onerror=alert(1)>", 404)
    assert "No tournament called" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


class _Audit(HTMLParser):
    """Collects what the Content-Security-Policy would block: inline scripts, inline
    styles, event-handler attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.problems.append("inline <script>")
        if tag == "style" or "style" in names:
            self.problems.append(f"inline style on <{tag}>")
        self.problems += [f"{name} on <{tag}>" for name in names if name.startswith("on")]


PAGES = [
    "/",
    "/tournaments",
    "/tournaments/spring",
    "/tournaments/autumn",
    "/tournaments/autumn/live",
    f"/leaderboards/{RULES.name}",
    "/nosuchpage",
]


@pytest.mark.seed(build=_played)
def test_pages_carry_the_security_headers_and_nothing_the_policy_forbids(
    client: FlaskClient,
) -> None:
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    for path in PAGES:
        response = client.get(path)
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, path
        assert response.headers["X-Content-Type-Options"] == "nosniff", path
        audit = _Audit()
        audit.feed(response.get_data(as_text=True))
        assert audit.problems == [], path


@pytest.mark.seed(build=_played)
def test_static_files_are_served(client: FlaskClient) -> None:
    for path in ("/static/vendor/htmx.min.js", "/static/js/arena.js", "/static/css/arena.css"):
        response = client.get(path)
        assert response.status_code == 200, path
        response.close()


def _record_into(statements: list[str]) -> Callable[..., None]:
    def record(connection: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    return record


def test_static_files_are_kept_by_browsers_under_their_version(app: Flask, store: Store) -> None:
    """The pages link their scripts, styles and icon with the file's content version
    (``?v=``): such an address is kept a year, and costs a logged-in visitor no account
    lookup (no SQL at all); without a version, a file is asked again each time (304 while
    unchanged)."""
    create_account(store, "ann", PASSWORD, hasher=HASHER)
    client = logged_in(app, "ann")
    page = client.get("/").get_data(as_text=True)
    linked = re.findall(r'(?:src|href)="(/static/[^"?]+)\?v=([0-9a-f]+)"', page)
    assert {"/static/js/arena.js", "/static/css/arena.css"} <= {path for path, _ in linked}
    assert "/static/" not in re.sub(r'"/static/[^"?]+\?v=[0-9a-f]{12}"', "", page)
    statements: list[str] = []
    event.listen(
        app.extensions["arena_store"].engine, "before_cursor_execute", _record_into(statements)
    )
    for path, version in linked:
        content = (REPO / "web" / path.lstrip("/")).read_bytes()
        assert version == hashlib.sha256(content).hexdigest()[:12], path
        response = client.get(f"{path}?v={version}")
        assert response.status_code == 200, path
        assert response.headers["Cache-Control"] == f"public, max-age={STATIC_MAX_AGE}", path
        response.close()
    assert statements == []
    plain = client.get("/static/js/arena.js")
    assert plain.headers["Cache-Control"] == "no-cache"
    modified = {"If-Modified-Since": plain.headers["Last-Modified"]}
    plain.close()
    again = client.get("/static/js/arena.js", headers=modified)
    assert again.status_code == 304
    again.close()


# --- the pure parts ----------------------------------------------------------------------


def test_rank_ranges_follow_overlapping_intervals() -> None:
    intervals = [(1600.0, 1700.0), (1550.0, 1650.0), (1400.0, 1500.0), (1300.0, 1320.0)]
    assert rank_ranges(intervals) == [(1, 2), (1, 2), (3, 3), (4, 4)]
    assert rank_ranges([]) == []
    assert rank_ranges([(1000.0, 2000.0)] * 3) == [(1, 3)] * 3


def test_rank_ranges_count_every_interval_wholly_above_or_below() -> None:
    rng = random.Random(5)
    for count in (1, 2, 7, 60):
        intervals = []
        for _ in range(count):  # ties and shared ends too
            low = float(rng.randrange(1300, 1700, 10))
            intervals.append((low, low + rng.choice([0.0, 10.0, 50.0, 200.0])))
        expected = [
            (
                1 + sum(1 for other_low, _ in intervals if other_low > high),
                count - sum(1 for _, other_high in intervals if other_high < low),
            )
            for low, high in intervals
        ]
        assert rank_ranges(intervals) == expected


def test_interval_pictures_share_one_axis() -> None:
    axis = Axis.spanning([(1412.0, 1530.0), (1480.0, 1690.0)])
    assert axis.low <= 1412 and axis.high >= 1690
    assert axis.x(axis.low) == 18 and axis.x(axis.high) == 222
    picture = interval_svg(axis, 1500.0, 1480.0, 1690.0)
    x1, x2 = (float(v) for v in re.findall(r'x[12]="([\d.]+)"', picture)[:2])
    cx = float(re.findall(r'cx="([\d.]+)"', picture)[0])
    assert x1 < cx < x2 and x1 == axis.x(1480.0) and x2 == axis.x(1690.0)
    ticks = axis.ticks()
    assert 2 <= len(ticks) <= 6 and all(axis.low <= t <= axis.high for t in ticks)


def test_progress_bar_widths_follow_the_counts() -> None:
    picture = progress_svg({"done": 3, "void": 1, "running": 0, "pending": 4}, width=400)
    widths = dict(re.findall(r'<rect class="(\w+)" x="[\d.]+" y="0" width="([\d.]+)"', picture))
    assert widths == {"track": "400", "done": "150.0", "void": "50.0", "pending": "200.0"}


@pytest.mark.parametrize(
    ("seconds", "text"), [(4.4, "4 s"), (125, "2 min 5 s"), (7500, "2 h 5 min")]
)
def test_durations_read_well(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_standings_counted_as_matches_finish_equal_a_fresh_count(
    store: Store, tmp_path: Path
) -> None:
    """A page's figures follow the tournament's stored tally as its matches finish (a void
    one too), kept between reads while it has not grown; they equal a count from scratch."""
    from sqlalchemy import delete, select

    from arena.service import board_views as views
    from arena.service.matches import Config, run_match
    from arena.store.models import Match, TournamentFigures
    from arena.store.queue import void_match

    store_bots(store)
    create(store, "growing", ENTRANTS, 4)
    with store.read() as session:
        ids = list(session.scalars(select(Match.id).order_by(Match.id)))
    config = Config(bot_cache=tmp_path / "cache")
    seen = []
    for number, match_id in enumerate(ids):
        if number == 5:
            assert void_match(store, match_id, "w", "a harness failure")
        else:
            assert run_match(store, match_id, config=config, sandboxed=False) == "done"
        if number % 4 == 0:
            seen.append(views.tournament_view(store, "growing"))
    live = views.tournament_view(store, "growing")
    with store.write() as session:  # fitted again from scratch
        session.execute(delete(TournamentFigures))
    views._kept.clear()
    fresh = views.tournament_view(store, "growing")
    assert seen[0].standings != live.standings  # it did count as it went
    assert live.crosstable == fresh.crosstable and live.void == fresh.void
    assert live.faults == fresh.faults and len(live.void) == 1
    for mine, theirs in zip(live.standings, fresh.standings, strict=True):
        assert mine.entrant == theirs.entrant
        assert (mine.games, mine.wins, mine.points, mine.forfeits) == (
            theirs.games, theirs.wins, theirs.points, theirs.forfeits
        )  # fmt: skip
        assert mine.rating == pytest.approx(theirs.rating, abs=1e-6)
        assert mine.low == pytest.approx(theirs.low, abs=1e-6)


def _cancelled(store: Store, tmp_path: Path) -> None:
    """A played round robin, and under another rule set a tournament cancelled before any
    of its games ("winter")."""
    from arena.engine.rules import PRESETS
    from arena.service.matches import create_stored_tournament
    from arena.store.queue import cancel_tournament

    _played(store, tmp_path)
    winter, _ = create_stored_tournament(
        store,
        name="winter",
        rules=PRESETS["draw"],
        format="round-robin",
        entrants=list(ENTRANTS[:2]),
        games_per_match=2,
        seed=5,
    )
    cancel_tournament(store, winter, by="olga")


@pytest.mark.seed(build=_cancelled)
def test_a_cancelled_tournament_says_its_void_matches_and_makes_no_leaderboard_tab(
    client: FlaskClient,
) -> None:
    """Void matches are not "finished" ones (a cancelled compare once read "250 / 250
    matches finished"), and a rule set with no game played has no leaderboard tab."""
    listing = _page(client, "/tournaments")
    winter = next(row for row in _rows(listing) if "/tournaments/winter" in row)
    assert "0 / 2" in winter and "(2 void)" in winter
    page = _page(client, "/tournaments/winter")
    assert "0 of 2 matches played, 2 void" in page and "matches finished" not in page
    board = _page(client, f"/leaderboards/{RULES.name}")
    assert f'href="/leaderboards/{RULES.name}"' in board
    assert 'href="/leaderboards/draw"' not in board


# --- one display name for a stored bot version on every page (issue 20, finding 9) ----------


def _placed(store: Store, tmp_path: Path) -> None:
    """Two stored versions entered under placement-style labels (``owner.bot``), played and
    rated."""
    store_bots(store)
    create(store, "placing", ["alice.greedy=alice/greedy@2", "bob.counter=bob/counter"], 2)
    play(store, "placing", tmp_path / "cache")
    refit_ratings(store, RULES)


class _Text(HTMLParser):
    """A page's text as a reader sees it: text outside scripts and styles, and the
    ``title`` attributes a pointer shows; whitespace collapsed."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("script", "style")
        self.parts += [value for name, value in attrs if name == "title" and value]

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def _text(page: str) -> str:
    reader = _Text()
    reader.feed(page)
    return " ".join(" ".join(reader.parts).split())


@pytest.mark.seed(build=_placed)
def test_a_stored_version_has_one_display_name_on_every_page(client: FlaskClient) -> None:
    tournament = _page(client, "/tournaments/placing")
    listed = _page(client, "/games?tournament=placing")
    game = re.findall(r'href="(/games/\d+/\d+)"', listed)[0]
    pairing = re.findall(r'href="(/games\?tournament=placing&amp;a=[^"]+)"', tournament)[0]
    pages = {
        "leaderboard": _page(client, f"/leaderboards/{RULES.name}"),
        "tournament": tournament,
        "game": _page(client, game),
        "bot": _page(client, "/bots/alice/greedy"),
        "game list": listed,
        "pairing": _page(client, pairing.replace("&amp;", "&")),
    }
    for where, page in pages.items():
        text = _text(page)
        assert "alice/greedy v2" in text, where
        assert "alice.greedy" not in text and "alice/greedy@" not in text, (where, text)
        assert "bob.counter" not in text, where
    # linked to the bot's page wherever a page names it
    for where in ("tournament", "game", "game list", "pairing"):
        link = '<a class="bot-name" href="/bots/alice/greedy">alice/greedy v2</a>'
        assert link in pages[where], where
    # the labels stay the keys the links and filters use
    assert "a=alice.greedy" in tournament or "b=alice.greedy" in tournament
    block = tournament.split('id="stat-block">', 1)[1].split("</pre>", 1)[0]
    assert "alice/greedy v2" in block and "bob/counter v1" in block


@pytest.mark.seed(build=_played)
def test_a_tournaments_figures_are_fitted_once_for_every_process(
    played: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures fitted from the tally are stored: another process (its own figures
    forgotten) reads them and fits nothing; once the tally moves on, the first reader
    claims the fit and fits again, while the fit another process claimed leaves the
    others the figures before; a process that dies holding the claim delays the first
    figures by the claim's length only."""
    from datetime import UTC, datetime

    from sqlalchemy import delete, update

    from arena.service import board_views as views
    from arena.store import boards, tallies
    from arena.store.models import Match, TournamentFigures

    store = played
    fits: list[int] = []
    counted = boards.stored_tally

    def stored_tally(store: Store, tournament_id: int) -> boards.TournamentTally:
        fits.append(tournament_id)
        return counted(store, tournament_id)

    monkeypatch.setattr(boards, "stored_tally", stored_tally)
    views._kept.clear()
    first = views.tournament_view(store, "spring")
    assert len(fits) == 1 and first.standings[0].rating is not None
    views._kept.clear()  # another process
    assert views.tournament_view(store, "spring") == first and len(fits) == 1
    with store.write() as session:  # the tally moves on (as a match would void)
        match_id = session.scalar(Match.__table__.select().with_only_columns(Match.id).limit(1))
        session.execute(update(Match).where(Match.id == match_id).values(status="void"))
    tournament_id = first_id = fits[0]
    assert tallies.claim_figures(store, tournament_id, datetime.now(UTC), 60)  # elsewhere
    assert views.tournament_view(store, "spring").standings == first.standings
    assert len(fits) == 1  # the figures before, while the other process fits
    tallies.release_figures(store, tournament_id)
    moved = views.tournament_view(store, "spring")
    assert len(fits) == 2 and moved.void and not first.void
    assert views.tournament_view(store, "spring") == moved and len(fits) == 2
    with store.write() as session:  # no figures yet, and a dead process's claim
        session.execute(delete(TournamentFigures))
    views._kept.clear()
    assert tallies.claim_figures(store, first_id, datetime.now(UTC), 0.2)
    assert not tallies.claim_figures(store, first_id, datetime.now(UTC), 0.2)
    monkeypatch.setattr(views, "FIT_POLL_SECONDS", 0.02)
    assert views.tournament_view(store, "spring") == moved and len(fits) == 3
