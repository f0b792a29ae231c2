"""The manifest's JSON text, byte for byte what `json.dumps(value, indent=2, sort_keys=True)` writes, made faster.

With an indent, the json module encodes in Python, one generator step per value: for the manifest of a 1,000-tool
package (a digest per file, a record per warning) that costs `check` about half of `import pydantic`. Here the
containers are joined with str.join and every string is quoted by the json module's C encoder. A value of a kind
the manifest never holds (a float, a key that is not a string) is left to json.dumps.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

_STEP = "  "


class _Unusual(Exception):
    """A value this encoder does not write; json.dumps writes the whole text instead."""


def manifest_json(value: Any) -> str:
    """`json.dumps(value, indent=2, sort_keys=True) + "\\n"`."""
    try:
        return _encoded(value, "\n") + "\n"
    except _Unusual:
        return json.dumps(value, indent=2, sort_keys=True) + "\n"


def _encoded(value: Any, newline: str) -> str:
    """`value` as JSON, its nested lines starting with `newline` (a line break and the indent of `value`)."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = newline + _STEP
        quote = encode_basestring_ascii
        if any(type(key) is not str for key in value):
            raise _Unusual
        # Strings and integers (digests, places) written in place: a call per value would double the time.
        parts = [
            quote(key)
            + ": "
            + (quote(item) if type(item) is str else int.__repr__(item) if type(item) is int else _encoded(item, inner))
            for key, item in sorted(value.items())
        ]
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = newline + _STEP
        return "[" + inner + ("," + inner).join([_encoded(item, inner) for item in value]) + newline + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    raise _Unusual
