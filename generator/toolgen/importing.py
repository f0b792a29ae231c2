"""`toolgen import`: tools from an MCP server or an exported tools list written as toolgen schema files.

Each tool becomes `<output>/<name>.yaml` holding a `tools:` list of one, so a team can go schema-first from a
server or a request it already has. What each format carries (the rest cannot come back; README, "Importing"):

    mcp        everything: name, title, description, inputSchema, outputSchema, annotations, and in _meta
               the meta, toolgen's returnDirect, requiresApproval, timeout, strict, and an outputSchema that
               is not an object (MCP's own field describes objects only)
    openai     name, description, parameters, strict (Chat Completions and Responses shapes)
    anthropic  name, description, input_schema
    gemini     name, description, parametersJsonSchema (or `parameters`), responseJsonSchema
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from toolgen.diagnostics import Diagnostic, Severity
from toolgen.errors import EnvironmentProblem, InvalidInputError, ToolgenError
from toolgen.load import Document, LoadError, load_file

FORMATS = ("openai", "anthropic", "gemini", "mcp")
# The order of a tool's keys in the files written, as toolgen's own schemas spell them.
_KEY_ORDER = (
    "name",
    "title",
    "description",
    "returnDirect",
    "requiresApproval",
    "timeout",
    "strict",
    "meta",
    "annotations",
    "inputSchema",
    "outputSchema",
)
_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9_.-]")
_LOCAL = "#/$defs/"
# Where the definitions several imported tools share go, beside the tools' files.
SHARED_FILE = "shared_defs.yaml"


class ImportProblem(ValueError):
    """A tools list that cannot be imported: what is wrong, and where (`pointer`, keys from the top)."""

    def __init__(self, message: str, pointer: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.pointer = pointer


class ServerUnusableError(ToolgenError):
    """`toolgen import mcp` could not start, reach or read the server; the message says which and why."""

    exit_code = InvalidInputError.exit_code


@dataclass(frozen=True)
class Imported:
    """What an import wrote: each file, and the tools in it."""

    files: tuple[Path, ...]
    tools: tuple[str, ...]
    source: str


def _entries(data: Any, key: str) -> tuple[list[Any], tuple[str | int, ...]]:
    """The list of tool entries, whether the file holds the list or an object (a request) with it at `key`."""
    if isinstance(data, Mapping) and isinstance(data.get(key), list):
        return list(data[key]), (key,)
    if isinstance(data, list):
        return data, ()
    raise ImportProblem(f"expected a list of tools, or an object with a `{key}` list")


def _object(value: Any, pointer: tuple[str | int, ...], what: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ImportProblem(f"{what} must be an object, not {type(value).__name__}", pointer)
    return dict(value)


def _named(entry: dict[str, Any], pointer: tuple[str | int, ...]) -> dict[str, Any]:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ImportProblem("a tool needs a non-empty string `name`", (*pointer, "name"))
    described = {"name": name}
    if isinstance(entry.get("description"), str):
        described["description"] = entry["description"]
    return described


def _tool_objects(data: Any) -> Iterator[tuple[dict[str, Any], tuple[str | int, ...]]]:
    """Each tool entry of a list (or of a request's `tools`) as an object, with where it is."""
    entries, prefix = _entries(data, "tools")
    for index, raw in enumerate(entries):
        yield _object(raw, (*prefix, index), "a tool"), (*prefix, index)


def _from_openai(data: Any) -> list[dict[str, Any]]:
    tools = []
    for entry, pointer in _tool_objects(data):
        if isinstance(entry.get("function"), Mapping):  # Chat Completions nests it; Responses does not
            entry, pointer = dict(entry["function"]), (*pointer, "function")
        tool = _named(entry, pointer)
        tool["inputSchema"] = _object(entry.get("parameters", {}), (*pointer, "parameters"), "parameters")
        if entry.get("strict") is True:
            tool["strict"] = True
        tools.append(tool)
    return tools


def _from_anthropic(data: Any) -> list[dict[str, Any]]:
    tools = []
    for entry, pointer in _tool_objects(data):
        tool = _named(entry, pointer)
        tool["inputSchema"] = _object(entry.get("input_schema"), (*pointer, "input_schema"), "input_schema")
        tools.append(tool)
    return tools


def _from_gemini(data: Any) -> list[dict[str, Any]]:
    declared: list[tuple[tuple[str | int, ...], Any]] = []
    for group, at in _tool_objects(data):
        key = next((k for k in ("functionDeclarations", "function_declarations") if k in group), None)
        if key is None:  # a bare list of declarations
            declared.append((at, group))
        elif isinstance(group[key], list):
            declared.extend(((*at, key, j), d) for j, d in enumerate(group[key]))
        else:
            raise ImportProblem(f"{key} must be a list", (*at, key))
    tools = []
    for pointer, raw in declared:
        entry = _object(raw, pointer, "a function declaration")
        tool = _named(entry, pointer)
        field = "parametersJsonSchema" if "parametersJsonSchema" in entry else "parameters"
        schema = entry.get(field, {"type": "object", "properties": {}})
        tool["inputSchema"] = _json_types(_object(schema, (*pointer, field), field))
        if entry.get("responseJsonSchema") is not None:
            output = entry["responseJsonSchema"]
            tool["outputSchema"] = _object(output, (*pointer, "responseJsonSchema"), "responseJsonSchema")
        tools.append(tool)
    return tools


def _json_types(schema: Any) -> Any:
    """Gemini's OpenAPI subset spells types in capitals (`OBJECT`); JSON Schema spells them in lower case."""
    if isinstance(schema, list):
        return [_json_types(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    return {
        key: value.lower() if key == "type" and isinstance(value, str) else _json_types(value)
        for key, value in schema.items()
    }


def _from_mcp(data: Any) -> list[dict[str, Any]]:
    from toolgen.runtime import MCPToolsError, definitions_from_mcp

    entries, prefix = _entries(data, "tools")
    try:
        return definitions_from_mcp(entries)
    except MCPToolsError as error:
        raise ImportProblem(str(error), (*prefix, *error.pointer)) from None


_READERS: Mapping[str, Callable[[Any], list[dict[str, Any]]]] = {
    "openai": _from_openai,
    "anthropic": _from_anthropic,
    "gemini": _from_gemini,
    "mcp": _from_mcp,
}


def definitions_from_file(path: Path, source_format: str, display: str | None = None) -> list[dict[str, Any]]:
    """The canonical tool definitions in an exported or recorded tools list (JSON or YAML) of `source_format`.

    Raises InvalidInputError naming the file, line and column of what cannot be imported."""
    shown = display or str(path)
    try:
        document = load_file(path, shown)
    except LoadError as error:
        raise InvalidInputError([error.diagnostic]) from None
    try:
        definitions = _READERS[source_format](document.data)
    except ImportProblem as problem:
        raise InvalidInputError([_placed(document, problem)]) from None
    if not definitions:
        raise InvalidInputError([Diagnostic(shown, 1, 1, Severity.ERROR, "import", "the file lists no tools")])
    return definitions


def _placed(document: Document, problem: ImportProblem) -> Diagnostic:
    return document.diagnostic(tuple(str(part) for part in problem.pointer), "import", str(problem))


def definitions_from_server(target: str | Sequence[str], *, timeout: float = 60.0) -> list[dict[str, Any]]:
    """The canonical tool definitions a live MCP server lists: `target` a URL or a command (argv)."""
    from toolgen.runtime import MCPConnectionError, MCPToolsError, connect_mcp

    # A command runs as it would from the shell: with this environment, not the SDK's trimmed default.
    env = None if isinstance(target, str) else dict(os.environ)
    try:
        with connect_mcp(target, timeout=timeout, env=env) as server:
            return list(server.definitions)
    except ImportError as error:
        raise EnvironmentProblem(str(error)) from None
    except (MCPConnectionError, MCPToolsError) as error:
        raise ServerUnusableError(str(error)) from None


def _file_name(name: str, taken: set[str]) -> str:
    stem = _UNSAFE_FILE_CHARACTERS.sub("_", name).strip(".") or "tool"
    candidate, number = stem, 2
    while candidate.lower() in taken:  # names that differ only in case or unsafe characters get a number
        candidate, number = f"{stem}_{number}", number + 1
    taken.add(candidate.lower())
    return f"{candidate}.yaml"


def schema_text(definition: Mapping[str, Any], source: str) -> str:
    """One tool as a toolgen schema file: a header naming where it came from, then `tools:` with it."""
    ordered = {key: definition[key] for key in _KEY_ORDER if key in definition}
    body = yaml.safe_dump({"tools": [ordered]}, sort_keys=False, allow_unicode=True, width=100)
    return f"# Imported by `toolgen import` from {source}; edit freely, it is yours now.\n{body}"


def _local_refs(value: Any) -> set[str]:
    """The `#/$defs/NAME` names a schema refers to, anywhere inside it."""
    if isinstance(value, list):
        return set().union(*(_local_refs(item) for item in value)) if value else set()
    if not isinstance(value, Mapping):
        return set()
    found = set().union(*(_local_refs(item) for item in value.values())) if value else set()
    ref = value.get("$ref")
    if isinstance(ref, str) and ref.startswith(_LOCAL):
        found.add(ref[len(_LOCAL) :])
    return found


def _rewired(value: Any, shared: Mapping[str, Any], target: str) -> Any:
    if isinstance(value, list):
        return [_rewired(item, shared, target) for item in value]
    if not isinstance(value, Mapping):
        return value
    out = {key: _rewired(item, shared, target) for key, item in value.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_LOCAL) and ref[len(_LOCAL) :] in shared:
        out["$ref"] = f"{target}{ref}"
    return out


def share_definitions(definitions: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The `$defs` several tools' schemas carry the same (an export bundles a shared definition into each
    schema) moved to one document, and those tools' refs pointed at it: a build then sees one definition,
    not look-alikes it must name apart."""
    seen: dict[str, list[Any]] = {}
    for definition in definitions:
        for field in ("inputSchema", "outputSchema"):
            defs = definition.get(field, {}).get("$defs") if isinstance(definition.get(field), Mapping) else None
            for name, value in (defs or {}).items():
                seen.setdefault(name, []).append(value)
    shared = {n: v[0] for n, v in seen.items() if len(v) > 1 and all(x == v[0] for x in v)}
    # A definition referring to one that is not shared cannot move: its ref would point nowhere.
    while unmovable := {n for n, v in shared.items() if not _local_refs(v) <= set(shared)}:
        shared = {n: v for n, v in shared.items() if n not in unmovable}
    if not shared:
        return [dict(d) for d in definitions], {}
    moved = []
    for definition in definitions:
        out = dict(definition)
        for field in ("inputSchema", "outputSchema"):
            schema = out.get(field)
            if not isinstance(schema, Mapping) or not isinstance(schema.get("$defs"), Mapping):
                continue
            kept = {n: v for n, v in schema["$defs"].items() if n not in shared}
            rest = {k: v for k, v in schema.items() if k != "$defs"}
            out[field] = _rewired({**rest, **({"$defs": kept} if kept else {})}, shared, SHARED_FILE)
        moved.append(out)
    return moved, shared


def write_schemas(
    definitions: Sequence[Mapping[str, Any]], output: Path, source: str, *, force: bool = False
) -> Imported:
    """Write one schema file per tool into `output` (and the definitions they share into SHARED_FILE);
    a file there already is kept unless `force`. Nothing is written when any file would be refused."""
    definitions, shared = share_definitions(definitions)
    taken: set[str] = {SHARED_FILE.removesuffix(".yaml").lower()}
    planned = [(output / _file_name(str(d["name"]), taken), schema_text(d, source)) for d in definitions]
    if shared:
        header = f"# Imported by `toolgen import` from {source}: definitions its tools share.\n"
        body = yaml.safe_dump({"$defs": shared}, sort_keys=False, allow_unicode=True, width=100)
        planned.append((output / SHARED_FILE, header + body))
    existing = [path for path, text in planned if path.exists() and path.read_text(encoding="utf-8") != text]
    if existing and not force:
        raise InvalidInputError(
            [
                Diagnostic(str(path), 1, 1, Severity.ERROR, "import", "exists already; pass --force to replace it")
                for path in existing
            ]
        )
    try:
        output.mkdir(parents=True, exist_ok=True)
        for path, text in planned:
            path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise EnvironmentProblem(f"cannot write the schemas into {output}: {error.strerror or error}") from None
    return Imported(tuple(path for path, _ in planned), tuple(str(d["name"]) for d in definitions), source)


def import_tools(
    project: Path,
    source: str | Sequence[str],
    source_format: str | None,
    *,
    output: Path = Path("schemas/tools"),
    timeout: float = 60.0,
    force: bool = False,
) -> Imported:
    """`toolgen import`: the tools of a file (`source_format` given; `source` relative to `project`) or of a
    live MCP server (`source` a URL or a command), written as schema files into `project / output`."""
    if source_format is None:
        definitions = definitions_from_server(source, timeout=timeout)
        label = source if isinstance(source, str) else " ".join(source)
    else:
        label = str(source)
        definitions = definitions_from_file(project / label, source_format, display=label)
    return write_schemas(definitions, project / output, label, force=force)
