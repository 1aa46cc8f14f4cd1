"""The table drawn in SVG (web/board.py): the line's layout checked geometrically on many
chains of every set size, the markup parsed as XML, hands face up and hidden."""

from __future__ import annotations

import itertools
import math
import random
import re
import xml.etree.ElementTree as ET

import pytest

from web.board import (
    GAP,
    HALF,
    MARGIN,
    MIN_WIDTH,
    TURN_GAP,
    WIDTH,
    Placement,
    hand_svg,
    layout_line,
    line_svg,
    line_viewbox,
    pip_positions,
    tile_svg,
)

NS = "{http://www.w3.org/2000/svg}"
EPS = 1e-6
Tile = tuple[int, int]


def euler_chain(max_pip: int, rng: random.Random) -> list[Tile]:
    """A random line using as many tiles of the double-``max_pip`` set as one line can: an
    Euler circuit of the set (for an odd set, less a few tiles so every number's count is
    even), as (left, right) pairs whose neighbours match."""
    tiles = [(a, b) for a in range(max_pip + 1) for b in range(a, max_pip + 1)]
    if max_pip % 2:
        tiles = [t for t in tiles if t not in {(i, i + 1) for i in range(0, max_pip, 2)}]
    exits: dict[int, list[tuple[int, int]]] = {n: [] for n in range(max_pip + 1)}
    for i, (a, b) in enumerate(tiles):
        exits[a].append((b, i))
        if a != b:
            exits[b].append((a, i))
    for choices in exits.values():
        rng.shuffle(choices)
    used: set[int] = set()
    stack, walk = [rng.randrange(max_pip + 1)], []
    while stack:  # Hierholzer
        here = stack[-1]
        while exits[here] and exits[here][-1][1] in used:
            exits[here].pop()
        if exits[here]:
            there, i = exits[here].pop()
            used.add(i)
            stack.append(there)
        else:
            walk.append(stack.pop())
    return list(itertools.pairwise(walk))


def random_line(size: int, max_pip: int, seed: int) -> tuple[list[Tile], int]:
    """``size`` consecutive tiles of a random chain, and a random lead among them."""
    rng = random.Random(seed)
    chain = euler_chain(max_pip, rng)
    assert size <= len(chain)
    start = rng.randrange(len(chain) - size + 1)
    line = chain[start : start + size]
    return line, rng.randrange(size) if size else -1


#: The double-nine set's longest line is 51 tiles (euler_chain makes 50); 55 and 91 tiles
#: are drawn from the double-twelve set.
SIZES = [(6, n) for n in (0, 1, 2, 7, 28)] + [(9, n) for n in (7, 28, 50)]
SIZES += [(12, n) for n in (2, 28, 55, 91)]
#: Every double from 0-0 to 12-12 with the tile joining it to the next between: doubles
#: every other tile, so the look-ahead that keeps doubles off corners is always busy.
ALTERNATING = [t for n in range(13) for t in ((n, n), (n, n + 1))][:-1]


# -- geometry -------------------------------------------------------------------------------


def halves(p: Placement) -> list[tuple[float, float, int]]:
    """The centres of a placement's halves as drawn, with the number each shows."""
    x, y = p.x + HALF / 2, p.y + HALF / 2
    dx, dy = (0.0, HALF) if p.vertical else (HALF, 0.0)
    return [(x, y, p.first), (x + dx, y + dy, p.second)]


def gaps(p: Placement, q: Placement) -> tuple[float, float]:
    """The gaps between two boxes along x and along y (negative: they overlap that way)."""
    dx = max(q.x - (p.x + p.w), p.x - (q.x + q.w))
    dy = max(q.y - (p.y + p.h), p.y - (q.y + q.h))
    return dx, dy


def assert_layout(line: list[Tile], lead: int, width: float = WIDTH) -> list[Placement]:
    placements = layout_line(line, lead, width=width)
    view_w, view_h = line_viewbox(placements, width=width)
    assert view_w == width
    assert [p.index for p in placements] == list(range(len(line)))
    for p, (a, b) in zip(placements, line, strict=True):
        assert sorted((p.first, p.second)) == sorted((a, b))
        assert p.double == (a == b)
        assert {p.w, p.h} == {HALF, 2 * HALF}
        # every box inside the table, clear of its edge
        assert min(p.x, p.y) >= MARGIN - EPS
        assert p.x + p.w <= view_w - MARGIN + EPS and p.y + p.h <= view_h - MARGIN + EPS
        if p.double:  # crosswise to its row (rows run across)
            assert p.vertical
    if line:
        centre = placements[lead].x + placements[lead].w / 2
        assert centre == pytest.approx(width / 2)
    for p, q in itertools.combinations(placements, 2):
        dx, dy = gaps(p, q)
        assert dx > -EPS or dy > -EPS, f"tiles {p.index} and {q.index} overlap: {p} {q}"
        if q.index != p.index + 1:  # tiles not joined stay at least a gap apart
            assert max(dx, dy) >= GAP - EPS, (p, q)
    for i, (p, q) in enumerate(itertools.pairwise(placements)):
        assert_touching(p, q, line[i][1], line[i + 1][0])
    for p in placements:
        if p.double:  # its neighbours lie against its long side, but for a corner at its end
            beside = [q for q in placements if abs(q.index - p.index) == 1]
            ends = [q for q in beside if gaps(p, q)[0] < -EPS]
            assert all(q.vertical and not q.double for q in ends), p
            assert len(ends) <= 1, p
    return placements


def assert_touching(p: Placement, q: Placement, p_end: int, q_end: int) -> None:
    """Neighbours face each other across one gap, with the matching halves facing."""
    dx, dy = gaps(p, q)
    assert max(dx, dy) == pytest.approx(GAP) or max(dx, dy) == pytest.approx(TURN_GAP), (p, q)
    assert min(dx, dy) <= -HALF / 2 + EPS, (p, q)  # they share at least half a face
    assert (facing(p, q), facing(q, p)) == (p_end, q_end), (p, q)


def facing(p: Placement, q: Placement) -> int:
    """The number on the half of ``p`` nearest the middle of ``q`` (unambiguously nearest
    unless ``p`` is a double)."""
    middle = (q.x + q.w / 2, q.y + q.h / 2)
    (d1, n1), (d2, _) = sorted((math.dist(h[:2], middle), h[2]) for h in halves(p))
    assert p.double or d2 - d1 > HALF / 4, (p, q)
    return n1


@pytest.mark.parametrize(("max_pip", "size"), SIZES)
def test_random_lines_lay_out_without_overlaps(max_pip: int, size: int) -> None:
    for seed in range(12):
        line, lead = random_line(size, max_pip, seed)
        assert_layout(line, lead)
    if size:  # the worst cases: everything on one arm
        line, _ = random_line(size, max_pip, 99)
        assert_layout(line, 0)
        assert_layout(line, size - 1)


@pytest.mark.parametrize("width", [MIN_WIDTH, 520.0, WIDTH, 1400.0])
def test_any_table_width_holds_a_whole_double_twelve_set(width: float) -> None:
    line = euler_chain(12, random.Random(7))
    assert len(line) == 91
    for lead in (0, 45, 90):
        assert_layout(line, lead, width)


@pytest.mark.parametrize("width", [MIN_WIDTH, 400.0, 600.0, WIDTH])
@pytest.mark.parametrize("lead", [0, 1, 12, 23, 24])
def test_doubles_every_other_tile(width: float, lead: int) -> None:
    placements = assert_layout(ALTERNATING, lead, width)
    corners = [p for p in placements if p.vertical and not p.double]
    assert corners or width > MIN_WIDTH


def test_doubles_meet_corners_and_lead_in_every_way() -> None:
    """Over many lines: a double leads, a double opens a row under (or over) a corner, and
    a double ends a row beside a corner."""
    seen = set()
    for seed in range(60):
        line, lead = random_line(91, 12, seed)
        placements = assert_layout(line, lead)
        corner = {p.index for p in placements if p.vertical and not p.double}
        for p in placements:
            if not p.double:
                continue
            if p.index == lead:
                seen.add("lead")
            for q in (p.index - 1, p.index + 1):
                if q in corner:
                    beside = gaps(p, placements[q])[1] < 0
                    seen.add("beside a corner" if beside else "under a corner")
    assert seen == {"lead", "beside a corner", "under a corner"}


def test_the_line_snakes_from_the_lead() -> None:
    line, _ = random_line(40, 12, 3)
    placements = layout_line(line, 0)
    rows = sorted({round(p.y + p.h / 2) for p in placements if not p.vertical or p.double})
    assert len(rows) >= 3
    lead = placements[0]
    assert lead.y + lead.h / 2 == rows[0]  # the right arm grows downward from the lead
    right = layout_line(line, 39)  # all on the left arm: it grows upward
    assert right[39].y + right[39].h / 2 == max(p.y + p.h / 2 for p in right)


def test_layout_rejects_what_is_no_line() -> None:
    with pytest.raises(ValueError, match="do not match"):
        layout_line([(6, 4), (3, 2)], 0)
    with pytest.raises(ValueError, match="lead 2"):
        layout_line([(6, 4), (4, 2)], 2)
    with pytest.raises(ValueError, match="lead -1"):
        layout_line([], 0)
    with pytest.raises(ValueError, match="lead -1"):
        layout_line([(6, 4)], -1)
    with pytest.raises(ValueError, match="at least"):
        layout_line([(6, 4)], 0, width=MIN_WIDTH - 1)
    assert layout_line([], -1) == []


# -- the line's markup ----------------------------------------------------------------------


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def tile_groups(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if "tile" in g.get("class", "").split()]


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


@pytest.mark.parametrize(("max_pip", "size"), SIZES)
def test_line_svg_draws_every_tile_where_the_layout_says(max_pip: int, size: int) -> None:
    line, lead = random_line(size, max_pip, 5)
    placed = size // 2 if size else None
    root = parse(line_svg(line, lead, placed=placed))
    assert root.get("role") == "img"
    title = root.find(f"{NS}title")
    assert title is not None and title.text and "line" in title.text
    _, _, view_w, view_h = map(float, root.get("viewBox", "").split())
    placements = layout_line(line, lead)
    groups = tile_groups(root)
    assert len(groups) == len(line)
    defined = {e.get("id") for e in root.iter() if e.get("id")}
    for g, p, (a, b) in zip(groups, placements, line, strict=True):
        assert g.get("data-index") == str(p.index)
        assert g.get("data-tile") == f"{a}-{b}"
        rect = g.find(f"{NS}rect")
        assert rect is not None
        box = [float(rect.get(k, "nan")) for k in ("x", "y", "width", "height")]
        assert box == pytest.approx([p.x, p.y, p.w, p.h])
        assert min(p.x, p.y) >= 0 and p.x + p.w <= view_w and p.y + p.h <= view_h
        # each half's pips: a <use> of that number's pattern at the half's corner
        drawn = {}
        for use in g.iter(f"{NS}use"):
            href = use.get("href", "")
            assert href[1:] in defined
            match = re.fullmatch(r"#dp(\d+)[vh]", href)
            assert match
            drawn[(float(use.get("x", "nan")), float(use.get("y", "nan")))] = int(match[1])
        corners = [(p.x, p.y), (p.x, p.y + HALF) if p.vertical else (p.x + HALF, p.y)]
        expected = {c: n for c, n in zip(corners, (p.first, p.second), strict=True) if n}
        assert drawn == pytest.approx(expected)
    assert [g.get("data-index") for g in groups if "placed" in classes(g)] == (
        [str(placed)] if size else []
    )
    assert [g.get("data-index") for g in groups if "lead" in classes(g)] == (
        [str(lead)] if size else []
    )


def test_the_placed_tile_is_framed() -> None:
    line = [(6, 4), (4, 4), (4, 1)]
    plain = line_svg(line, 1)
    framed = line_svg(line, 1, placed=2)
    assert framed.count('class="frame"') == plain.count('class="frame"') + 1
    assert "just played" in framed and "just played" not in plain
    with pytest.raises(ValueError, match="placed 3"):
        line_svg(line, 1, placed=3)


def test_line_svg_escapes_its_title() -> None:
    root = parse(line_svg([(1, 2)], 0, title='<script>"x" & y</script>'))
    assert root.get("aria-label") == '<script>"x" & y</script>'
    assert root.find(f"{NS}script") is None
    assert "no tile" in str(parse(line_svg([], -1)).findtext(f"{NS}title"))


def test_line_svg_stays_small() -> None:
    sizes = {}
    for max_pip, size in ((6, 28), (12, 55), (12, 91)):
        line, lead = random_line(size, max_pip, 1)
        sizes[size] = len(line_svg(line, lead, placed=0).encode())
    assert sizes[28] < 12_000
    assert sizes[91] < 40_000, sizes
    assert "style=" not in line_svg(*random_line(91, 12, 2))  # the CSP allows none


# -- tiles, pips and hands ------------------------------------------------------------------


@pytest.mark.parametrize("n", range(13))
def test_pip_patterns_fit_their_half(n: int) -> None:
    for vertical in (True, False):
        pips = pip_positions(n, vertical=vertical)
        assert len(pips) == n
        for cx, cy, r in pips:
            assert r <= cx <= HALF - r and r <= cy <= HALF - r
        for (x1, y1, r1), (x2, y2, r2) in itertools.combinations(pips, 2):
            assert math.dist((x1, y1), (x2, y2)) >= r1 + r2 + 1
    lying = pip_positions(n, vertical=False)
    assert sorted(lying) == sorted((y, x, r) for x, y, r in pip_positions(n))
    with pytest.raises(ValueError):
        pip_positions(13)


def test_tile_svg_draws_pips_as_circles() -> None:
    root = parse(
        f'<svg xmlns="http://www.w3.org/2000/svg">{tile_svg(12, 7, 0, 0, vertical=True)}</svg>'
    )
    assert len(list(root.iter(f"{NS}circle"))) == 19
    assert root.findtext(f"{NS}g/{NS}title") == "12-7"
    back = parse(
        f'<svg xmlns="http://www.w3.org/2000/svg">'
        f"{tile_svg(12, 7, 0, 0, vertical=False, face_up=False)}</svg>"
    )
    assert not list(back.iter(f"{NS}circle")) and "12" not in ET.tostring(back, "unicode")


def test_hand_svg_face_up_marks_legal_tiles() -> None:
    hand = [(6, 4), (5, 5), (3, 0), (12, 11)]
    root = parse(hand_svg(hand, highlight=[(4, 6), (12, 11)], label="Seat 2 (bot-a)"))
    groups = tile_groups(root)
    assert [g.get("data-tile") for g in groups] == ["6-4", "5-5", "3-0", "12-11"]
    assert [g.get("data-tile") for g in groups if "legal" in classes(g)] == ["6-4", "12-11"]
    assert root.findtext(f"{NS}title") == "Seat 2 (bot-a): 4 tiles"
    assert float(root.get("width", "0")) > 0 and float(root.get("height", "0")) > 0


def test_hidden_hand_shows_backs_only() -> None:
    svg = hand_svg(5, label="Seat 3")
    root = parse(svg)
    groups = tile_groups(root)
    assert len(groups) == 5 and all("back" in classes(g) for g in groups)
    assert not [e for e in root.iter() if e.tag in (f"{NS}circle", f"{NS}use", f"{NS}defs")]
    assert "data-tile" not in svg and not re.search(r"\d+-\d+", svg)
    assert root.findtext(f"{NS}title") == "Seat 3: 5 tiles, hidden"


@pytest.mark.parametrize("count", [0, 1, 7, 10, 11, 21])
def test_long_hands_wrap(count: int) -> None:
    hand = euler_chain(12, random.Random(count))[:count]
    for root in (parse(hand_svg(hand, per_row=10)), parse(hand_svg(count, per_row=10))):
        rects = [g.find(f"{NS}rect") for g in tile_groups(root)]
        boxes = [(float(r.get("x", "0")), float(r.get("y", "0"))) for r in rects if r is not None]
        assert len(boxes) == count
        assert len({y for _, y in boxes}) == -(-count // 10)
        assert len(set(boxes)) == count
        width, height = float(root.get("width", "0")), float(root.get("height", "0"))
        assert all(x + HALF <= width and y + 2 * HALF <= height for x, y in boxes)


def test_playing_a_tile_moves_no_other() -> None:
    """Step by step, each arm only grows: the tiles already down keep their places (the
    whole picture moves down only when the left arm opens a new row on top)."""
    line, lead = random_line(91, 12, 11)
    rng = random.Random(11)
    left, right = lead, lead + 1  # the tiles down: line[left:right]
    before = layout_line(line[left:right], 0)
    while right - left < len(line):
        was = left
        if right == len(line) or (left > 0 and rng.random() < 0.5):
            left -= 1
        else:
            right += 1
        after = layout_line(line[left:right], lead - left)
        shift = after[lead - left].y - before[lead - was].y
        for p in before:
            q = after[p.index + was - left]
            assert (q.x, q.y, q.w, q.h, q.first, q.second) == (
                p.x,
                p.y + shift,
                p.w,
                p.h,
                p.first,
                p.second,
            )
        before = after
