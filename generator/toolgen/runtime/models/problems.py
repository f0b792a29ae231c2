# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Validation problems: pydantic's errors folded into one sentence per place, each with its JSON pointer.

The sentences are sentences.py's, the shape jsonschema's errors and toolgen's own checks are said in too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from ..schema.sentences import (
    either,
    expected,
    pydantic_expected,
    pydantic_sentence,
    shown,
)


@dataclass(frozen=True)
class ValidationProblem:
    """One problem: where (a JSON pointer into the input) and what, in a plain sentence."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '(root)'}: {self.message}"


class ToolgenValidationError(ValueError):
    """Raised by every validator; `problems` lists each problem found, not only the first.

    A validator raises it with pydantic's errors still unfolded (`folding`, `deferred`): they become problems
    when `problems` is first read, so a caller that only needs to know the data is invalid pays nothing for
    the sentences. The data must not be changed before then: the pointers are read from it.
    """

    # Slots, not a __dict__: an error raised for every invalid message is made as cheaply as it can be.
    __slots__ = ("_problems", "_unfolded")

    def __init__(self, problems: Sequence[ValidationProblem]) -> None:
        self._problems: tuple[ValidationProblem, ...] | None = tuple(problems)
        self._unfolded: _Unfolded | None = None
        super().__init__()

    @classmethod
    def folding(
        cls,
        error: pydantic.ValidationError,
        data: Any,
        items: Sequence[Mapping[str, Any]] | None = None,
    ) -> ToolgenValidationError:
        """The error for pydantic's `error` on `data`, folded into problems when they are first read."""
        return cls.deferred(problems_from, (error, data, items))

    @classmethod
    def deferred(
        cls,
        make: Callable[..., Iterable[ValidationProblem]],
        arguments: tuple[Any, ...],
    ) -> ToolgenValidationError:
        """The error whose problems are `make(*arguments)`, called when they are first read."""
        # BaseException.__new__ gives the empty args ValueError.__init__ would: no second call for them.
        made: ToolgenValidationError = _new_exception(cls)
        made._problems = None
        made._unfolded = (make, arguments)
        return made

    @property
    def problems(self) -> tuple[ValidationProblem, ...]:
        if self._problems is None:
            assert self._unfolded is not None
            make, arguments = self._unfolded
            self._problems = tuple(make(*arguments))
            self._unfolded = None
        return self._problems

    @property
    def args(self) -> tuple[Any, ...]:  # type: ignore[override]
        # What ValueError(problems) had: code that reads or pickles args sees the problems.
        return (self.problems,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.problems!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        state = dict(
            self.__dict__
        )  # a subclass's own attributes (the slots are not in it)
        state["_problems"] = self.problems
        return (type(self), (self.problems,), state)

    def __str__(self) -> str:
        # Written when shown, not when raised: a validator that is caught and reported pays nothing for it.
        listing = "\n".join(f"  {p}" for p in self.problems)
        count = len(self.problems)
        return f"{count} validation problem{'s' if count != 1 else ''}:\n{listing}"


_new_exception = BaseException.__new__


_Unfolded = tuple["Callable[..., Iterable[ValidationProblem]]", tuple[Any, ...]]


def escape_pointer_part(part: object) -> str:
    """One JSON pointer reference token (RFC 6901): `~` and `/` escaped."""
    return str(part).replace("~", "~0").replace("/", "~1")


# Types JSON data holds that are never mappings: telling them apart by type() skips the slow ABC check.
_NOT_MAPPINGS = frozenset({list, tuple, str, int, float, bool, type(None)})


def _data_path(
    data: Any, loc: Sequence[int | str], kind: str
) -> tuple[list[str], list[tuple[int, str]]]:
    """Split a pydantic error location into the path through the data and the union branch labels it passed."""
    path: list[str] = []
    branches: list[tuple[int, str]] = []
    current = data
    for at, part in enumerate(loc):
        # type() first: dict and list are what JSON data holds, and the general checks cost more.
        kind_of = type(current)
        if kind_of is dict or (
            kind_of not in _NOT_MAPPINGS and isinstance(current, Mapping)
        ):
            if type(part) is str:
                if part in current and not _is_tag(current, part, loc, at):
                    current = current[part]
                    path.append(part)
                    continue
                if "_" in part:
                    key = _camel_key(part, current)
                    if key is not None:
                        current = current[key]
                        path.append(key)
                        continue
        elif (kind_of is list or kind_of is tuple) and type(part) is int:
            current = current[part] if 0 <= part < len(current) else None
            path.append(str(part))
            continue
        branches.append((len(path), part if type(part) is str else str(part)))
    if kind == "missing" and branches and branches[-1][0] == len(path):
        # The last part names the field that is not there: it belongs to the path, not to a branch.
        last = branches[-1][1]
        if last == str(loc[-1]):
            branches.pop()
            path.append(last)
    return path, branches


def _one_path(data: Any, loc: Sequence[int | str], kind: str) -> list[str]:
    """The path of _data_path(data, loc, kind), without the branch labels: all one error needs."""
    path: list[str] = []
    current = data
    # For a missing field the last part names the field that is not there: the path's end, whatever it is.
    ends_missing = kind == "missing" and len(loc) > 0
    for at, part in enumerate(loc[:-1] if ends_missing else loc):
        kind_of = type(current)
        if kind_of is dict or (
            kind_of not in _NOT_MAPPINGS and isinstance(current, Mapping)
        ):
            if type(part) is str:
                if part in current and not _is_tag(current, part, loc, at):
                    current = current[part]
                    path.append(part)
                    continue
                if "_" in part:
                    key = _camel_key(part, current)
                    if key is not None:
                        current = current[key]
                        path.append(key)
                        continue
        elif (kind_of is list or kind_of is tuple) and type(part) is int:
            current = current[part] if 0 <= part < len(current) else None
            path.append(str(part))
    if ends_missing:
        last = loc[-1]
        key = None
        if type(last) is str and "_" in last:
            kind_of = type(current)
            if (
                kind_of is dict
                or (kind_of not in _NOT_MAPPINGS and isinstance(current, Mapping))
            ) and last not in current:
                key = _camel_key(last, current)
        path.append(str(last) if key is None else key)
    return path


def _is_tag(
    current: Mapping[str, Any], part: str, loc: Sequence[int | str], at: int
) -> bool:
    """Whether `part`, a key of `current`, is in fact the tag pydantic put after a tagged union's input.

    A part whose tag is also one of its fields (`{"type": "text", "text": ...}`) gets a location such as
    `0, "text", "bogus"`: the tag, then the field. The tag is a value of the object; it is read as the tag
    only when the next part is a key of the object that the field's own value cannot follow.
    """
    if at + 1 >= len(loc):
        return False
    following = loc[at + 1]
    if type(following) is not str or following not in current:
        return False
    value = current[part]
    if isinstance(value, Mapping) and following in value:
        return False
    return any(type(v) is str and v == part for v in current.values())


def _camel_key(part: str, current: Mapping[str, Any]) -> str | None:
    if "_" not in part:
        return None
    if part.startswith("_") or part.endswith("_") or "__" in part:
        return None  # to_camel keeps these as they are; the key is the name itself
    # to_camel for the snake_case names the canonical models use, without its regular expressions.
    head, _, rest = part.partition("_")
    camel = head + rest.title().replace("_", "")
    return camel if camel in current else None


def bounded_sentence(text: str, limit: int = 300) -> str:
    """A sentence from a validator that may quote a whole value (jsonschema's do), cut to `limit`."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found"})

# The most pydantic errors folded into problems: a million bad items would keep a million problems (gigabytes)
# that no report shows; the first ten thousand say what is wrong.
MOST_PROBLEMS = 10_000


def problems_from(
    error: pydantic.ValidationError,
    data: Any,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> list[ValidationProblem]:
    """Pydantic's errors (`items`, when the caller has them already) as JSON-pointer problems: one per real
    problem, union branches folded; past MOST_PROBLEMS errors, the rest are counted, not listed."""
    items = error.errors(include_url=False) if items is None else items
    left_out = max(0, len(items) - MOST_PROBLEMS)
    if left_out:
        items = items[:MOST_PROBLEMS]
    count = len(items)
    if count == 1 and items[0]["type"] not in _TAG_ERRORS:
        # One error: whatever union branches it passed through, they are the ones that were tried.
        item = items[0]
        return [_problem(_one_path(data, item["loc"], item["type"]), item)]
    if (
        count == 2
        and items[0]["type"] not in _TAG_ERRORS
        and items[1]["type"] not in _TAG_ERRORS
    ):
        # Two errors, most often the two branches of a `str | list` value: folded without the general lists.
        first, second = items
        pair: list[Found] = [
            (*_data_path(data, first["loc"], first["type"]), first),
            (*_data_path(data, second["loc"], second["type"]), second),
        ]
        folded = _fold_pair(pair[0], pair[1])
        return [folded] if folded is not None else _sorted_unique(_folded(pair))
    found: list[tuple[list[str], list[tuple[int, str]], Mapping[str, Any]]] = []
    for item in items:
        kind = item["type"]
        path, branches = _data_path(data, item["loc"], kind)
        if kind in _TAG_ERRORS:
            key, tag = _tag_key(
                str(item.get("ctx", {}).get("discriminator", "")), data, path
            )
            tags = item.get("ctx", {}).get("expected_tags")
            if kind == "union_tag_invalid":
                text = f"expected one of {tags}, got {shown(tag)}"
            else:
                text = "expected a value (it tells which kind of object this is), got nothing"
            found.append(
                ([*path, key], [], {"type": "custom", "msg": text, "sentence": text})
            )
            continue
        found.append((path, branches, item))
    problems = _fold_unions(found)
    if left_out:
        note = f"has {left_out} more errors than the {MOST_PROBLEMS} listed; they are left out"
        problems.append(ValidationProblem("", note))
    return problems


def _tag_key(discriminator: str, data: Any, path: list[str]) -> tuple[str, Any]:
    """The property that tells a union apart, as the data spells it, and its value there (None when absent).

    pydantic names a field with an alias `'pet_type' | 'pet-type'`: the field's name, then the JSON name;
    the alias comes first here, as JSON data spells it.
    """
    inner = (
        discriminator[1:-1]
        if len(discriminator) > 1 and discriminator[0] == discriminator[-1] == "'"
        else ""
    )
    names = inner.split("' | '")[::-1] if inner else [discriminator]
    current = data
    for part in path:
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            current = current.get(part) if isinstance(current, dict) else None
    for name in names:
        if isinstance(current, dict) and name in current:
            return name, current[name]
    return names[0], None


Found = tuple[list[str], list[tuple[int, str]], Mapping[str, Any]]


def _fold_unions(found: Iterable[Found]) -> list[ValidationProblem]:
    """Keep the errors of the union branch that got furthest into the data; report a total miss once."""
    found = list(found)
    if len(found) == 2:
        pair = _fold_pair(found[0], found[1])
        if pair is not None:
            return [pair]
    return _sorted_unique(_folded(found))


def _sorted_unique(problems: list[ValidationProblem]) -> list[ValidationProblem]:
    if len(problems) == 1:
        return problems
    unique = {(p.pointer, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (p.pointer, p.message))


def _fold_pair(first: Found, second: Found) -> ValidationProblem | None:
    """What _folded makes of two errors from two branches of one union (the usual `str | list` miss), directly.

    None when the two do not part at one union with the same path up to it: _folded decides those.
    """
    path, branches, item = first
    other_path, other_branches, other_item = second
    for level, mark in enumerate(branches):
        if level >= len(other_branches):
            return None
        other = other_branches[level]
        if mark == other:
            continue
        at = mark[0]
        if other[0] != at or path[:at] != other_path[:at]:
            return None
        deepest = max(len(path), len(other_path))
        if deepest == at:
            # Both branches failed at this very value: one sentence naming each form it could have had.
            one, two = pydantic_expected(item), pydantic_expected(other_item)
            wanted = (
                one
                if one == two
                else f"{one} or {two}"
                if one < two
                else f"{two} or {one}"
            )
            return _made(_json_pointer(path[:at]), expected(wanted, item.get("input")))
        chosen = first if len(path) == deepest else second
        return _problem(chosen[0], chosen[2])
    return None


def _folded(found: list[Found], level: int = 0) -> list[ValidationProblem]:
    """Fold the union branches from the `level`-th one on (entries are shared, not copied, on the way down)."""
    while True:
        if len(found) == 1:
            # One error left: the branches it passed are the ones tried.
            return [_problem(found[0][0], found[0][2])]
        # Usually every error went through the same branch here (a discriminated union picks one): no grouping.
        path, branches, _ = found[0]
        if len(branches) <= level:
            break
        mark = branches[level]
        prefix = path[: mark[0]]
        for other_path, other_branches, _ in found:
            if (
                len(other_branches) <= level
                or other_branches[level] != mark
                or other_path[: mark[0]] != prefix
            ):
                break
        else:
            level += 1
            continue
        break
    problems: list[ValidationProblem] = []
    groups: dict[tuple[str, ...], list[Found]] = {}
    for entry in found:
        path, branches, item = entry
        if len(branches) > level:
            groups.setdefault(tuple(path[: branches[level][0]]), []).append(entry)
        else:
            problems.append(_problem(path, item))
    for prefix_key, members in groups.items():
        labels = {branches[level][1] for _, branches, _ in members}
        if len(labels) == 1:
            # One branch tried (one candidate left): its errors are the errors.
            problems.extend(_folded(members, level + 1))
            continue
        deepest = max(len(path) for path, _, _ in members)
        if deepest == len(prefix_key):
            # Every branch failed at this very value: one sentence naming each form it could have had.
            wanted = sorted({pydantic_expected(item) for _, _, item in members})
            value = members[0][2].get("input")
            problems.append(
                _made(_json_pointer(list(prefix_key)), expected(either(wanted), value))
            )
            continue
        chosen = next(
            branches[level][1] for path, branches, _ in members if len(path) == deepest
        )
        problems.extend(
            _folded([m for m in members if m[1][level][1] == chosen], level + 1)
        )
    return problems


def _problem(path: list[str], item: Mapping[str, Any]) -> ValidationProblem:
    sentence = str(item["sentence"]) if "sentence" in item else pydantic_sentence(item)
    problem: ValidationProblem = _new_object(
        ValidationProblem
    )  # as _made does, one call less
    fields = problem.__dict__
    fields["pointer"] = _json_pointer(path)
    fields["message"] = sentence
    return problem


def _made(pointer: str, message: str) -> ValidationProblem:
    """ValidationProblem(pointer, message), without the frozen dataclass's setattr per field."""
    problem: ValidationProblem = _new_object(ValidationProblem)
    fields = problem.__dict__
    fields["pointer"] = pointer
    fields["message"] = message
    return problem


_new_object = object.__new__


def _json_pointer(path: list[str]) -> str:
    if not path:
        return ""
    joined = "/".join(path)
    if "~" not in joined and joined.count("/") == len(path) - 1:
        return "/" + joined  # no part holds a `/` or `~`: nothing to escape
    return "".join("/" + escape_pointer_part(p) for p in path)
