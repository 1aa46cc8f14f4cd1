"""Similar sources between a class's students: winnowed fingerprints, as MOSS compares.

The comparison is the maintained library ``copydetect`` (its :class:`CodeFingerprint` and
:func:`compare_files`): each source is tokenized by pygments with every name, function
and string replaced by one letter (renaming variables hides nothing), its k-grams
(:data:`NOISE` characters of that text) hashed and winnowed, and two sources share what
their fingerprints share. Fingerprints found in the boilerplate (:func:`boilerplate`: the
reference bots of the ``bots`` package and the starter bot of ``arena new-bot``) are
dropped first, so two students who both started from the template or from ``greedy`` are
not reported for it.

A pair's score is the larger of its two similarities (the share of one side's
fingerprinted text found in the other): a short bot pasted whole into a long one scores
high. Each side carries its matching line ranges, for the page that shows the two sources
side by side.

- :func:`compare_sources`: every pair of plain sources, scored (no database).
- :func:`compare_cached`: the same, once a process for one set of versions (a class's
  report, a competition's copies: arena.service.competition_tools).
- :func:`similarity_report`: a class's students' latest versions, for its teachers only;
  one comparison at a time a process, cached by the set of versions compared (a class of
  30 is 435 pairs: about half a second here, docs/web.md, "Similar sources").

copydetect (and with it matplotlib and jinja2) is imported when a comparison runs, never
when this module is: the service layer loads no web framework (tests/test_layering.py).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import importlib.util
import io
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from arena.match.newbot import starter_bot
from arena.service.classes import ClassError, class_for_teacher, latest_submissions, student_ids
from arena.service.display import display_name
from arena.service.permissions import Actor, Operator
from arena.service.shapes import HIDDEN, about
from arena.store.bots import version_sources
from arena.store.db import Store

__all__ = [
    "MAX_COMPARED_CHARS",
    "MAX_PAIR_CHARS",
    "NOISE",
    "THRESHOLD",
    "ReportPair",
    "ReportSide",
    "SimilarPair",
    "Similarity",
    "SimilarityReport",
    "boilerplate",
    "compare_cached",
    "compare_sources",
    "line_ranges",
    "similarity_report",
]

logger = logging.getLogger(__name__)

#: The k-gram length, in characters of the tokenized text: shorter runs in common are
#: noise (copydetect's default, as MOSS's).
NOISE = 25
#: Runs at least this long in common are always found (copydetect's default: with
#: NOISE, a winnowing window of 1, every k-gram kept).
GUARANTEE = 25
#: The default threshold of a reported pair (its score, 0 to 1).
THRESHOLD = 0.5

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Similarity:
    """One side of a similar pair.

    Attributes:
        similarity: the share (0 to 1) of this side's fingerprinted text that the other
            side has too.
        lines: the matching line ranges of this side, (first, last) from 1, in order.
    """

    similarity: float
    lines: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class SimilarPair(Generic[K]):
    """Two sources with text in common: ``a`` and ``b`` are their keys (``a`` first in
    the order they were given), ``score`` the larger similarity, ``tokens`` the length of
    the text in common (in tokenized characters, on ``a``'s side)."""

    a: K
    b: K
    score: float
    tokens: int
    side_a: Similarity
    side_b: Similarity


def _copydetect() -> Any:
    """copydetect's module, imported on first use (it loads matplotlib: ~0.6 s)."""
    import copydetect

    return copydetect


def _fingerprint(source: str, boilerplate: Any = None) -> Any:
    """A source's fingerprint (copydetect's, as Python), boilerplate hashes dropped."""
    return _copydetect().CodeFingerprint(
        "bot.py",
        NOISE,
        GUARANTEE - NOISE + 1,
        boilerplate=boilerplate,
        fp=io.StringIO(source),
    )


def _package_bots() -> dict[str, str]:
    """The reference bots' sources (the ``bots`` package), by file name ({} if absent)."""
    spec = importlib.util.find_spec("bots")
    if spec is None or spec.origin is None:
        return {}
    folder = Path(spec.origin).parent
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(folder.glob("*.py"))
        if path.name != "__init__.py"
    }


@functools.cache
def boilerplate() -> tuple[tuple[str, str], ...]:
    """What every student may start from, as (name, source): the reference bots of the
    ``bots`` package and the starter bot ``arena new-bot`` writes."""
    return (*_package_bots().items(), ("arena new-bot", starter_bot("mybot")))


@functools.cache
def _boilerplate_hashes(extra: tuple[str, ...] = ()) -> Any:
    """The fingerprints of :func:`boilerplate` and ``extra`` sources, as copydetect takes
    them (hashes of this process: Python's string hash is salted per process)."""
    import numpy as np

    found: set[int] = set()
    for _, source in boilerplate():
        found |= _fingerprint(source).hashes
    for source in extra:
        found |= _fingerprint(source).hashes
    return np.array(sorted(found))


class _Cache:
    """The last few values computed, by key (thread-safe; per process)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


#: Fingerprints made, by source (a source's is the slowest part: pygments tokenizes it,
#: ~0.4 s for 64 KB; a class compared again fingerprints only its new versions).
_PRINTS = _Cache(256)


def _cached_fingerprint(source: str, hashes: Any, extra: tuple[str, ...]) -> Any:
    """:func:`_fingerprint` of ``source``, made once a process (with this boilerplate)."""
    key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest(), extra)
    found = _PRINTS.get(key)
    if found is None:
        found = _fingerprint(source, hashes)
        _PRINTS.put(key, found)
    return found


def line_ranges(
    source: str, starts: Iterable[int], ends: Iterable[int]
) -> tuple[tuple[int, int], ...]:
    """The lines (first, last, from 1) that the character slices ``starts[i]:ends[i]`` of
    ``source`` cover, in order: ranges that overlap, touch or have only blank lines
    between them merged.

    >>> line_ranges("a\\nb\\nc\\nd\\n", [0, 4], [3, 5])
    ((1, 3),)
    >>> line_ranges("a\\nb\\nc\\nd\\n", [0, 6], [1, 7])
    ((1, 1), (4, 4))
    """
    lines = source.split("\n")
    newlines = list(itertools.accumulate(len(line) + 1 for line in lines[:-1]))
    ranges: list[tuple[int, int]] = []
    for start, end in sorted(zip(starts, ends, strict=True)):
        while start < end and source[start].isspace():  # copydetect's slices keep the
            start += 1  # whitespace its tokenizer dropped around them
        while end > start and source[end - 1].isspace():
            end -= 1
        if end <= start:
            continue
        first = bisect.bisect_right(newlines, start) + 1
        last = bisect.bisect_right(newlines, end - 1) + 1
        if ranges and all(not line.strip() for line in lines[ranges[-1][1] : first - 1]):
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
        else:
            ranges.append((first, last))
    return tuple(ranges)


def compare_sources(
    sources: Mapping[K, str],
    *,
    threshold: float = 0.0,
    extra_boilerplate: Sequence[str] = (),
) -> list[SimilarPair[K]]:
    """Every pair of ``sources`` (key → Python source) whose score is above ``threshold``
    (0: every pair with anything in common), highest score first (then in the order the
    sources were given), the :func:`boilerplate` and ``extra_boilerplate`` left out.

    >>> a = "def play(o):\\n    best = max(o.legal_moves, key=lambda m: m.tile.high)\\n"
    >>> pairs = compare_sources({1: a + "    return best\\n", 2: a.replace("best", "x")})
    >>> [(p.a, p.b, p.side_a.lines) for p in pairs]
    [(1, 2, ((1, 2),))]
    """
    extra = tuple(extra_boilerplate)
    hashes = _boilerplate_hashes(extra)
    prints = {key: _cached_fingerprint(source, hashes, extra) for key, source in sources.items()}
    compare = _copydetect().compare_files
    pairs: list[SimilarPair[K]] = []
    for a, b in itertools.combinations(prints, 2):
        tokens, (sim_a, sim_b), (slices_a, slices_b) = compare(prints[a], prints[b])
        score = max(float(sim_a), float(sim_b))
        if tokens <= 0 or score <= threshold:
            continue
        pairs.append(
            SimilarPair(
                a=a,
                b=b,
                score=score,
                tokens=int(tokens),
                side_a=Similarity(
                    float(sim_a),
                    line_ranges(sources[a], map(int, slices_a[0]), map(int, slices_a[1])),
                ),
                side_b=Similarity(
                    float(sim_b),
                    line_ranges(sources[b], map(int, slices_b[0]), map(int, slices_b[1])),
                ),
            )
        )
    pairs.sort(key=lambda p: -p.score)
    return pairs


#: The comparisons made, by the set of versions compared (a version's source never
#: changes, so a class compared again with no new version is not compared again).
_REPORTS = _Cache(16)
#: One comparison at a time a process: a second teacher asking waits, then reads the cache.
_COMPARING = threading.Lock()


@dataclass(frozen=True, slots=True)
class ReportSide:
    """A student's side of a similar pair: the version compared, its similarity and its
    matching lines (:class:`Similarity`)."""

    student: str
    version: str = field(metadata=about("owner/bot vN: the student's latest version"))
    owner: str = field(metadata=HIDDEN)
    bot: str = field(metadata=HIDDEN)
    number: int = field(metadata=HIDDEN)
    version_id: int = field(metadata=HIDDEN)
    similarity: float = field(
        metadata=about("the share of this source found in the other", digits=4)
    )
    lines: tuple[tuple[int, int], ...] = field(
        metadata=about("its matching lines: [first, last] from 1")
    )


@dataclass(frozen=True, slots=True)
class ReportPair:
    """Two students' versions with text in common: ``score`` the larger similarity,
    ``tokens`` the length of that text (tokenized characters)."""

    score: float = field(metadata=about("the larger of the two similarities", digits=4))
    tokens: int = field(metadata=about("the length of the text in common (tokenized)"))
    a: ReportSide
    b: ReportSide


@dataclass(frozen=True, slots=True)
class SimilarityReport:
    """A class's similarity report (:func:`similarity_report`).

    Attributes:
        students: the class's students; ``compared``: those with a version (their latest).
        pairs: the pairs above ``threshold``, highest score first.
        sources: the source of each version in ``pairs``, by version id (for the page).
        seconds: how long the comparison took (when it was made: ``cached`` says whether
            this report read it from the cache).
    """

    class_name: str
    threshold: float
    students: int
    compared: int = field(metadata=about("students with a version, compared in pairs"))
    seconds: float = field(metadata=about("how long the comparison took", digits=3))
    pairs: tuple[ReportPair, ...]
    sources: dict[int, str] = field(metadata=HIDDEN)
    cached: bool = field(metadata=HIDDEN)


def compare_cached(
    sources: Mapping[int, str], digests: Mapping[int, str]
) -> tuple[list[SimilarPair[int]], float, bool]:
    """Every pair of ``sources`` (version id → source) with something in common, the
    seconds the comparison took, and whether it came from the cache (keyed by each
    version's id and sha256: one process may serve several databases, as tests do)."""
    key = frozenset(digests.items())
    with _COMPARING:
        cached = _REPORTS.get(key)
        if cached is not None:
            return (*cached, True)
        _boilerplate_hashes()  # made once a process (copydetect imported): not the class's
        began = time.perf_counter()
        pairs = compare_sources(sources)
        took = time.perf_counter() - began
        _REPORTS.put(key, (pairs, took))
    logger.info(
        "similarity: %d sources, %d pairs compared in %.2f s",
        len(sources),
        len(sources) * (len(sources) - 1) // 2,
        took,
    )
    return pairs, took, False


#: The most a report an account asks for compares (the operator's is not bounded): the
#: characters fingerprinted (pygments: ~11 s for 2 MB here, 30 sources of 64 KB), and the
#: characters compared over every pair, (sources - 1) x characters (~7 s for 57 M, the same
#: 30 sources). A class of 30 students with bots of 64 KB, or 100 with bots of 8 KB,
#: stays within both; students' big sources cannot hold a page (and a core) for minutes.
MAX_COMPARED_CHARS = 2_200_000
MAX_PAIR_CHARS = 100_000_000


def _check_work(class_name: str, sources: Mapping[int, str]) -> None:
    """Refuse a comparison past :data:`MAX_COMPARED_CHARS` or :data:`MAX_PAIR_CHARS`.

    Raises:
        ClassError: too much to compare on a request (the message says what).
    """
    chars = sum(len(source) for source in sources.values())
    if chars > MAX_COMPARED_CHARS or (len(sources) - 1) * chars > MAX_PAIR_CHARS:
        raise ClassError(
            f"the {len(sources)} latest sources of class {class_name} ({chars // 1000} K "
            "characters) are more than a page compares: the server's operator runs "
            f"'arena class similarity {class_name}'."
        )


def similarity_report(
    store: Store, actor: Actor, class_name: str, *, threshold: float = THRESHOLD
) -> SimilarityReport:
    """The pairs of the class's students whose latest submissions to the class's
    assignments (never their other bots, nor competition entries: what a teacher may
    read) score above ``threshold`` (0 to 1), for the class's teachers (and admins, the
    operator).

    Raises:
        NotFound: no such class, or ``actor`` is a stranger to it.
        PermissionDenied: ``actor`` is a student of the class, or nobody is logged in.
        ClassError: ``threshold`` is not between 0 and 1; an account asked for more than
            :data:`MAX_COMPARED_CHARS` or :data:`MAX_PAIR_CHARS` (the operator is not
            bounded).
    """
    found = class_for_teacher(store, actor, class_name)
    if not 0.0 <= threshold <= 1.0 or threshold != threshold:
        raise ClassError(f"the threshold is a share from 0 to 1, not {threshold}")
    students = student_ids(store, found.id)
    latest = latest_submissions(store, found.id)  # what the class's teachers may read
    rows = version_sources(store, sorted(latest.values()))
    sources = {version_id: row[4] for version_id, row in sorted(rows.items())}
    if not isinstance(actor, Operator):
        _check_work(found.name, sources)
    pairs, took, cached = compare_cached(sources, {v: row[3] for v, row in rows.items()})

    def side(version_id: int, match: Similarity) -> ReportSide:
        owner, bot, number, _, _ = rows[version_id]
        return ReportSide(
            student=owner,
            version=display_name(owner, bot, number),
            owner=owner,
            bot=bot,
            number=number,
            version_id=version_id,
            similarity=match.similarity,
            lines=match.lines,
        )

    chosen = tuple(
        ReportPair(p.score, p.tokens, side(p.a, p.side_a), side(p.b, p.side_b))
        for p in pairs
        if p.score > threshold
    )
    shown = {s.version_id for p in chosen for s in (p.a, p.b)}
    return SimilarityReport(
        class_name=found.name,
        threshold=threshold,
        students=len(students),
        compared=len(sources),
        pairs=chosen,
        sources={v: sources[v] for v in sorted(shown)},
        seconds=took,
        cached=cached,
    )
