# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Ids for tool calls a wire sends without one: the same call in the same place always gets the same id."""

from __future__ import annotations

import hashlib


def stable_call_id(scope: str, index: int, name: str, arguments: str) -> str:
    """An id for a call the wire sent without one: the same call in the same place always gets the same id."""
    text = f"{scope}\x00{index}\x00{name}\x00{arguments}"
    # surrogatepass: a lone surrogate is a legal JSON escape (\ud800); it gets an id, not UnicodeError.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"call_{digest[:24]}"
