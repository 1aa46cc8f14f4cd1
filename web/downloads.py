"""What a download's response says about its file: the ``Content-Disposition`` header, and
``X-Records-Pruned`` when retention left records out of it."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

__all__ = ["PRUNED_HEADER", "disposition"]

#: The header of an export of game records that retention left some out of: a sentence
#: saying how many (arena.service.retention.pruned_note).
PRUNED_HEADER = "X-Records-Pruned"


def disposition(filename: str, kind: str = "attachment") -> str:
    """The ``Content-Disposition`` of a download called ``filename`` (``kind``: ``attachment``
    to save it, ``inline`` to show it): a name in any script (a bot's or a competition's may
    be ``日本``) as RFC 6266's ``filename*``, with an ASCII ``filename`` beside it (a header
    holds Latin-1 only: the server refuses the rest).

    >>> disposition("greedy-v1.py", "inline")
    'inline; filename="greedy-v1.py"'
    >>> disposition("日本-v1.py")
    'attachment; filename="-v1.py"; filename*=UTF-8\\'\\'%E6%97%A5%E6%9C%AC-v1.py'
    """
    plain = "".join(
        c for c in unicodedata.normalize("NFKD", filename) if c.isascii() and c not in '"\\'
    )
    if plain == filename:
        return f'{kind}; filename="{filename}"'
    quoted = quote(filename, safe="!#$&+-.^_`|~")
    return f"{kind}; filename=\"{plain}\"; filename*=UTF-8''{quoted}"
