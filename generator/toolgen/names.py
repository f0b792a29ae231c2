"""Turn names from schemas into safe, unique Python identifiers; schema text never becomes code."""

from __future__ import annotations

import keyword
import re
import unicodedata

_WORD = re.compile(r"[A-Za-z0-9]+")


def ascii_words(text: str) -> list[str]:
    """Words of `text` after folding accents, splitting camelCase and any punctuation."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", folded)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return _WORD.findall(spaced)


def pascal(text: str, fallback: str = "Unnamed") -> str:
    words = ascii_words(text)
    name = "".join(word[:1].upper() + word[1:] for word in words) or fallback
    if name[0].isdigit():
        name = "N" + name
    return name


def snake(text: str, fallback: str = "value") -> str:
    name = "_".join(word.lower() for word in ascii_words(text)) or fallback
    if name[0].isdigit():
        name = "n_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name += "_"
    return name


class NameRegistry:
    """Hands out identifiers that never repeat; the first claimant keeps the plain name."""

    def __init__(self, reserved: frozenset[str] = frozenset()) -> None:
        self._taken: set[str] = set(reserved)

    def claim(self, wanted: str) -> str:
        name, suffix = wanted, 2
        while name in self._taken:
            name = f"{wanted}{suffix}"
            suffix += 1
        self._taken.add(name)
        return name
