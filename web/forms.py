"""What the pages' forms share: reading numbers from a form, an uploaded file, an upload
form's one-time token, and an error as a sentence."""

from __future__ import annotations

import secrets
from pathlib import PurePath

from flask import request
from werkzeug.datastructures import FileStorage

from arena.errors import ArenaError
from arena.service.uploads import MAX_SOURCE_BYTES

__all__ = [
    "UPLOAD_TOKEN_FIELD",
    "form_float",
    "form_int",
    "read_file",
    "sentence",
    "upload_key",
    "upload_token",
]

#: The hidden field of an upload form that carries its one-time token.
UPLOAD_TOKEN_FIELD = "upload_token"


def upload_token() -> str:
    """A new one-time token for an upload form's hidden field (a template global): the form
    sent twice (a double click) carries it twice, and the intake
    (arena.service.intake.take_upload) takes the upload once."""
    return secrets.token_urlsafe(18)


def upload_key() -> str | None:
    """The one-time token the posted upload form carries (None: the form had none)."""
    return request.form.get(UPLOAD_TOKEN_FIELD, "").strip() or None


def read_file(file: FileStorage, limit: int = MAX_SOURCE_BYTES) -> tuple[str, bytes]:
    """An uploaded file's name (its last part) and at most ``limit`` + 1 bytes of it (one
    past the limit: enough to tell it is too big); the file is closed."""
    filename = PurePath((file.filename or "").replace("\\", "/")).name
    try:
        return filename, file.stream.read(limit + 1)
    finally:
        file.close()


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first, a full stop last. A first word that is a
    file or bot name or an identifier (``broken.py``, ``alice/greedy``, ``move_ms``) keeps
    its case."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    if first[:1].isalpha() and not any(c in first for c in "./\\_@'\""):
        text = text[:1].upper() + text[1:]
    return text + ("" if text.endswith(".") else ".")


def form_int(field: str, default: int) -> int:
    """The form's whole number ``field`` (``default`` when left empty).

    Raises:
        ArenaError: not a whole number (the message names the field).
    """
    text = request.form.get(field, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ArenaError(
            f"{field.replace('_', ' ')} must be a whole number, not {text!r}"
        ) from None


def form_float(field: str, default: float) -> float:
    """The form's number ``field`` (``default`` when left empty).

    Raises:
        ArenaError: not a number (the message names the field).
    """
    text = request.form.get(field, "").strip()
    try:
        return float(text) if text else default
    except ValueError:
        raise ArenaError(f"{field} must be a number, not {text!r}") from None
