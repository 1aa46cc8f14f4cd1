"""Pictures the pages draw on the server as inline SVG (no JavaScript, no chart library):
rating intervals on a shared axis (a forest plot), and a progress bar by match status.

Pure functions of numbers to markup; the markup carries no ``style`` attribute (the
Content-Security-Policy allows no inline style), only presentation attributes and classes
that ``static/css/arena.css`` colours.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["STATUSES", "Axis", "axis_svg", "interval_svg", "llr_svg", "progress_svg"]

#: Width and height of one interval's picture, in CSS pixels.
WIDTH, HEIGHT = 240, 18
#: Space left and right of the plotted range.
PAD = 18


@dataclass(frozen=True, slots=True)
class Axis:
    """The Elo range every row of one table is drawn on (so intervals compare by eye)."""

    low: float
    high: float

    @classmethod
    def spanning(cls, intervals: Iterable[tuple[float, float]]) -> Axis:
        """An axis from round numbers just outside every interval (1400-1600 if none)."""
        lows, highs = [], []
        for low, high in intervals:
            lows.append(low)
            highs.append(high)
        if not lows:
            return cls(1400.0, 1600.0)
        low, high = min(lows), max(highs)
        step = _step(high - low)
        return cls(math.floor(low / step) * step, math.ceil(high / step) * step + 0.0)

    def x(self, value: float) -> float:
        """The x coordinate of ``value`` in a picture :data:`WIDTH` wide."""
        span = max(self.high - self.low, 1e-9)
        return round(PAD + (WIDTH - 2 * PAD) * (value - self.low) / span, 1)

    def ticks(self) -> list[float]:
        """Round values to label on the axis."""
        step = _step(self.high - self.low)
        first = math.ceil(self.low / step) * step
        count = int((self.high - first) // step) + 1
        return [first + i * step for i in range(count)]


def _step(span: float) -> float:
    """A round tick step giving 2-6 ticks over ``span``."""
    for step in (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000):
        if span / step <= 5:
            return float(step)
    return 5000.0


def interval_svg(
    axis: Axis, rating: float, low: float, high: float, *, provisional: bool = False
) -> Markup:
    """A point and whisker: the 95% interval as a line with end caps, the rating as a dot."""
    x0, x1, xr = axis.x(low), axis.x(high), axis.x(rating)
    mid = HEIGHT / 2
    kind = "interval provisional" if provisional else "interval"
    title = f"{rating:.0f} (95% interval {low:.0f} to {high:.0f})"
    return Markup(
        f'<svg class="{kind}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<line class="whisker" x1="{x0}" y1="{mid}" x2="{x1}" y2="{mid}"/>'
        f'<line class="cap" x1="{x0}" y1="{mid - 4}" x2="{x0}" y2="{mid + 4}"/>'
        f'<line class="cap" x1="{x1}" y1="{mid - 4}" x2="{x1}" y2="{mid + 4}"/>'
        f'<circle class="point" cx="{xr}" cy="{mid}" r="4"/></svg>'
    )


def axis_svg(axis: Axis) -> Markup:
    """The shared axis, for the header of an interval column."""
    parts = [
        f'<svg class="axis" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'role="img" aria-label="Elo axis">'
    ]
    for tick in axis.ticks():
        x = axis.x(tick)
        parts.append(f'<line class="tick" x1="{x}" y1="{HEIGHT - 5}" x2="{x}" y2="{HEIGHT}"/>')
        parts.append(f'<text x="{x}" y="{HEIGHT - 7}" text-anchor="middle">{tick:.0f}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


#: Match statuses in the order the progress bar shows them.
STATUSES = ("done", "void", "running", "pending")


def progress_svg(progress: Mapping[str, int], *, width: int = 480, height: int = 14) -> Markup:
    """A bar split by match status (done, void, running, pending), proportional to counts."""
    total = sum(progress.get(status, 0) for status in STATUSES)
    parts = [
        f'<svg class="progress" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{_progress_label(progress)}">'
        f'<rect class="track" x="0" y="0" width="{width}" height="{height}"/>'
    ]
    x = 0.0
    for status in STATUSES:
        count = progress.get(status, 0)
        if not count or not total:
            continue
        w = round(width * count / total, 1)
        parts.append(
            f'<rect class="{status}" x="{round(x, 1)}" y="0" width="{w}" height="{height}">'
            f"<title>{count} {status}</title></rect>"
        )
        x += w
    parts.append("</svg>")
    return Markup("".join(parts))


def _progress_label(progress: Mapping[str, int]) -> str:
    return ", ".join(f"{progress.get(s, 0)} {s}" for s in STATUSES)


def llr_svg(
    llr: float,
    lower: float,
    upper: float,
    *,
    width: int = 480,
    height: int = 36,
    below: str = "H0",
    above: str = "H1",
) -> Markup:
    """A sequential test's log-likelihood ratio between its bounds: the bar runs from the
    lower bound (H0 accepted) to the upper (H1 accepted), 0 marked, the LLR a dot (at an
    end once it is past it), the bounds labelled underneath (``below``, ``above``: what
    each end means; the fast pass has no lower end, only a mirror of its upper)."""
    pad = 8
    span = max(upper - lower, 1e-9)

    def x(value: float) -> float:
        clamped = min(max(value, lower), upper)
        return round(pad + (width - 2 * pad) * (clamped - lower) / span, 1)

    mid = 11
    title = (
        f"LLR {llr:+.2f} between {lower:+.2f} ({below or 'no bound'}) and {upper:+.2f} ({above})"
    )
    return Markup(
        f'<svg class="llr" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<rect class="track" x="{pad}" y="{mid - 3}" width="{width - 2 * pad}" height="6"/>'
        f'<line class="zero" x1="{x(0.0)}" y1="2" x2="{x(0.0)}" y2="{2 * mid - 2}"/>'
        f'<circle class="point" cx="{x(llr)}" cy="{mid}" r="6"/>'
        + (f'<text x="{pad}" y="{height - 2}">{below} {lower:+.2f}</text>' if below else "")
        + f'<text x="{x(0.0)}" y="{height - 2}" text-anchor="middle">0</text>'
        f'<text x="{width - pad}" y="{height - 2}" text-anchor="end">{above} {upper:+.2f}</text>'
        "</svg>"
    )
