"""Turn names from schemas into safe, unique Python identifiers; schema text never becomes code."""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Sequence

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


def written_as_snake(name: str) -> bool:
    """Whether a tool's name is spelled as the snake_case identifier it folds to (`get_weather`, not `getWeather`)."""
    return bool(ascii_words(name)) and snake(name) == name


def claim_in_turn(registry: NameRegistry, wanted: Sequence[str], first: Sequence[bool]) -> list[str]:
    """`registry.claim` of each wanted name, returned in their order, those marked `first` claiming before the rest.

    Names fold onto one identifier (`get-weather`, `getWeather`, `GetWeather`, `get_weather`); the one spelled
    as that identifier keeps it, so that adding a tool whose name sorts before it never takes its name away.
    """
    claimed = [""] * len(wanted)
    for index in sorted(range(len(wanted)), key=lambda at: not first[at]):
        claimed[index] = registry.claim(wanted[index])
    return claimed
