"""Load stage: read YAML or JSON files into plain data, keeping a way back to line:col for every node."""

from __future__ import annotations

import json
import math
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.positions import (
    KEY,
    Pointer,
    json_duplicate_keys,
    json_locator,
    json_syntax_problem,
    pointer_text,
    yaml_duplicate_keys,
    yaml_positions,
)
from toolgen.source.yamlcore import AliasError, compose_and_construct, json_int, unprintable


@dataclass(eq=False)
class Document:
    """One parsed input file; `display` is the path as users see it (relative to the project root)."""

    display: str
    path: Path
    text: str
    data: Any
    is_json: bool
    node: yaml.Node | None = field(default=None, repr=False)
    _positions: Callable[[Pointer], tuple[int, int] | None] | None = field(default=None, repr=False)

    def locate(self, pointer: Pointer) -> tuple[int, int]:
        """Line:col of the node at `pointer`, or of its nearest existing ancestor."""
        if self._positions is None:
            self._positions = json_locator(self.text) if self.is_json else yaml_positions(self.node).get
        for length in range(len(pointer), -1, -1):
            found = self._positions(pointer[:length])
            if found is not None:
                return found
        return (1, 1)

    def key_diagnostic(
        self, pointer: Pointer, rule: str, message: str, severity: Severity = Severity.ERROR
    ) -> Diagnostic:
        """A diagnostic placed at the mapping key that ends `pointer` rather than at its value."""
        line, col = self.locate((*pointer, KEY))
        return Diagnostic(self.display, line, col, severity, rule, message, pointer_text(pointer))

    def diagnostic(self, pointer: Pointer, rule: str, message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
        line, col = self.locate(pointer)
        return Diagnostic(self.display, line, col, severity, rule, message, pointer_text(pointer))


class LoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey
    return result


class _Constant:
    """Where the JSON text held `NaN`, `Infinity` or `-Infinity`: kept as a value so that the check after parsing
    finds it by its place (the parser's hook for them is not told where they are)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _duplicate_key(display: str, pointer: Pointer, line: int, col: int) -> LoadError:
    message = f"key {pointer[-1]!r} appears twice in the same mapping; loaders keep only the last"
    return LoadError(Diagnostic(display, line, col, Severity.ERROR, "duplicate-key", message, pointer_text(pointer)))


def _parse_json(text: str, path: Path, display: str) -> Document:
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_Constant, parse_int=json_int)
    except json.JSONDecodeError as error:
        message = f"invalid JSON: {json_syntax_problem(error)}"
        raise LoadError(Diagnostic(display, error.lineno, error.colno, Severity.ERROR, "syntax", message)) from None
    except ValueError as error:
        raise LoadError(Diagnostic(display, 1, 1, Severity.ERROR, "syntax", f"invalid JSON: {error}")) from None
    except _DuplicateKey:
        pointer, line, col = next(json_duplicate_keys(text))
        raise _duplicate_key(display, pointer, line, col) from None
    except RecursionError:
        raise _too_deep_to_parse(display) from None
    return _checked(Document(display, path, text, data, True))


def _parse_yaml(text: str, path: Path, display: str) -> Document:
    try:
        node, data = compose_and_construct(text)
    except AliasError as error:
        raise LoadError(Diagnostic(display, error.line, error.col, Severity.ERROR, "syntax", str(error))) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = error.problem or error.context or "cannot parse"
        raise LoadError(Diagnostic(display, line, col, Severity.ERROR, "syntax", f"invalid YAML: {problem}")) from None
    except yaml.YAMLError as error:
        raise _yaml_refusal(display, text, error) from None
    except RecursionError:
        raise _too_deep_to_parse(display) from None
    document = Document(display, path, text, data, False, node)
    try:
        for pointer, line, col in yaml_duplicate_keys(node):
            raise _duplicate_key(display, pointer, line, col)
    except RecursionError:
        raise _too_deep_to_parse(display) from None
    return _checked(document)


def _yaml_refusal(display: str, text: str, error: yaml.YAMLError) -> LoadError:
    """An error without a mark: the reader's refusal of a character, which it places by an offset into its own
    buffer (in bytes, under libyaml); the character is found again in the text and named."""
    found = unprintable(text)
    if found is None:
        return LoadError(Diagnostic(display, 1, 1, Severity.ERROR, "syntax", f"invalid YAML: {error}"))
    line, col, char = found
    kind = "control character" if unicodedata.category(char) == "Cc" else "character"
    message = (
        f"invalid YAML: {kind} U+{ord(char):04X} cannot be written in a YAML file; "
        f"write it as \\u{ord(char):04X} inside a double-quoted string"
    )
    return LoadError(Diagnostic(display, line, col, Severity.ERROR, "syntax", message))


def parse_text(text: str, path: Path, display: str) -> Document:
    """Parse `text`: JSON for a .json file, YAML (of which JSON is a subset) otherwise."""
    if path.suffix.lower() == ".json":
        if not text.strip():
            raise LoadError(Diagnostic(display, 1, 1, Severity.ERROR, "syntax", "the file is empty: expected JSON"))
        return _parse_json(text, path, display)
    if text.lstrip()[:1] in ("{", "["):
        try:
            return _parse_json(text, path, display)
        except LoadError:
            pass  # YAML flow style also starts with { or [
    return _parse_yaml(text, path, display)


# The deepest nesting of mappings and lists a document may have. A schema level is two of them (`properties`,
# then the property), so this allows 32 nested object levels: well inside what the generated models and
# validators follow, and far past any real tool definition. Deeper input is refused where it gets too deep.
MAX_DEPTH = 64
_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels of mappings and lists; flatten it with $defs and $ref"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_TOO_LARGE = (
    "number too large: past about ±1.8e308 it reads as infinity, which JSON cannot hold; write a smaller number"
)


def _value_problem(value: Any, origin: str) -> str | None:
    """Why a scalar cannot stand in the generated code or on the wire as JSON, or None."""
    if isinstance(value, _Constant):
        return f"invalid JSON: {value.name} is not a JSON number"
    if isinstance(value, float) and math.isnan(value):
        return f"{origin} value nan has no JSON equivalent; quote it"
    if isinstance(value, float) and math.isinf(value):
        return _TOO_LARGE
    # An integer the float range cannot hold: JSON readers that read numbers as doubles, and the bounds of the
    # generated models, take it as infinity.
    if isinstance(value, int) and not -sys.float_info.max <= value <= sys.float_info.max:
        return _TOO_LARGE
    if isinstance(value, str):
        found = _LONE_SURROGATE.search(value)
        if found:
            return (
                f"string holds a lone surrogate (U+{ord(found.group()):04X} at character {found.start()}), "
                "which is not Unicode text and cannot be encoded as UTF-8; write the whole character"
            )
        return None
    if value is None or isinstance(value, (int, bool, float)):
        return None
    return f"{origin} value {value!r} has no JSON equivalent; quote it"


def first_unfit_value(data: Any, origin: str = "JSON") -> tuple[Pointer, str, str] | None:
    """(pointer, rule, problem) of the first value JSON or the generated code cannot hold, in document order.

    Walked without recursion, so a document nested far too deeply is reported rather than crashing the walk.
    """
    pending: list[tuple[Any, Pointer]] = [(data, ())]
    while pending:
        value, pointer = pending.pop()
        if isinstance(value, (dict, list)):
            if len(pointer) >= MAX_DEPTH:
                return pointer, "too-deep", _TOO_DEEP
            if isinstance(value, dict):
                items = list(value.items())
                for key, _ in items:
                    if not isinstance(key, str):
                        return (*pointer, str(key)), "syntax", f"key {key!r} is not a string; quote it"
                    key_problem = _value_problem(key, origin)
                    if key_problem:
                        return (*pointer, key, KEY), "syntax", "key: " + key_problem
                children = [(item, (*pointer, key)) for key, item in items]
            else:
                children = [(item, (*pointer, str(index))) for index, item in enumerate(value)]
            pending.extend(reversed(children))
            continue
        problem = _value_problem(value, origin)
        if problem:
            return pointer, "syntax", problem
    return None


def _checked(document: Document) -> Document:
    found = first_unfit_value(document.data, "JSON" if document.is_json else "YAML")
    if found is not None:
        pointer, rule, problem = found
        if pointer[-1:] == (KEY,):
            raise LoadError(document.key_diagnostic(pointer[:-1], rule, problem))
        raise LoadError(document.diagnostic(pointer, rule, problem))
    return document


def _too_deep_to_parse(display: str) -> LoadError:
    return LoadError(Diagnostic(display, 1, 1, Severity.ERROR, "too-deep", _TOO_DEEP))


def load_file(path: Path, display: str) -> Document:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LoadError(Diagnostic(display, 1, 1, Severity.ERROR, "file-missing", "file not found")) from None
    except OSError as error:
        raise LoadError(
            Diagnostic(display, 1, 1, Severity.ERROR, "file-unreadable", error.strerror or str(error))
        ) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # The place of the first byte that is no UTF-8 (utf-8-sig counts from after a byte order mark).
        before = bytes(error.object[: error.start])
        line, col = before.count(b"\n") + 1, error.start - before.rfind(b"\n")
        byte = bytes(error.object[error.start : error.start + 1]).hex()
        message = f"not UTF-8 text: byte 0x{byte} starts no UTF-8 character (save the file as UTF-8)"
        raise LoadError(Diagnostic(display, line, col, Severity.ERROR, "syntax", message)) from None
    return parse_text(text, path, display)
