"""Copies and near-copies across a competition's entrants, for its organiser
(docs/competitions.md, "The organiser's tools"): :func:`copy_report`, which the organiser's
page, the API and ``arena competition copies`` share.

Every version entered for good is compared with every other entrant's by the similarity
engine the classes use (arena.service.similarity: copydetect's winnowed fingerprints, the
boilerplate left out; :func:`arena.service.similarity.compare_cached`), one pair of
versions reported for each two entrants; sources that are byte for byte the same are
always reported (score 1, ``identical``), even when they are boilerplate to the
fingerprints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.service.competition_tools import organiser_row
from arena.service.competitions import CompetitionError
from arena.service.display import display_name
from arena.service.permissions import Actor, Operator
from arena.service.shapes import about
from arena.service.similarity import (
    MAX_COMPARED_CHARS,
    MAX_PAIR_CHARS,
    THRESHOLD,
    SimilarPair,
    compare_cached,
)
from arena.store.bots import version_sources
from arena.store.competitions import ENTERED, CompetitionRow, entry_rows
from arena.store.db import Store

__all__ = ["COMPARED", "THRESHOLD", "CopyPair", "CopyReport", "CopySide", "copy_report"]

#: The entry statuses whose versions the copy report compares: every version that was
#: entered for good (it played, plays, came late, or was withdrawn).
COMPARED = (*ENTERED, "withdrawn")


@dataclass(frozen=True, slots=True)
class CopySide:
    """An entrant's side of a similar pair: the version compared and its share found in the
    other's, with its matching lines."""

    entrant: str
    version: str = field(metadata=about("owner/bot vN"))
    version_id: int
    status: str = field(metadata=about("its entry's status"))
    similarity: float = field(
        metadata=about("the share of this source found in the other", digits=4)
    )
    lines: tuple[tuple[int, int], ...] = field(
        metadata=about("its matching lines: [first, last] from 1")
    )


@dataclass(frozen=True, slots=True)
class CopyPair:
    """Two entrants' most similar versions: ``score`` the larger similarity (1 for the
    same bytes), ``identical`` whether the sources are byte for byte the same."""

    score: float = field(metadata=about("the larger of the two similarities", digits=4))
    identical: bool
    tokens: int = field(metadata=about("the length of the text in common (tokenized)"))
    a: CopySide
    b: CopySide


@dataclass(frozen=True, slots=True)
class CopyReport:
    """The copies and near-copies across a competition's entrants (:func:`copy_report`).

    Attributes:
        entrants: entrants with a version compared; ``versions``: distinct sources compared.
        scope: ``every entered version``, or ``each entrant's latest version`` when every
            one is more than a request compares.
        pairs: one a pair of entrants (their most similar versions), highest score first.
    """

    competition: str
    threshold: float
    entrants: int
    versions: int
    scope: str
    seconds: float = field(metadata=about("how long the comparison took", digits=3))
    pairs: tuple[CopyPair, ...]


# --- copies across entrants ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Version:
    version_id: int
    user: str
    name: str
    status: str
    digest: str


def _entered(store: Store, row: CompetitionRow) -> tuple[dict[int, _Version], dict[int, str]]:
    """Every version entered for good (:data:`COMPARED`), and the sources by version id."""
    statuses: dict[int, str] = {}
    for entry in sorted(entry_rows(store, row.id), key=lambda e: e.id):
        if entry.version_id is not None and entry.status in COMPARED:
            statuses[entry.version_id] = entry.status
    rows = version_sources(store, sorted(statuses))
    versions = {
        v: _Version(v, owner, display_name(owner, bot, number), statuses[v], sha)
        for v, (owner, bot, number, sha, _) in rows.items()
    }
    return versions, {v: rows[v][4] for v in rows}


def _latest_only(versions: dict[int, _Version]) -> dict[int, _Version]:
    latest: dict[str, _Version] = {}
    for version in versions.values():  # ids grow: the largest is the latest
        if version.user not in latest or version.version_id > latest[version.user].version_id:
            latest[version.user] = version
    return {v.version_id: v for v in latest.values()}


def _too_much(sources: Mapping[int, str]) -> bool:
    chars = sum(len(source) for source in sources.values())
    return chars > MAX_COMPARED_CHARS or (len(sources) - 1) * chars > MAX_PAIR_CHARS


def _side(version: _Version, similarity: float, lines: tuple[tuple[int, int], ...]) -> CopySide:
    return CopySide(
        entrant=version.user, version=version.name, version_id=version.version_id,
        status=version.status, similarity=similarity, lines=lines,
    )  # fmt: skip


def _pairs(
    versions: dict[int, _Version], pairs: list[SimilarPair[int]], threshold: float
) -> list[CopyPair]:
    """The best pair of each two entrants: identical sources (score 1, whatever the
    fingerprints say: a copy of boilerplate is a copy too), then the fingerprints' pairs."""
    best: dict[tuple[str, str], CopyPair] = {}

    def keep(pair: CopyPair) -> None:
        key = tuple(sorted((pair.a.entrant, pair.b.entrant)))
        held = best.get((key[0], key[1]))
        if held is None or (pair.score, pair.identical) > (held.score, held.identical):
            best[(key[0], key[1])] = pair

    by_digest: dict[str, list[_Version]] = {}
    for version in versions.values():
        by_digest.setdefault(version.digest, []).append(version)
    for same in by_digest.values():
        for i, a in enumerate(same):
            for b in same[i + 1 :]:
                if a.user != b.user:
                    keep(CopyPair(1.0, True, 0, _side(a, 1.0, ()), _side(b, 1.0, ())))
    for p in pairs:
        for a in by_digest[versions[p.a].digest]:
            for b in by_digest[versions[p.b].digest]:
                if a.user != b.user and p.score > threshold:
                    keep(CopyPair(p.score, False, p.tokens,
                                  _side(a, p.side_a.similarity, p.side_a.lines),
                                  _side(b, p.side_b.similarity, p.side_b.lines)))  # fmt: skip
    return sorted(
        best.values(), key=lambda p: (-p.score, not p.identical, p.a.entrant, p.b.entrant)
    )


def copy_report(
    store: Store, actor: Actor, name: str, *, threshold: float = THRESHOLD
) -> CopyReport:
    """The copies and near-copies across competition ``name``'s entrants (its organiser,
    an admin): every version entered for good compared with every other entrant's (the
    classes' engine, arena.service.similarity: renamed variables hide nothing, the reference
    bots and the starter bot are boilerplate), one pair of versions a pair of entrants
    scoring above ``threshold`` (0 to 1); a byte-for-byte copy always (score 1). An entrant's
    own versions are never compared with each other. When every version is more than a
    request compares, each entrant's latest version only (``scope`` says so).

    Raises:
        NotFound, PermissionDenied: no such competition; not its organiser.
        CompetitionError: ``threshold`` is not a share from 0 to 1, or even the latest
            versions are more than a request compares (the operator's command is not
            bounded).
    """
    row = organiser_row(store, actor, name)
    if not 0.0 <= threshold <= 1.0 or threshold != threshold:
        raise CompetitionError(f"the threshold is a share from 0 to 1, not {threshold}.")
    versions, sources = _entered(store, row)
    scope = "every entered version"
    bounded = not isinstance(actor, Operator)
    if bounded and _too_much(_distinct(versions, sources)):
        versions, scope = _latest_only(versions), "each entrant's latest version"
    distinct = _distinct(versions, sources)
    if bounded and _too_much(distinct):
        raise CompetitionError(
            f"the latest sources of competition {row.name}'s {len(versions)} entrants are more "
            f"than a page compares: the server's operator runs 'arena competition copies "
            f"{row.name}'."
        )
    digests = {v: versions[v].digest for v in distinct}
    pairs, took, _ = compare_cached(distinct, digests) if len(distinct) > 1 else ([], 0.0, False)
    found = _pairs(versions, pairs, threshold)
    return CopyReport(
        competition=row.name, threshold=threshold,
        entrants=len({v.user for v in versions.values()}), versions=len(distinct), scope=scope,
        seconds=took, pairs=tuple(found),
    )  # fmt: skip


def _distinct(versions: Mapping[int, _Version], sources: Mapping[int, str]) -> dict[int, str]:
    """One source a digest (the lowest version id holding it), by version id."""
    chosen: dict[str, int] = {}
    for version_id in sorted(versions):
        chosen.setdefault(versions[version_id].digest, version_id)
    return {v: sources[v] for v in sorted(chosen.values())}
