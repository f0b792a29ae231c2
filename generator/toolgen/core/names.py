"""Turn names from schemas into safe, unique Python identifiers; schema text never becomes code."""

from __future__ import annotations

import functools
import keyword
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

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


def tool_attributes(
    names: Sequence[str], reserved: frozenset[str] = frozenset(), registry: NameRegistry | None = None
) -> list[str]:
    """The identifier of each tool (its registry attribute, its models' module), given the tools in the package's
    order: its name in snake_case, numbered past `reserved` and past a tool spelled as that identifier."""
    registry = NameRegistry(reserved) if registry is None else registry
    wanted = [snake(name, fallback="tool") for name in names]
    return claim_in_turn(registry, wanted, [written_as_snake(name) for name in names])


class PropertyAttributes(NamedTuple):
    """The attributes of one object's properties: each name's own (`plain`), and the one it gets (`given`)."""

    plain: dict[str, str]
    given: dict[str, str]


# Letters and digits of a name, in lower case, without the `field` the generator puts before a name it cannot use
# as it is (`1x` is `field_1x`): names whose attributes are alike are alike here.
_NOT_ALNUM = re.compile(r"[^0-9a-z]")
_FIELD_PREFIX = re.compile(r"^(?:field)+")


def _fold(name: str) -> str:
    return _FIELD_PREFIX.sub("", _NOT_ALNUM.sub("", name.lower()))


@functools.cache
def _field_names() -> Any:
    """datamodel-code-generator's namer of pydantic fields, as the models target's generate() call sets it up."""
    from datamodel_code_generator import PythonVersion
    from datamodel_code_generator.model.field_name import PydanticFieldNameResolver

    return PydanticFieldNameResolver(snake_case_field=True, target_python_version=PythonVersion.PY_310)


def property_attributes(names: Sequence[str], fixed: Mapping[str, str] | None = None) -> PropertyAttributes | None:
    """The attributes of the properties of one object (`names` in its order) when two would make the same one
    (`a-b` and `a_b` both make `a_b`), else None.

    A property's own attribute is its name as datamodel-code-generator makes it (snake_case, `class_`,
    `field_1x`); `fixed` gives it for names decided elsewhere (those outside ASCII). Left to itself, the generator
    numbers the second of two properties that make one attribute (`a_b_1`), in the order they are written; here a
    property spelled as its attribute keeps it wherever it stands, and the others are numbered in order.
    """
    folds = [_fold(name) for name in names]
    if len(set(folds)) == len(folds):  # the usual case, told without the generator
        return None
    fixed = fixed or {}
    namer = _field_names()
    plain = {name: fixed[name] if name in fixed else str(namer.get_valid_name(name)) for name in names}
    if len(set(plain.values())) == len(plain):
        return None
    taken = {name for name in names if plain[name] == name}
    given = {name: name for name in taken}
    for name in names:
        if name not in given:
            attribute, number = plain[name], 1
            while attribute in taken:
                attribute, number = f"{plain[name]}_{number}", number + 1
            taken.add(attribute)
            given[name] = attribute
    return PropertyAttributes(plain, {name: given[name] for name in names})
