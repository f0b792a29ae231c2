"""`toolgen import`: tools from an MCP server or an exported tools list written as toolgen schema files.

Each tool becomes `<output>/<name>.yaml` holding a `tools:` list of one, so a team can go schema-first from a
server or a request it already has; from a live server, `<output>/mcp-lock.json` pins each tool as it was served
(mcp_pins.py), for connections and `import mcp --check` to compare the server with later.

What each format carries (the rest cannot come back; README, "Importing"):

    mcp        everything: name, title, description, inputSchema, outputSchema, annotations, and in _meta
               the meta, toolgen's returnDirect, requiresApproval, timeout, strict, describeMeta, and an
               outputSchema that is not an object (MCP's own field describes objects only)
    openai     name, description, parameters, strict (Chat Completions and Responses shapes, legacy functions)
    anthropic  name, description, input_schema
    gemini     name, description, parametersJsonSchema (or `parameters`), responseJsonSchema (or `response`), in
               proto3 JSON: lowerCamel or snake_case names, enum types by name or number (as the request decoder)
    bedrock    name, description, inputSchema.json (Converse `toolConfig.tools`, or a whole request)

The file's shape is checked first (import_shapes.py): another format's list is refused by name, a provider's own
tools (web search, code execution) are skipped and fields no definition holds are dropped, each with a note.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import EnvironmentProblem, InvalidInputError, ToolgenError
from toolgen.importing.shapes import ImportProblem, Pointer, check_entries, entries, looks_like, own_tool_note, where
from toolgen.project.mcp_pins import ServerUnreachableError, planned_lock, server_label
from toolgen.source.load import Document, LoadError, load_file

FORMATS = ("openai", "anthropic", "gemini", "bedrock", "mcp")
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
    "describeMeta",
    "annotations",
    "inputSchema",
    "outputSchema",
)
_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9_.-]")
_LOCAL = "#/$defs/"
# Where the definitions several imported tools share go, beside the tools' files.
SHARED_FILE = "shared_defs.yaml"
# What a function with no parameters takes (OpenAI: "omitting parameters defines an empty parameter list").
_NO_PARAMETERS = MappingProxyType({"type": "object", "properties": {}})


class ServerUnusableError(ToolgenError):
    """`toolgen import mcp` reached a server whose tools list toolgen cannot use; the message says which and why.
    (A server it could not start or reach is the environment's problem: ServerUnreachableError, exit 4.)"""

    exit_code = InvalidInputError.exit_code


@dataclass(frozen=True)
class Imported:
    """What an import wrote: each file, and the tools in it; `notes` name what the source had that no tool holds."""

    files: tuple[Path, ...]
    tools: tuple[str, ...]
    source: str
    notes: tuple[str, ...] = ()


Entries = list[tuple[Any, Pointer]]
Reader = Callable[[Entries, list[str]], list[dict[str, Any]]]


def _object(value: Any, pointer: Pointer, what: str) -> dict[str, Any]:
    if value is None:
        raise ImportProblem(f"{what} is missing (an object)", pointer)
    if not isinstance(value, Mapping):
        raise ImportProblem(f"{what} must be an object, not {type(value).__name__}", pointer)
    return dict(value)


def _named(entry: dict[str, Any], pointer: Pointer) -> dict[str, Any]:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ImportProblem("a tool needs a non-empty string `name`", (*pointer, "name"))
    described = {"name": name}
    if isinstance(entry.get("description"), str):
        described["description"] = entry["description"]
    return described


def _functions(found: Entries, notes: list[str]) -> Iterator[tuple[dict[str, Any], Pointer]]:
    """Each entry that is a function, as an object with where it is; a provider's own tool is noted and skipped."""
    for raw, pointer in found:
        entry = _object(raw, pointer, "a tool")
        _, evidence, own = looks_like(entry)
        if own:
            notes.append(own_tool_note(entry, pointer, evidence))
            continue
        yield entry, pointer


def _extra_keys(entry: Mapping[str, Any], pointer: Pointer, known: frozenset[str], notes: list[str]) -> None:
    """A note for each field of an entry that no field of toolgen's tool definition holds."""
    name = entry.get("name")
    called = f" ({name!r})" if isinstance(name, str) else ""
    notes.extend(
        f"{where((*pointer, key))}{called}: not a field of toolgen's tool definition; not imported"
        for key in entry
        if key not in known
    )


_OPENAI_KEYS = frozenset({"type", "name", "description", "parameters", "strict"})


def _from_openai(found: Entries, notes: list[str]) -> list[dict[str, Any]]:
    tools = []
    for entry, pointer in _functions(found, notes):
        if isinstance(entry.get("function"), Mapping):  # Chat Completions nests it; Responses does not
            _extra_keys(entry, pointer, frozenset({"type", "function"}), notes)
            entry, pointer = dict(entry["function"]), (*pointer, "function")
        tool = _named(entry, pointer)
        parameters = entry.get("parameters")
        schema = _NO_PARAMETERS if parameters is None else parameters
        tool["inputSchema"] = _object(schema, (*pointer, "parameters"), "parameters")
        if entry.get("strict") is True:
            tool["strict"] = True
        _extra_keys(entry, pointer, _OPENAI_KEYS, notes)
        tools.append(tool)
    return tools


_ANTHROPIC_KEYS = frozenset({"type", "name", "description", "input_schema"})


def _from_anthropic(found: Entries, notes: list[str]) -> list[dict[str, Any]]:
    tools = []
    for entry, pointer in _functions(found, notes):
        tool = _named(entry, pointer)
        tool["inputSchema"] = _object(entry.get("input_schema"), (*pointer, "input_schema"), "input_schema")
        _extra_keys(entry, pointer, _ANTHROPIC_KEYS, notes)
        tools.append(tool)
    return tools


_BEDROCK_KEYS = frozenset({"name", "description", "inputSchema"})


def _from_bedrock(found: Entries, notes: list[str]) -> list[dict[str, Any]]:
    """Converse `toolConfig.tools`: `{toolSpec: {name, description, inputSchema: {json}}}`."""
    tools = []
    for entry, pointer in _functions(found, notes):
        _extra_keys(entry, pointer, frozenset({"toolSpec"}), notes)
        pointer = (*pointer, "toolSpec")
        spec = _object(entry.get("toolSpec"), pointer, "toolSpec")
        tool = _named(spec, pointer)
        schema = _object(spec.get("inputSchema"), (*pointer, "inputSchema"), "inputSchema")
        tool["inputSchema"] = _object(schema.get("json"), (*pointer, "inputSchema", "json"), "inputSchema.json")
        _extra_keys(spec, pointer, _BEDROCK_KEYS, notes)
        _extra_keys(schema, (*pointer, "inputSchema"), frozenset({"json"}), notes)
        tools.append(tool)
    return tools


_GEMINI_KEYS = frozenset(
    {
        *("name", "description", "parameters", "parametersJsonSchema", "parameters_json_schema"),
        *("response", "responseJsonSchema", "response_json_schema"),
    }
)


def _from_gemini(found: Entries, notes: list[str]) -> list[dict[str, Any]]:
    """Gemini `Tool`s (or bare declarations) in proto3 JSON, lowerCamel or snake_case, enums by name or number:
    read by the Gemini request decoder itself, one declaration at a time, so import and decode never disagree."""
    from toolgen.runtime import Request
    from toolgen.runtime import decode as decode_body

    declared: Entries = []
    for group, at in _functions(found, notes):
        key = next((k for k in ("functionDeclarations", "function_declarations") if k in group), None)
        if key is None:  # a bare declaration
            declared.append((group, at))
        elif isinstance(group[key], list):
            declared.extend((d, (*at, key, j)) for j, d in enumerate(group[key]))
            _extra_keys(group, at, frozenset({key}), notes)
        else:
            raise ImportProblem(f"{key} must be a list", (*at, key))
    tools = []
    for raw, pointer in declared:
        entry = _object(raw, pointer, "a function declaration")
        _named(entry, pointer)
        for field in ("parametersJsonSchema", "parameters_json_schema", "parameters", "response"):
            if entry.get(field) is not None:
                _object(entry[field], (*pointer, field), field)
        for field in ("responseJsonSchema", "response_json_schema"):
            if entry.get(field) is not None and not isinstance(entry[field], (Mapping, bool)):
                raise ImportProblem(f"{field} must be a JSON Schema, not {type(entry[field]).__name__}", pointer)
        try:
            read = decode_body({"contents": [], "tools": [{"functionDeclarations": [entry]}]}, "gemini", "request")
        except ValueError as error:
            raise ImportProblem(f"not a function declaration the gemini wire reads: {error}", pointer) from None
        if (
            not isinstance(read, Request) or not read.tools
        ):  # pragma: no cover - the checks above refuse what it would not read
            raise ImportProblem("not a function declaration", pointer)
        tool = dict(read.tools[0])
        _extra_keys(entry, pointer, _GEMINI_KEYS, notes)
        tools.append(tool)
    return tools


def _from_mcp(found: Entries, notes: list[str]) -> list[dict[str, Any]]:
    from toolgen.runtime import MCPToolsError, definitions_from_mcp

    prefix = found[0][1][:-1] if found else ()
    try:
        definitions = definitions_from_mcp([entry for entry, _ in found])
    except MCPToolsError as error:
        raise ImportProblem(str(error), (*prefix, *error.pointer)) from None
    # `execution` is read into meta (toolgen/taskSupport) by definitions_from_mcp.
    known = frozenset(
        {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta", "execution"}
    )
    for entry, pointer in found:
        _extra_keys(entry, pointer, known, notes)
    return definitions


_READERS: Mapping[str, Reader] = {
    "openai": _from_openai,
    "anthropic": _from_anthropic,
    "gemini": _from_gemini,
    "bedrock": _from_bedrock,
    "mcp": _from_mcp,
}


def read_tools_file(
    path: Path, source_format: str, display: str | None = None
) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The canonical tool definitions in an exported or recorded tools list (JSON or YAML) of `source_format`, and
    a note for each thing in it that no definition holds (a provider's own tool, a field toolgen has not).

    Raises InvalidInputError naming the file, line and column of what cannot be imported, a list of another
    format among them (named)."""
    shown = display or str(path)
    try:
        document = load_file(path, shown)
    except LoadError as error:
        raise InvalidInputError([error.diagnostic]) from None
    notes: list[str] = []
    try:
        found = list(entries(document.data, source_format))
        check_entries(found, source_format)
        definitions = _READERS[source_format](found, notes)
    except ImportProblem as problem:
        raise InvalidInputError([_placed(document, problem)]) from None
    if not definitions:
        raise InvalidInputError([Diagnostic(shown, 1, 1, Severity.ERROR, "import", "the file lists no tools")])
    return definitions, tuple(notes)


def definitions_from_file(path: Path, source_format: str, display: str | None = None) -> list[dict[str, Any]]:
    """The canonical tool definitions of `read_tools_file`, without its notes."""
    return read_tools_file(path, source_format, display)[0]


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
    except MCPConnectionError as error:
        raise ServerUnreachableError(str(error)) from None
    except MCPToolsError as error:
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
    live MCP server (`source` a URL or a command), written as schema files into `project / output`; from a
    server, with the lock that pins them (`mcp-lock.json`, written last, listed last in `files`)."""
    notes: tuple[str, ...] = ()
    lock: tuple[Path, str] | None = None
    if source_format is None:
        definitions = definitions_from_server(source, timeout=timeout)
        label = source if isinstance(source, str) else " ".join(source)
        # The lock of what the server served (mcp_pins.py), planned first: one it cannot read writes nothing.
        lock = planned_lock(project / output, project, server_label(source), definitions, force=force)
    else:
        label = str(source)
        definitions, notes = read_tools_file(project / label, source_format, display=label)
    written = write_schemas(definitions, project / output, label, force=force)
    if lock is not None:
        try:
            lock[0].write_text(lock[1], encoding="utf-8")
        except OSError as error:
            raise EnvironmentProblem(f"cannot write {lock[0]}: {error.strerror or error}") from None
        written = dataclasses.replace(written, files=(*written.files, lock[0]))
    return dataclasses.replace(written, notes=notes)
