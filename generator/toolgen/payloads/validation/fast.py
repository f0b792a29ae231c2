"""Records the SDK's models would accept, told apart without building the models: plain validators kept on disk.

Importing the generated package and building the models a record needs costs more than the rest of a small
`toolgen validate` run. The first run builds them as always and keeps each one's pydantic-core schema as plain
data (plain_schemas.py) in the project's cache, under a key of everything the answer depends on: every file of
the package (path, size and modification time, as Python's bytecode cache does), toolgen's own source hash and
the pydantic and pydantic-core versions. A later run validates each record with those plain validators first:
a record they accept, whose tool calls' arguments they accept too (and, for `messages`, whose results answer
their calls), is valid, with nothing to report. Anything else, or anything the cache does not hold, is checked
with the models exactly as before, so every finding is the models' own; the plain validators only ever say yes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic_core

from toolgen.core.kinds import KINDS
from toolgen.runtime import JSONTextError, check_pairing, parse_json

# Changes whenever what the cache holds, or how it is read, changes.
CACHE_FORMAT = 1
SNAKE_KEYS = (("toolCalls", "tool_calls"), ("toolCallId", "tool_call_id"))


def tool_calls(kind: str, data: Any) -> Iterator[tuple[str, Any]]:
    """(pointer, tool call) for every tool call in a payload of `kind`."""
    if kind == "tool-call":
        yield "", data
        return
    messages = data if kind == "messages" else [data] if kind == "message" else []
    prefix = "/{}" if kind == "messages" else ""
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        calls = message.get("tool_calls", message.get("toolCalls")) if isinstance(message, dict) else None
        key = "tool_calls" if isinstance(message, dict) and "tool_calls" in message else "toolCalls"
        for number, call in enumerate(calls if isinstance(calls, list) else []):
            yield f"{prefix.format(index)}/{key}/{number}", call


def snake_messages(messages: list[Any]) -> list[Any]:
    """Messages with camelCase call keys renamed, as the pairing check reads them."""
    plain = []
    for message in messages:
        renamed = dict(message)
        for camel, snake in SNAKE_KEYS:
            if camel in renamed and snake not in renamed:
                renamed[snake] = renamed.pop(camel)
        plain.append(renamed)
    return plain


class PlainCheck:
    """The plain validators of one build of one package, read from and added to the project's cache."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._validators: dict[str, pydantic_core.SchemaValidator | None] = {}
        self._missing: set[str] = set()
        self._runtime_is_ours: bool | None = None

    @classmethod
    def for_package(cls, cache_dir: Path, output_dir: Path, package: str) -> PlainCheck | None:
        """The cache of this very package as it is on disk, or None when its files cannot be listed."""
        key = _fingerprint(output_dir / package)
        return None if key is None else cls(cache_dir / "validate" / key)

    def accepts(self, kind: str, text: str) -> bool:
        """True only when the models would find nothing wrong with this record of `kind`."""
        try:
            return self._accepts(kind, text)
        except Exception:  # noqa: BLE001 - any doubt is the models' to settle, with their own findings
            return False

    def _accepts(self, kind: str, text: str) -> bool:
        if kind not in KINDS:
            return False
        try:
            data = parse_json(text, max_chars=None)
        except JSONTextError:
            return False
        if type(data) is not (list if kind == "messages" else dict):
            return False
        if not self._valid(f"kind {kind}", data):
            return False
        for _, call in tool_calls(kind, data):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                return False
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                return False
            try:
                # Read as dispatch and the models read them: blank text is a call without arguments.
                value = parse_json(arguments if arguments.strip() else "{}")
            except JSONTextError:
                return False
            if not self._valid(f"tool {function['name']}", value):
                return False
        return not isinstance(data, list) or not check_pairing(snake_messages(data))

    def _valid(self, target: str, value: Any) -> bool:
        validator = self._validator(target)
        if validator is None:
            return False
        try:
            validator.validate_python(value, strict=True)
        except pydantic_core.ValidationError:
            return False
        return True

    def _validator(self, target: str) -> pydantic_core.SchemaValidator | None:
        if target in self._validators:
            return self._validators[target]
        try:
            stored = json.loads(self._file(target).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._missing.add(target)
            return None
        schema = stored.get("schema") if isinstance(stored, dict) else None
        validator = pydantic_core.SchemaValidator(json.loads(schema)) if isinstance(schema, str) else None
        self._validators[target] = validator
        return validator

    def learn(self, sdk: ModuleType) -> None:
        """Keep the plain form of every target the records so far needed and the cache did not hold."""
        missing, self._missing = self._missing, set()
        if not missing:
            return
        if self._runtime_is_ours is None:
            self._runtime_is_ours = _same_runtime(sdk)
        if not self._runtime_is_ours:
            return
        from toolgen.payloads.plain_schemas import plain_schema

        for target in sorted(missing):
            try:
                core = _core_schema(sdk, target)
            except Exception:  # noqa: BLE001 - the cache is an aid: a model it cannot read is checked as before
                continue
            if core is False:
                continue  # not this package's to know (a tool the records name and the package has not)
            self._write(target, {"schema": None if core is None else plain_schema(core)})

    def _file(self, target: str) -> Path:
        return self.folder / f"{hashlib.sha256(target.encode()).hexdigest()[:32]}.json"

    def _write(self, target: str, content: dict[str, Any]) -> None:
        try:
            if not self.folder.is_dir():
                _prune(self.folder.parent)
                self.folder.mkdir(parents=True, exist_ok=True)
            path = self._file(target)
            staged = path.with_name(f".{path.name}.{os.getpid()}")
            staged.write_text(json.dumps({"target": target, **content}), encoding="utf-8")
            os.replace(staged, path)
        except OSError:
            pass  # a cache that cannot be written (a read-only checkout) only means the next run checks again


def _fingerprint(package_dir: Path) -> str | None:
    """Changes whenever a file of the package, toolgen, pydantic or pydantic-core does."""
    from toolgen.project.manifest import source_digest

    hasher = hashlib.sha256(f"{CACHE_FORMAT}\0{sys.version}\0{pydantic_core.__version__}\0".encode())
    hasher.update(f"{_pydantic_version()}\0{source_digest()}\0".encode())
    try:
        for name, stat in sorted(_files(package_dir, "")):
            hasher.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return hasher.hexdigest()[:32]


def _files(folder: Path, prefix: str) -> Iterator[tuple[str, os.stat_result]]:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    yield from _files(Path(entry.path), f"{prefix}{entry.name}/")
            else:
                yield f"{prefix}{entry.name}", entry.stat()


def _pydantic_version() -> str:
    from pydantic.version import VERSION

    return VERSION


def _prune(validate_dir: Path) -> None:
    """Caches of other builds of the package: only the newest is read again."""
    import shutil  # only when a new build's cache starts

    if validate_dir.is_dir():
        for old in validate_dir.iterdir():
            shutil.rmtree(old, ignore_errors=True)


def _same_runtime(sdk: ModuleType) -> bool:
    """Each runtime module the package carries is byte for byte toolgen's (a package may leave some wires or the
    demo out): the JSON reading and the pairing used here are then the package's own."""
    import toolgen.runtime

    ours = os.path.dirname(toolgen.runtime.__file__)  # what the build copies (targets/package.py's RUNTIME_DIR)
    copy = os.path.join(os.path.dirname(str(sdk.__file__)), "_runtime")
    try:
        theirs = {name for name, _ in _files(Path(copy), "") if name.endswith(".py")}
        return theirs >= _USED and all(_same_bytes(ours, copy, name) for name in theirs)
    except OSError:
        return False


# The runtime modules the fast path runs in toolgen's copy, instead of the package's.
_USED = frozenset({"models/jsontext.py", "wires/pairing.py"})


def _same_bytes(ours: str, theirs: str, name: str) -> bool:
    with open(os.path.join(ours, name), "rb") as mine, open(os.path.join(theirs, name), "rb") as other:
        return mine.read() == other.read()


def _core_schema(sdk: ModuleType, target: str) -> Any:
    """The pydantic-core schema of a target (`kind K` or `tool T`); None when it has none to keep, False when
    the package does not know it."""
    what, _, name = target.partition(" ")
    if what == "tool":
        spec = sdk.TOOLS.get(name)
        if spec is None:
            return False
        if spec.check_input:
            return None  # the models do not decide these arguments alone: a JSON Schema check runs too
        model = spec.args_model
    elif what == "kind" and name in KINDS:
        model = _checked_target(getattr(sdk, KINDS[name]))
        if model is None:
            return None
    else:
        return False
    schema = _schema_of(model)
    return schema if isinstance(schema, dict) else None


def _checked_target(validator: Any) -> Any:
    """The model or adapter a generated `validate_<kind>` function hands to `check`."""
    code = getattr(validator, "__code__", None)
    scope = getattr(validator, "__globals__", {})
    import pydantic

    found = [
        scope[name]
        for name in getattr(code, "co_names", ())
        if isinstance(scope.get(name), pydantic.TypeAdapter)
        or (isinstance(scope.get(name), type) and issubclass(scope[name], pydantic.BaseModel))
    ]
    return found[0] if len(found) == 1 else None


def _schema_of(model: Any) -> Any:
    import pydantic

    if isinstance(model, pydantic.TypeAdapter):
        return model.core_schema
    schema = model.__pydantic_core_schema__
    if not isinstance(schema, dict):
        model.model_rebuild()
        schema = model.__pydantic_core_schema__
    return schema
