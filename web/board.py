"""The dominoes table drawn as inline SVG on the server: the line and the hands.

Pure functions of plain data (tiles as ``(a, b)`` pairs of ints) to markup, so the replay
viewer can draw any state the engine reports and the tests can check the geometry.

The line: the lead sits in the middle of its row; the right arm grows to
the right and, at the table's edge, turns down with one upright tile (a corner) and comes
back along the next row, snaking down as far as it needs; the left arm grows to the left
and snakes upward the same way. Doubles lie crosswise (upright, across the row), so a
corner is never a double: a row keeps room at its end for a double and a corner, and a
double that comes right after a corner opens the next row standing under it. Neighbouring
tiles touch with their matching halves, around corners too. A tile's place depends only on
the tiles between it and the lead, so stepping through a round adds tiles and never moves
one (only the whole picture moves down when the left arm starts a new row on top).
:data:`WIDTH` holds about 16 tiles a row, so double-six lines mostly fit in two or three
rows and a double-twelve line of 91 tiles in about seven.

Pips are ``<circle>`` elements laid out as on real sets (3 x 3 up to nine, 3 x 4 for ten
to twelve) and coloured by number. A picture defines each pip pattern it uses once in
``<defs>`` (ids ``{prefix}{n}v``, a half of an upright tile, and ``{prefix}{n}h``, of a
lying one where that differs) and places it with ``<use>``: a 91-tile line is about 30 KB. Two
pictures on one page with the same prefix define the same ids with the same content, which
browsers resolve alike; pass a distinct ``ids`` prefix for strictly unique ids.

As in :mod:`web.render`, the markup carries no ``style`` attribute (the Content-Security-
Policy allows no inline style), only presentation attributes and classes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from markupsafe import Markup, escape

__all__ = [
    "GAP",
    "HALF",
    "MARGIN",
    "MIN_WIDTH",
    "TURN_GAP",
    "WIDTH",
    "Placement",
    "hand_svg",
    "layout_line",
    "line_svg",
    "line_viewbox",
    "pip_defs",
    "pip_positions",
    "tile_defs",
    "tile_frame",
    "tile_svg",
    "tile_use",
]

#: The side of a tile's half (a tile is HALF x 2 HALF), in SVG user units.
HALF = 24.0
#: The space between neighbouring tiles of the line.
GAP = 3.0
#: The space between a corner and the tile after it, which opens the next row: rows stand
#: this far apart where doubles of two rows meet.
TURN_GAP = 8.0
#: The space between the table's edge and the tiles.
MARGIN = 8.0
#: The table's default width: about 16 lying tiles a row.
WIDTH = 16 * (2 * HALF + GAP) + 2 * MARGIN + 8.0
#: The narrowest table :func:`layout_line` accepts: each half of the lead's row holds two
#: lying tiles, a double and a corner.
MIN_WIDTH = 2 * (MARGIN + HALF + 2 * (2 * HALF + GAP) + 2 * (HALF + GAP))

#: Pip colours by number (index 0 unused): real double-nine and double-twelve sets colour
#: pips so that matching halves are found at a glance.
PIP_COLOURS = (
    "",
    "#1565c0",  # 1 blue
    "#2e7d32",  # 2 green
    "#c62828",  # 3 red
    "#6a1b9a",  # 4 purple
    "#d35400",  # 5 orange
    "#212121",  # 6 black
    "#00838f",  # 7 teal
    "#ad1457",  # 8 magenta
    "#6d4c41",  # 9 brown
    "#283593",  # 10 indigo
    "#558b2f",  # 11 olive
    "#37474f",  # 12 slate
)
_FACE = "#fbf8ee"
_EDGE = "#3b3b3b"
_DIVIDER = "#9a968a"
_BACK = "#35516e"
_BACK_EDGE = "#1e3246"
_TABLE = "#2d6a4f"
_PLACED = "#ffb300"
_LEAD = "#b7e4c7"
_LEGAL = "#1e88e5"

#: Pip centres on a 3 x 3 grid (up to nine) and a 3 x 4 grid (ten to twelve), as
#: fractions of an upright tile's half: (across, along).
_A, _B, _C = 0.22, 0.5, 0.78
_ROWS4 = (0.15, 0.383, 0.617, 0.85)
_SIDES4 = tuple((u, v) for u in (_A, _C) for v in _ROWS4)
_PATTERNS: tuple[tuple[tuple[float, float], ...], ...] = (
    (),
    ((_B, _B),),
    ((_C, _A), (_A, _C)),
    ((_C, _A), (_B, _B), (_A, _C)),
    ((_A, _A), (_C, _A), (_A, _C), (_C, _C)),
    ((_A, _A), (_C, _A), (_B, _B), (_A, _C), (_C, _C)),
    tuple((u, v) for u in (_A, _C) for v in (_A, _B, _C)),
    (*((u, v) for u in (_A, _C) for v in (_A, _B, _C)), (_B, _B)),
    tuple((u, v) for u in (_A, _B, _C) for v in (_A, _B, _C) if (u, v) != (_B, _B)),
    tuple((u, v) for u in (_A, _B, _C) for v in (_A, _B, _C)),
    (*_SIDES4, (_B, 0.33), (_B, 0.67)),
    (*_SIDES4, (_B, 0.27), (_B, 0.5), (_B, 0.73)),
    tuple((u, v) for u in (_A, _B, _C) for v in _ROWS4),
)
#: The numbers whose pattern is the same on an upright and a lying tile.
_SYMMETRIC = frozenset(
    n for n, points in enumerate(_PATTERNS) if set(points) == {(v, u) for u, v in points}
)
#: Pip radius as a fraction of the half: smaller for the crowded 3 x 4 patterns.
_RADIUS = 0.105
_RADIUS4 = 0.088


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one line tile is drawn: its box (x, y, w, h) in SVG user units and its two
    halves as drawn (first = the half at the top or left of the box)."""

    index: int
    x: float
    y: float
    w: float
    h: float
    first: int
    second: int
    double: bool

    @property
    def vertical(self) -> bool:
        """Whether the tile stands upright (its halves one above the other)."""
        return self.h > self.w


def pip_positions(n: int, *, vertical: bool = True) -> list[tuple[float, float, float]]:
    """The pips of a half showing ``n``: ``(cx, cy, r)`` in a HALF x HALF square, for a
    half of an upright (``vertical``) or a lying tile.

    Raises:
        ValueError: ``n`` is not 0 to 12.
    """
    if not 0 <= n < len(_PATTERNS):
        raise ValueError(f"a half shows 0 to {len(_PATTERNS) - 1} pips, not {n!r}")
    r = round(HALF * (_RADIUS4 if n > 9 else _RADIUS), 1)
    points = _PATTERNS[n] if vertical else [(v, u) for u, v in _PATTERNS[n]]
    return [(round(u * HALF, 1), round(v * HALF, 1), r) for u, v in points]


@lru_cache(maxsize=4096)
def _num(value: float) -> str:
    """A coordinate in short form: one decimal at most, no trailing ``.0`` (remembered: a
    picture writes the same few coordinates thousands of times, a replay's states more)."""
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def _circles(n: int, x: float, y: float, *, vertical: bool) -> str:
    return "".join(
        f'<circle cx="{_num(x + cx)}" cy="{_num(y + cy)}" r="{_num(r)}"/>'
        for cx, cy, r in pip_positions(n, vertical=vertical)
    )


def pip_defs(values: Iterable[int], prefix: str = "dp") -> str:
    """A ``<defs>`` defining the pip patterns of ``values`` for :func:`tile_svg`'s ``pips``
    option: ``{prefix}{n}v`` (a half of an upright tile) and, for the patterns that differ
    lying down (6, 7, 10-12), ``{prefix}{n}h``."""
    return _pip_defs(tuple(sorted(set(values) - {0})), prefix)


@lru_cache(maxsize=1024)
def _pip_defs(values: tuple[int, ...], prefix: str) -> str:
    """:func:`pip_defs` of these sorted values (remembered: each state of a replay draws
    its line and hands with the same few sets of patterns)."""
    parts = ["<defs>"]
    for n in values:
        parts.append(
            f'<g id="{prefix}{n}v" fill="{PIP_COLOURS[n]}" stroke="none">'
            f"{_circles(n, 0, 0, vertical=True)}</g>"
        )
        if n not in _SYMMETRIC:  # a symmetric pattern serves lying tiles too
            parts.append(
                f'<g id="{prefix}{n}h" fill="{PIP_COLOURS[n]}" stroke="none">'
                f"{_circles(n, 0, 0, vertical=False)}</g>"
            )
    parts.append("</defs>")
    return "".join(parts)


def _pip_id(prefix: str, n: int, vertical: bool) -> str:
    lying = not vertical and n not in _SYMMETRIC
    return f"{prefix}{n}{'h' if lying else 'v'}"


def _half_pips(n: int, x: float, y: float, vertical: bool, pips: str | None) -> str:
    if n == 0:
        return ""
    if pips is None:
        return f'<g fill="{PIP_COLOURS[n]}">{_circles(n, x, y, vertical=vertical)}</g>'
    return f'<use href="#{_pip_id(pips, n, vertical)}" x="{_num(x)}" y="{_num(y)}"/>'


def _attrs(data: Mapping[str, str | int] | None) -> str:
    if not data:
        return ""
    return "".join(f' data-{key}="{escape(str(value))}"' for key, value in data.items())


def tile_svg(
    a: int,
    b: int,
    x: float,
    y: float,
    *,
    vertical: bool,
    face_up: bool = True,
    css_class: str = "",
    pips: str | None = None,
    data: Mapping[str, str | int] | None = None,
    title: str | None = None,
) -> Markup:
    """One tile as a ``<g class="tile">`` with its top-left corner at (x, y): ``a`` on the
    top (upright) or left (lying) half, ``b`` on the other; a plain back when not
    ``face_up`` (no pips, no title, nothing naming the tile).

    ``pips`` is the id prefix of a :func:`pip_defs` in the same picture (compact), or None
    for inline circles (self-contained). ``data`` adds ``data-*`` attributes; ``title`` is
    the tooltip (``"a-b"`` by default).
    """
    if not face_up:
        return Markup(_back(x, y, vertical, escape(css_class)))
    shown = f"{a}-{b}" if title is None else escape(title)
    return Markup(_face(a, b, x, y, vertical, escape(css_class), pips, _attrs(data), shown))


@lru_cache(maxsize=1024)
def _back(x: float, y: float, vertical: bool, css_class: str) -> str:
    """A tile's back at (x, y) (remembered: a hidden hand is the same backs at the same
    places in every state); ``css_class`` is escaped."""
    w, h = (HALF, 2 * HALF) if vertical else (2 * HALF, HALF)
    box = f'x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}"'
    inner = f'x="{_num(x + 4)}" y="{_num(y + 4)}" width="{_num(w - 8)}" height="{_num(h - 8)}"'
    return (
        f'<g class="{f"tile back {css_class}".strip()}"><rect {box} rx="3" fill="{_BACK}" '
        f'stroke="{_BACK_EDGE}"/><rect {inner} rx="2" fill="none" stroke="#6f8cab"/></g>'
    )


def _face(
    a: int,
    b: int,
    x: float,
    y: float,
    vertical: bool,
    css_class: str,
    pips: str | None,
    attrs: str,
    title: str,
) -> str:
    """:func:`tile_svg`'s face-up tile as text, from escaped ``css_class``, ``attrs`` and
    ``title`` (the line and the hands call it with text they know is safe)."""
    w, h = (HALF, 2 * HALF) if vertical else (2 * HALF, HALF)
    box = f'x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}"'
    if vertical:
        divider = f"M{_num(x + 3)} {_num(y + HALF)}h{_num(HALF - 6)}"
        second = (x, y + HALF)
    else:
        divider = f"M{_num(x + HALF)} {_num(y + 3)}v{_num(HALF - 6)}"
        second = (x + HALF, y)
    return (
        f'<g class="{f"tile {css_class}".strip()}"{attrs}><title>{title}</title>'
        f'<rect {box} rx="3" fill="{_FACE}" stroke="{_EDGE}"/>'
        f'<path d="{divider}" stroke="{_DIVIDER}"/>'
        f"{_half_pips(a, x, y, vertical, pips)}{_half_pips(b, *second, vertical, pips)}</g>"
    )


def _outline(
    x: float, y: float, w: float, h: float, colour: str, thick: float = 3, css_class: str = "frame"
) -> str:
    """A coloured frame around a tile's box (the placed tile, the lead, a legal tile)."""
    d = thick / 2
    return (
        f'<rect class="{css_class}" x="{_num(x - d)}" y="{_num(y - d)}" width="{_num(w + thick)}" '
        f'height="{_num(h + thick)}" rx="4" fill="none" stroke="{colour}" '
        f'stroke-width="{_num(thick)}"/>'
    )


# -- tiles drawn once, placed many times ---------------------------------------------------


def _face_id(ids: str, a: int, b: int, vertical: bool) -> str:
    return f"{ids}{'u' if vertical else 'l'}{max(a, b)}-{min(a, b)}"


def tile_defs(
    upright: Iterable[tuple[int, int]],
    lying: Iterable[tuple[int, int]] = (),
    *,
    ids: str = "t",
    pips: str = "p",
) -> str:
    """A ``<defs>`` drawing each tile face once, for :func:`tile_use`: the tiles of
    ``upright`` standing (``{ids}u{high}-{low}``, the high half on top) and those of
    ``lying`` lying (``{ids}l{high}-{low}``, the high half on the left), either way round,
    each with its top-left corner at (0, 0) as :func:`tile_svg` draws it; a tile's back
    standing (``{ids}back``); and the pip patterns they use (``{pips}...``, as
    :func:`pip_defs`)."""
    faces = [
        *((max(t), min(t), True) for t in {(max(t), min(t)) for t in upright}),
        *((max(t), min(t), False) for t in {(max(t), min(t)) for t in lying}),
    ]
    faces.sort(key=lambda face: (not face[2], face[0], face[1]))
    parts = [pip_defs((n for a, b, _ in faces for n in (a, b)), pips).removesuffix("</defs>")]
    for a, b, vertical in faces:
        face = tile_svg(a, b, 0, 0, vertical=vertical, pips=pips)
        parts.append(f'<g id="{_face_id(ids, a, b, vertical)}">{face}</g>')
    parts.append(f'<g id="{ids}back">{tile_svg(0, 0, 0, 0, vertical=True, face_up=False)}</g>')
    parts.append("</defs>")
    return "".join(parts)


def tile_use(a: int, b: int, x: float, y: float, *, vertical: bool, ids: str = "t") -> str:
    """A face of :func:`tile_defs` placed with its top-left corner at (x, y): ``a`` on the
    top (upright) or left (lying) half, as :func:`tile_svg` draws it. A tile drawn low half
    first is its face turned half a turn about its centre (every pip pattern is the same
    turned half a turn)."""
    href = _face_id(ids, a, b, vertical)
    place = f'<use href="#{href}" x="{_num(x)}" y="{_num(y)}"'
    if a >= b:
        return place + "/>"
    w, h = (HALF, 2 * HALF) if vertical else (2 * HALF, HALF)
    return place + f' transform="rotate(180 {_num(x + w / 2)} {_num(y + h / 2)})"/>'


#: The frames :func:`tile_frame` draws: colour and thickness.
_FRAMES = {"placed": (_PLACED, 3.0), "lead": (_LEAD, 2.0), "legal": (_LEGAL, 3.0)}


def tile_frame(x: float, y: float, w: float, h: float, kind: str) -> str:
    """The frame :func:`line_svg` and :func:`hand_svg` draw around the box (x, y, w, h) of
    a tile: ``kind`` is ``placed`` (this step's play), ``lead`` or ``legal``; the
    ``<rect>`` has the classes ``frame`` and ``kind``.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in _FRAMES:
        raise ValueError(f"a frame is one of {', '.join(_FRAMES)}, not {kind!r}")
    colour, thick = _FRAMES[kind]
    return _outline(x, y, w, h, colour, thick, f"frame {kind}")


# -- the line's layout ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Laid:
    """One arm tile placed: its box, and the centres of its near half (touching the tile
    before it in the arm) and its far half."""

    x: float
    y: float
    w: float
    h: float
    near: tuple[float, float]
    far: tuple[float, float]


def _lying(near_x: float, far_x: float, cy: float) -> _Laid:
    """A lying tile whose halves are centred at (near_x, cy) and (far_x, cy)."""
    left = min(near_x, far_x) - HALF / 2
    return _Laid(left, cy - HALF / 2, 2 * HALF, HALF, (near_x, cy), (far_x, cy))


def _upright(cx: float, near_y: float, far_y: float) -> _Laid:
    """An upright tile whose halves are centred at (cx, near_y) and (cx, far_y)."""
    top = min(near_y, far_y) - HALF / 2
    return _Laid(cx - HALF / 2, top, HALF, 2 * HALF, (cx, near_y), (cx, far_y))


def _arm(
    doubles: Sequence[bool], x: float, y: float, step: int, turn: int, low: float, high: float
) -> list[_Laid]:
    """Lay out one arm from the lead outward.

    (x, y) is the middle of the lead's face the arm starts from; the arm runs along the
    row in direction ``step`` (+1 right, -1 left) and turns at the edges ``low``/``high``
    toward ``turn`` (+1 down, -1 up), each turn reversing ``step``. A lying tile stays in
    the row only if a double and a corner still fit after it, so a double always fits and
    a corner is never a double; and a tile's place depends only on the tiles before it.
    """
    laid: list[_Laid] = []
    cornered = False  # the last tile was a corner: the next one starts the next row
    for double in doubles:
        if cornered:
            step, cornered = -step, False
            if double:  # upright under the corner; the row continues from its side
                cy = y + turn * (TURN_GAP + HALF)
                laid.append(_Laid(x - HALF / 2, cy - HALF, HALF, 2 * HALF, (x, cy), (x, cy)))
                x, y = x + step * HALF / 2, cy
            else:  # lying, its near half under the corner
                cy = y + turn * (TURN_GAP + HALF / 2)
                laid.append(_lying(x, x + step * HALF, cy))
                x, y = x + step * 1.5 * HALF, cy
            continue
        if double:  # across the row
            cx = x + step * (GAP + HALF / 2)
            laid.append(_Laid(cx - HALF / 2, y - HALF, HALF, 2 * HALF, (cx, y), (cx, y)))
            x = cx + step * HALF / 2
            continue
        end = x + step * (GAP + 2 * HALF)
        if low <= end + step * 2 * (GAP + HALF) <= high:  # along the row
            laid.append(_lying(x + step * (GAP + HALF / 2), end - step * HALF / 2, y))
            x = end
        else:  # the corner: upright, its near half beside the row's last tile
            cx = x + step * (GAP + HALF / 2)
            laid.append(_upright(cx, y, y + turn * HALF))
            x, y, cornered = cx, y + turn * 1.5 * HALF, True
    return laid


def _placement(index: int, laid: _Laid, near: int, far: int) -> Placement:
    """A placement with its halves in drawing order (top or left first)."""
    if near == far:
        return Placement(index, laid.x, laid.y, laid.w, laid.h, near, far, True)
    axis = 1 if laid.h > laid.w else 0
    first, second = (near, far) if laid.near[axis] < laid.far[axis] else (far, near)
    return Placement(index, laid.x, laid.y, laid.w, laid.h, first, second, False)


def _check_line(line: Sequence[tuple[int, int]], lead: int, width: float) -> None:
    """Raises ValueError for a lead outside the line, a broken chain or a narrow table."""
    if width < MIN_WIDTH:
        raise ValueError(f"the table must be at least {MIN_WIDTH:g} wide, not {width!r}")
    if not line and lead != -1:
        raise ValueError(f"an empty line has no lead (lead -1), not {lead!r}")
    if line and not 0 <= lead < len(line):
        raise ValueError(f"lead {lead!r} is not an index of a line of {len(line)} tiles")
    for i in range(len(line) - 1):
        if line[i][1] != line[i + 1][0]:
            raise ValueError(
                f"tiles {i} and {i + 1} of the line do not match: {line[i]}, {line[i + 1]}"
            )


def layout_line(
    line: Sequence[tuple[int, int]], lead: int, *, width: float = WIDTH
) -> list[Placement]:
    """Where each tile of the line is drawn on a table ``width`` wide, in line order (left
    end first); the top row's tiles start MARGIN below 0, the rows grow as needed.

    ``line`` holds (left half, right half) pairs from the left end; ``lead`` is the index
    of the round's first tile, -1 for an empty line.

    Raises:
        ValueError: the lead is not in the line, neighbours do not match, or ``width`` is
            under :data:`MIN_WIDTH`.
    """
    _check_line(line, lead, width)
    if not line:
        return []
    a, b = line[lead]
    centre = width / 2
    if a == b:
        lead_laid = _Laid(centre - HALF / 2, -HALF, HALF, 2 * HALF, (centre, 0.0), (centre, 0.0))
        reach = HALF / 2
    else:
        lead_laid = _lying(centre - HALF / 2, centre + HALF / 2, 0.0)
        reach = HALF
    right = line[lead + 1 :]
    left = line[:lead][::-1]
    low, high = MARGIN, width - MARGIN
    right_laid = _arm([t[0] == t[1] for t in right], centre + reach, 0.0, 1, 1, low, high)
    left_laid = _arm([t[0] == t[1] for t in left], centre - reach, 0.0, -1, -1, low, high)
    placements = [_placement(lead, lead_laid, a, b)]
    placements += [_placement(lead + 1 + k, laid, *right[k]) for k, laid in enumerate(right_laid)]
    placements += [
        _placement(lead - 1 - k, laid, left[k][1], left[k][0]) for k, laid in enumerate(left_laid)
    ]
    placements.sort(key=lambda p: p.index)
    shift = MARGIN - min(p.y for p in placements)
    return [
        Placement(p.index, p.x, p.y + shift, p.w, p.h, p.first, p.second, p.double)
        for p in placements
    ]


def line_viewbox(placements: Sequence[Placement], *, width: float = WIDTH) -> tuple[float, float]:
    """The (width, height) of the table that holds ``placements``: ``width`` across, the
    rows' height plus margins down (at least one row of doubles)."""
    bottom = max((p.y + p.h for p in placements), default=0.0)
    return width, max(bottom + MARGIN, 2 * HALF + 2 * MARGIN)


def line_svg(
    line: Sequence[tuple[int, int]],
    lead: int,
    *,
    placed: int | None = None,
    title: str = "",
    width: float = WIDTH,
    ids: str = "dp",
) -> Markup:
    """The line as an ``<svg>`` that scales to its container: one ``<g class="tile"
    data-index="i" data-tile="a-b">`` per tile (``a-b`` as in ``line``), the lead with
    class ``lead``, the tile at index ``placed`` (this step's play) framed and with class
    ``placed``. ``title`` names the picture (by default its tile count and open ends).

    Raises:
        ValueError: as :func:`layout_line`, or ``placed`` is not an index of the line.
    """
    placements = layout_line(line, lead, width=width)
    if placed is not None and not 0 <= placed < len(line):
        raise ValueError(f"placed {placed!r} is not an index of a line of {len(line)} tiles")
    w, h = line_viewbox(placements, width=width)
    if not title:
        title = (
            f"The line: {len(line)} tiles, open ends {line[0][0]} and {line[-1][1]}"
            if line
            else "The line: no tile played yet"
        )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-line" viewBox="0 0 {_num(w)} '
        f'{_num(h)}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        pip_defs((n for tile in line for n in tile), ids),
        f'<rect class="table" width="{_num(w)}" height="{_num(h)}" rx="6" fill="{_TABLE}"/>',
    ]
    parts += (
        _line_tile(p, line[p.index], p.index == lead, p.index == placed, ids) for p in placements
    )
    parts.append("</svg>")
    return Markup("".join(parts))


def _line_tile(p: Placement, tile: tuple[int, int], lead: bool, placed: bool, ids: str) -> str:
    """One tile of :func:`line_svg`, framed when it is the lead or this step's play (``ids``
    is the caller's pip prefix, as :func:`tile_svg`'s ``pips``)."""
    a, b = tile
    frame = ""
    if placed:
        frame = _outline(p.x, p.y, p.w, p.h, _PLACED)
    elif lead:
        frame = _outline(p.x, p.y, p.w, p.h, _LEAD, 2)
    notes = "".join(note for note, on in ((", the lead", lead), (", just played", placed)) if on)
    classes = " ".join(name for name, on in (("lead", lead), ("placed", placed)) if on)
    attrs = f' data-index="{p.index}" data-tile="{a}-{b}"'  # ints: nothing to escape
    face = _face(p.first, p.second, p.x, p.y, p.vertical, classes, ids, attrs, f"{a}-{b}{notes}")
    return frame + face


# -- hands ----------------------------------------------------------------------------------

#: Space between the tiles of a hand, and tiles per row before a hand wraps.
HAND_GAP = 5.0
HAND_ROW = 10


def hand_svg(
    tiles: Sequence[tuple[int, int]] | int,
    *,
    highlight: Collection[tuple[int, int]] = (),
    label: str = "",
    per_row: int = HAND_ROW,
    ids: str = "dp",
) -> Markup:
    """A seat's hand as an ``<svg>`` at its natural size: upright tiles face up (each a
    ``<g class="tile" data-tile="a-b">``, those in ``highlight`` - either way round -
    framed and with class ``legal``), or, given an int, that many backs that name no tile.
    Wraps after ``per_row`` tiles. ``label`` names the picture (e.g. the seat).
    """
    hidden = isinstance(tiles, int)
    count = tiles if isinstance(tiles, int) else len(tiles)
    legal = {(min(t), max(t)) for t in highlight}
    columns = max(1, min(count, per_row))
    rows = max(1, -(-count // per_row))
    w = columns * (HALF + HAND_GAP) + HAND_GAP
    h = rows * (2 * HALF + HAND_GAP) + HAND_GAP
    what = f"{count} tiles, hidden" if hidden else f"{count} tiles"
    name = f"{label}: {what}" if label else what
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-hand" width="{_num(w)}" '
        f'height="{_num(h)}" viewBox="0 0 {_num(w)} {_num(h)}" role="img" '
        f'aria-label="{escape(name)}"><title>{escape(name)}</title>'
    ]
    if not isinstance(tiles, int):
        parts.append(pip_defs((n for tile in tiles for n in tile), ids))
    for i in range(count):
        x = HAND_GAP + (i % per_row) * (HALF + HAND_GAP)
        y = HAND_GAP + (i // per_row) * (2 * HALF + HAND_GAP)
        if isinstance(tiles, int):
            parts.append(_back(x, y, True, ""))
            continue
        a, b = tiles[i]
        is_legal = (min(a, b), max(a, b)) in legal
        if is_legal:
            parts.append(_outline(x, y, HALF, 2 * HALF, _LEGAL))
        attrs = f' data-tile="{a}-{b}"'  # ints: nothing to escape
        parts.append(_face(a, b, x, y, True, "legal" if is_legal else "", ids, attrs, f"{a}-{b}"))
    parts.append("</svg>")
    return Markup("".join(parts))
