# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The spellings a secret can come back in (URL-encoded, JSON-escaped, base64, hex) and a matcher of their pieces.

A server or a model may echo a key as it was sent, URL-encoded, JSON-escaped, base64-encoded inside a longer
base64 run (at any of its 3 byte alignments, standard or URL-safe alphabet, padded or not), or as hex. Each such
spelling is a form; a text holds the key when it holds a long enough piece of a form (8 characters of the key
itself, 11 of base64, 16 of hex: about 8 bytes of the key whatever the spelling).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

# Windows of a run tested at once, in C.
_BLOCK = 1024

# A piece of a form this long found in a text marks the text as holding the key, per kind of form. Forms no
# longer than PIECE (short keys) must appear whole, as a token of their own: a key "k" or "test" masked inside
# words would mangle every message ("too*** 2 s").
PIECE = 8
_BASE64_PIECE = 11
_HEX_PIECE = 16

_URLSAFE = str.maketrans("+/", "-_")
_ESCAPE = re.compile(r"%[0-9A-F]{2}")


def _lower_escapes(text: str) -> str:
    return _ESCAPE.sub(lambda m: m.group().lower(), text)


def plain_forms(secret: str) -> set[str]:
    """The secret as is, URL-encoded (both escape cases, `/` kept or not, `+` for space) and JSON-escaped."""
    forms = {secret}
    for quoted in (
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote(secret, safe="/"),
        urllib.parse.quote_plus(secret, safe=""),
    ):
        forms.update((quoted, _lower_escapes(quoted)))
    escaped = json.dumps(secret)[1:-1]
    forms.update((escaped, escaped.replace("/", "\\/")))
    forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    if not secret.isascii():
        # Its UTF-8 bytes read as Latin-1: how a recording's body, scrubbed byte for character, shows it.
        forms.add(secret.encode("utf-8").decode("latin-1"))
    return forms


def encoded_forms(secret: str) -> dict[str, int]:
    """Base64 (3 alignments, 2 alphabets) and hex spellings of a secret's UTF-8 bytes, each with its piece length.

    Inside a longer base64 run the key's bytes may start at any offset modulo 3: each alignment spells them
    differently. Only the characters that depend on the key's bytes alone are kept, so the form is found
    whatever bytes come before and after it (and whether the run is padded or not).
    """
    data = secret.encode("utf-8")
    forms: dict[str, int] = {}
    for shift, skip in ((0, 0), (1, 2), (2, 3)):
        total = shift + len(data)
        spelled = base64.b64encode(b"\0" * shift + data + b"\0\0").decode("ascii")
        core = spelled[skip : total // 3 * 4 + total % 3]
        for form in (core, core.translate(_URLSAFE)):
            forms[form] = min(_BASE64_PIECE, len(form))
    hexed = data.hex()
    for form in (hexed, hexed.upper()):
        forms[form] = min(_HEX_PIECE, len(form))
    return forms


class Pieces:
    """Finds the pieces of long forms in a text: runs of the forms' characters first, then, in C, whether any
    window of a run is a window of a form, and only then where each piece is."""

    def __init__(self, forms: dict[str, int]) -> None:
        by_size: dict[int, set[str]] = {}
        for form, size in forms.items():
            by_size.setdefault(size, set()).update(
                form[start : start + size] for start in range(len(form) - size + 1)
            )
        self._by_size = sorted(by_size.items())
        # Every piece is at least WINDOW long, and starts with a window of a form: the first, cheap test.
        self.window = min(by_size)
        self.windows = frozenset(
            form[start : start + self.window]
            for form in forms
            for start in range(len(form) - self.window + 1)
        )
        self._slices = [slice(start, start + self.window) for start in range(_BLOCK)]
        self.longest = max(size for size, _ in self._by_size)
        self.chars = "".join(sorted({char for form in forms for char in form}))
        # A run of the forms' characters as long as the shortest piece: what any piece needs around it.
        self.runs = re.compile(f"[{re.escape(self.chars)}]{{{self.window},}}")

    def prefixes(self) -> frozenset[str]:
        """Every start of a piece shorter than the piece."""
        return frozenset(
            piece[:end]
            for _, group in self._by_size
            for piece in group
            for end in range(1, len(piece))
        )

    def found(self, text: str) -> list[tuple[int, int]]:
        """The start and end of every piece in `text`, overlapping ones too.

        A piece lies in a run of the forms' characters at least a window long: the runs are found in C, each
        run's windows are looked up at once in C, a block at a time; only a block with a hit is searched, in
        Python, for where its pieces are.
        """
        window = self.window
        windows = self.windows
        slices = self._slices
        spans: list[tuple[int, int]] = []
        for run in self.runs.finditer(text):
            start, end = run.span()
            for block in range(start, end - window + 1, _BLOCK):
                chunk = text[block : min(end, block + _BLOCK + window - 1)]
                if windows.isdisjoint(
                    map(chunk.__getitem__, slices[: len(chunk) - window + 1])
                ):
                    continue
                for at in range(block, block + len(chunk) - window + 1):
                    if text[at : at + window] in windows:
                        for size, group in self._by_size:
                            if text[at : at + size] in group:
                                spans.append((at, at + size))
        return spans
