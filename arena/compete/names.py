"""Names and references: one grammar for every name a person gives the arena.

A **name** -- of a bot, an owner (a user), a tournament, an entrant's label, and the
competitions to come -- is normalised to Unicode NFKC (a full-width letter is its plain one, a
composed ``é`` equals its decomposed spelling), then must be 1 to :data:`MAX_NAME`
characters of letters and digits (any script), ``_``, ``.``, ``+`` and ``-``, beginning with
a letter or a digit. Names are case-sensitive. What a name may not hold is what the
reference syntax uses (``/ @ , =``), whitespace and control characters, so every stored
name can be referred to.

A **user name** is a name too, but two user names are one if their :func:`name_key` is:
surrounding whitespace stripped, NFKC, case-folded (``STUDENT01``, ``student01`` and
``Student01`` are one user; ``Straße`` is ``STRASSE``). The key is what the login limit
counts, what logging in looks up and what sign-up keeps unique; a user keeps the spelling
it signed up with for display. Look-alikes across scripts (a Cyrillic ``\u0430`` for a Latin
``a``) stay different names.

A **reference** to a stored bot is ``[LABEL=][OWNER/]NAME[@VERSION]``: the bot called NAME
(of OWNER, needed only when several owners have a bot of that name), its VERSION (``2`` or
``v2``) or else its latest one, seated under LABEL (default NAME, or ``NAME-vN``).

Standard library only: the store checks names when it creates them, the service and the
command line parse references with :func:`parse_reference`. docs/storage.md "Names".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from arena.errors import ParseError

__all__ = [
    "MAX_NAME",
    "NAME",
    "Reference",
    "check_name",
    "fit_name",
    "name_key",
    "parse_reference",
    "taken_message",
]

#: The longest name, in characters (after normalisation), on every database.
MAX_NAME = 64
#: A name after normalisation (see the module's docstring); ``\w`` is Unicode here.
NAME = re.compile(r"[^\W_][\w.+-]*")
_REFERENCE = re.compile(
    r"(?:(?P<label>[^=]*)=)?(?:(?P<owner>[^/@]*)/)?(?P<name>[^/@]*)(?:@(?P<version>[^@]*))?"
)
_VERSION = re.compile(r"v?(?P<number>[1-9][0-9]{0,8})")
_RULE = f"1-{MAX_NAME} letters, digits, '_', '.', '+' or '-', beginning with a letter or a digit"


def check_name(text: str, what: str = "name") -> str:
    """Return ``text`` normalised (NFKC), if it is a valid name.

    Raises:
        ParseError: it is not; the message quotes it, says ``what`` it names and the rule.
    """
    name = unicodedata.normalize("NFKC", text)
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise ParseError(f"{what} {shown!r} is not a valid name: use {_RULE}")
    return name


def name_key(text: str) -> str:
    """The form two user names are compared in: ``text`` stripped of surrounding
    whitespace, NFKC-normalised and case-folded (then NFKC again, as Unicode's
    NFKC_Casefold). Any text has a key, valid name or not (the login limit keys on what
    was typed)."""
    folded = unicodedata.normalize("NFKC", text.strip()).casefold()
    return unicodedata.normalize("NFKC", folded)


def taken_message(what: str, taken: str, name: str) -> str:
    """The refusal of ``name`` where ``taken`` holds its key: ``a competition called
    'd9cup' exists already ('D9CUP' differs from it only in case)``.

    >>> taken_message("a class", "Year9", "year9")
    "a class called 'Year9' exists already ('year9' differs from it only in case)"
    """
    said = f"{what} called {taken!r} exists already"
    return said if taken == name else f"{said} ({name!r} differs from it only in case)"


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed ``[LABEL=][OWNER/]NAME[@VERSION]``: every part normalised; the label is
    the given one, else NAME, else ``NAME-vN`` with a version."""

    label: str
    owner: str | None
    name: str
    version: int | None


def parse_reference(spec: str) -> Reference:
    """Parse a reference to a stored bot (see the module's docstring).

    Raises:
        ParseError: a part is missing or not a valid name, or the version is not a
            positive whole number (``2`` or ``v2``).
    """
    found = _REFERENCE.fullmatch(spec)
    if found is None:
        raise ParseError(f"{spec!r} is not [LABEL=][OWNER/]NAME[@VERSION]")
    label, owner, name, version = found.group("label", "owner", "name", "version")
    name = check_name(name, f"in {spec!r}, the bot name")
    number: int | None = None
    if version is not None:
        matched = _VERSION.fullmatch(version)
        if matched is None:
            raise ParseError(f"in {spec!r}, the version {version!r} is not a number like 2 or v2")
        number = int(matched.group("number"))
    return Reference(
        label=check_name(label, f"in {spec!r}, the label")
        if label is not None
        else (name if number is None else f"{name}-v{number}"),
        owner=None if owner is None else check_name(owner, f"in {spec!r}, the owner"),
        name=name,
        version=number,
    )


def fit_name(text: str) -> str:
    """A valid name made from any text: characters a name may not hold become ``-``, and a
    name longer than :data:`MAX_NAME` keeps its start and ends with a hash of the whole
    (names the arena derives, e.g. a regression test's tournament)."""
    name = re.sub(r"[^\w.+-]+", "-", unicodedata.normalize("NFKC", text)).strip("-_.+")
    name = name or "x"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        name = name[: MAX_NAME - len(digest) - 1].rstrip("-_.+") + "-" + digest
    return check_name(name)
