"""Recognize the documented shapes a tool definition is written in and map each to toolgen's canonical keys.

Accepted, per file: `{tools: [...]}`, a list of tools, or one tool; Gemini's `{functionDeclarations: [...]}`
may stand anywhere a tool can. Per tool:

- toolgen / MCP: `{name, title, description, inputSchema, outputSchema, returnDirect, timeout, requiresApproval,
  strict, meta, annotations, describeMeta}`; MCP's `_meta` is read as `meta`, `describe_meta` as `describeMeta`.
- Anthropic: `{name, description, input_schema}`.
- OpenAI Chat Completions: `{type: function, function: {name, description, parameters, strict}}`.
- Function declaration (OpenAI Responses, legacy `functions`, Gemini, Mistral, Ollama):
  `{name, description, parameters}`; Gemini's `parametersJsonSchema`, `response`, `responseJsonSchema`.
- Bedrock Converse: `{toolSpec: {name, description, inputSchema: {json: ...}}}`.

Anything else is reported with the construct that made it unrecognizable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import toolgen.source.dialects as dialects
from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.positions import Pointer
from toolgen.source.load import Document

CANONICAL_KEYS = (
    "name",
    "title",
    "description",
    "meta",
    "returnDirect",
    "inputSchema",
    "outputSchema",
    "timeout",
    "requiresApproval",
    "strict",
    "annotations",
    "describeMeta",
)
# Keys of the provider formats that toolgen's tool definition has no field for, and what each is: the build leaves
# them out with a warning, since no definition it exports (to that provider or any other) can carry them.
_PROVIDER_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "cache_control": "Anthropic's prompt-caching mark",
        "defer_loading": "the tool-search flag of Anthropic and OpenAI",
        "icons": "MCP's icons",
        "execution": "MCP's execution settings",
    }
)
# A tool's `type` that only names the shape it is written in (OpenAI's "function", Anthropic's "custom").
_SHAPE_TYPES = ("function", "custom")
# Serializers in Go, Java and JS write absent optional fields as null; null there means "not given".
_NULL_MEANS_ABSENT = frozenset(
    {
        "title",
        "description",
        "meta",
        "annotations",
        "outputSchema",
        "timeout",
        "strict",
        "returnDirect",
        "requiresApproval",
        "describeMeta",
    }
)
# toolgen.yaml spells `describe_meta` so; a tool file may too.
_RENAMED: Mapping[str, str] = MappingProxyType(
    {"input_schema": "inputSchema", "_meta": "meta", "describe_meta": "describeMeta"}
)
# Every key some accepted shape reads: a near miss of one of them is a typo that would drop what it holds.
_KNOWN_KEYS = tuple(
    sorted(
        {
            *CANONICAL_KEYS,
            *_RENAMED,
            "parameters",
            "parametersJsonSchema",
            "response",
            "responseJsonSchema",
            "toolSpec",
            "function",
        }
    )
)


def _folded(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def misspelled_key(key: str) -> str | None:
    """The key an unknown tool key was probably meant to be (`paramters` → `parameters`), or None."""
    same = [known for known in _KNOWN_KEYS if _folded(known) == _folded(key)]
    if same:
        return same[0]
    # Imported here: only an unknown key needs it, and every lint and export reads the shapes.
    import difflib

    # A key that holds a known key whole (`api_description`, `responses`, `path_parameters`) is another
    # dialect's word, not a typo: only a misspelling (`paramters`, `descrption`) is.
    close = [
        known
        for known in difflib.get_close_matches(key, _KNOWN_KEYS, n=3, cutoff=0.8)
        if _folded(known) not in _folded(key) and _folded(key) not in _folded(known)
    ]
    return close[0] if close else None


@dataclass(frozen=True)
class RawTool:
    """One tool as written, with canonical keys mapped to where their values sit in the file."""

    document: Document
    pointer: Pointer
    shape: str
    fields: tuple[tuple[str, Any, Pointer], ...]
    note: str = ""  # how a dialect was read, reported as a warning
    # Keys around the definition that the shape does not read (beside OpenAI's `function`, in Bedrock's toolSpec),
    # with what holds them: each is reported, never taken for a canonical key of the same name.
    aside: tuple[tuple[str, Any, Pointer, str], ...] = ()

    def value(self, key: str, default: Any = None) -> Any:
        for name, value, _ in self.fields:
            if name == key:
                return value
        return default

    def where(self, key: str) -> Pointer:
        for name, _, pointer in self.fields:
            if name == key:
                return pointer
        return self.pointer

    def as_dict(self) -> dict[str, Any]:
        return {name: value for name, value, _ in self.fields}


def _dialect_hint(obj: dict[str, Any]) -> str | None:
    arguments = obj.get("arguments")
    if isinstance(arguments, list):
        return "'arguments' is a list of {name, type, desc} entries (Docker MCP registry dialect), not a JSON Schema"
    parameters = obj.get("parameters")
    if isinstance(parameters, list):
        return "'parameters' is a list of parameter entries, not a JSON Schema"
    if dialects.is_parameter_map(parameters):
        return "'parameters' maps parameter names to specs (Seal-Tools dialect); a JSON Schema needs type: object and properties"
    if "required_parameters" in obj or "optional_parameters" in obj:
        return "'required_parameters'/'optional_parameters' lists (ToolBench dialect) are not a JSON Schema"
    for key in ("arguments", "_arguments", "args", "params", "query_parameters", "path_parameters"):
        if key in obj and "parameters" not in obj and "inputSchema" not in obj and "input_schema" not in obj:
            return f"arguments are under {key!r} (a benchmark dialect); toolgen reads 'inputSchema', 'parameters' or 'input_schema'"
    if "api_name" in obj:
        return "'api_name' entry (API-bank/Seal-Tools dialect); toolgen reads 'name'"
    return None


def _function_fields(obj: dict[str, Any], base: Pointer) -> list[tuple[str, Any, Pointer]]:
    fields: list[tuple[str, Any, Pointer]] = []
    for key in ("name", "title", "description", "strict"):
        if key in obj:
            fields.append((key, obj[key], (*base, key)))
    for key in ("parametersJsonSchema", "parameters"):
        if key in obj:
            fields.append(("inputSchema", obj[key], (*base, key)))
            break
    else:
        fields.append(("inputSchema", dialects.empty_object_schema(), base))
    for key in ("responseJsonSchema", "response"):
        if key in obj:
            fields.append(("outputSchema", obj[key], (*base, key)))
            break
    known = {
        "name",
        "title",
        "description",
        "strict",
        "parametersJsonSchema",
        "parameters",
        "responseJsonSchema",
        "response",
    }
    fields.extend((key, value, (*base, key)) for key, value in obj.items() if key not in known)
    return fields


def _classify(document: Document, obj: Any, pointer: Pointer, read_dialects: bool) -> RawTool | Diagnostic:
    if obj is None and not pointer:
        return document.diagnostic(pointer, "tool-shape", "the file is empty: expected a tool definition (a mapping)")
    if not isinstance(obj, dict):
        return document.diagnostic(
            pointer, "tool-shape", f"a tool definition must be a mapping, found {type(obj).__name__}"
        )
    if isinstance(obj.get("toolSpec"), dict):
        spec, base = obj["toolSpec"], (*pointer, "toolSpec")
        fields = [(k, spec[k], (*base, k)) for k in ("name", "description") if k in spec]
        schema = spec.get("inputSchema")
        if isinstance(schema, dict) and "json" in schema:
            fields.append(("inputSchema", schema["json"], (*base, "inputSchema", "json")))
        else:
            return document.diagnostic(base, "tool-shape", "Bedrock toolSpec needs inputSchema: {json: <JSON Schema>}")
        around = (
            *_aside(obj, pointer, ("toolSpec",), "beside `toolSpec`"),
            *_aside(spec, base, ("name", "description", "inputSchema"), "in `toolSpec`"),
            *_aside(schema, (*base, "inputSchema"), ("json",), "in `toolSpec.inputSchema`"),
        )
        return RawTool(document, pointer, "bedrock", tuple(fields), aside=around)
    if obj.get("type") == "function" and isinstance(obj.get("function"), dict):
        base = (*pointer, "function")
        aside = tuple(_aside(obj, pointer, ("type", "function"), "beside `function`"))
        return RawTool(document, pointer, "openai", tuple(_function_fields(obj["function"], base)), aside=aside)
    hint = _dialect_hint(obj)
    if hint and read_dialects:
        read = dialects.read_dialect(obj, pointer)
        if read is not None:
            fields, note = read
            used = {where[len(pointer)] for _, _, where in fields if len(where) > len(pointer)}
            # `required` and the ToolBench pair are read with the parameters they go with.
            ignored = sorted(set(obj) - used - {"required", "required_parameters", "optional_parameters"})
            note += f"; ignored keys: {', '.join(ignored)}" if ignored else ""
            return RawTool(document, pointer, "dialect", tuple(fields), note)
        return document.diagnostic(
            pointer, "tool-dialect", hint + "; its parameters could not be read as a parameter map or list"
        )
    if hint:
        return document.diagnostic(
            pointer, "tool-dialect", hint + "; set `normalize: [shapes]` in toolgen.yaml to read it"
        )
    if "inputSchema" in obj or "input_schema" in obj:
        renamed = tuple((_RENAMED.get(str(key), str(key)), value, (*pointer, str(key))) for key, value in obj.items())
        shape = "anthropic" if "input_schema" in obj else "toolgen"
        return RawTool(document, pointer, shape, renamed)
    if "name" in obj and ("parameters" in obj or "parametersJsonSchema" in obj or "description" in obj):
        return RawTool(document, pointer, "function", tuple(_function_fields(obj, pointer)))
    keys = ", ".join(sorted(map(str, obj))) or "no keys"
    hints = [f"did you mean {meant!r} for {key!r}?" for key in sorted(map(str, obj)) if (meant := _typo(key))]
    return document.diagnostic(
        pointer,
        "tool-shape",
        f"not a recognized tool definition (keys: {keys}); expected name plus inputSchema, parameters or input_schema"
        + "".join(f"; {hint}" for hint in hints),
    )


def _aside(
    obj: dict[str, Any], pointer: Pointer, read: tuple[str, ...], where: str
) -> Iterator[tuple[str, Any, Pointer, str]]:
    return ((str(key), value, (*pointer, str(key)), where) for key, value in obj.items() if key not in read)


def _ignored(key: str, value: Any, where: str = "") -> str | None:
    """Why a key the tool's shape does not read is left out (a warning), or None for one that only names the shape."""
    if key == "type" and value in _SHAPE_TYPES:
        return None
    place = f" {where}" if where else ""
    if key in _PROVIDER_KEYS:
        return (
            f"tool key {key!r}{place} ({_PROVIDER_KEYS[key]}) is ignored: toolgen's tool definition has no field "
            "for it, so no definition the build exports carries it"
        )
    if key == "type":
        return f"tool key 'type'{place} is {value!r}, not a function tool's type; it is ignored"
    return f"unknown tool key {key!r}{place} is ignored"


def _typo(key: str) -> str | None:
    meant = misspelled_key(key)
    return meant if meant != key else None


_TOOL_MARKERS = frozenset({"tools", "name", "api_name", "functionDeclarations", "toolSpec", "function"})


def is_schema_library(data: Any) -> bool:
    """A file of shared definitions that tools `$ref` into, holding no tool itself."""
    return isinstance(data, dict) and not (_TOOL_MARKERS & data.keys()) and bool({"$defs", "definitions"} & data.keys())


def _entries(document: Document) -> Iterator[tuple[Any, Pointer]]:
    data = document.data
    if is_schema_library(data):
        return
    if isinstance(data, dict) and "tools" in data and "name" not in data:
        tools = data["tools"]
        if isinstance(tools, list):
            yield from ((item, ("tools", str(i))) for i, item in enumerate(tools))
        else:
            yield tools, ("tools",)
    elif isinstance(data, list):
        yield from ((item, (str(i),)) for i, item in enumerate(data))
    else:
        yield data, ()


def extract_tools(document: Document, read_dialects: bool = False) -> tuple[list[RawTool], list[Diagnostic]]:
    """All tools of one file, each in canonical keys, plus a diagnostic for every entry that is not a tool."""
    tools: list[RawTool] = []
    diagnostics: list[Diagnostic] = []
    pending = list(_entries(document))
    while pending:
        obj, pointer = pending.pop(0)
        if isinstance(obj, dict) and isinstance(obj.get("functionDeclarations"), list):
            declarations = obj["functionDeclarations"]
            pending[0:0] = [(d, (*pointer, "functionDeclarations", str(i))) for i, d in enumerate(declarations)]
            # Gemini's Tool may hold its server tools beside the declarations (googleSearch, codeExecution).
            diagnostics.extend(
                document.diagnostic(
                    where, "unknown-key", f"key {key!r} beside `functionDeclarations` is ignored", Severity.WARNING
                )
                for key, _, where, _ in _aside(obj, pointer, ("functionDeclarations",), "")
            )
            continue
        result = _classify(document, obj, pointer, read_dialects)
        if isinstance(result, Diagnostic):
            diagnostics.append(result)
            continue
        if result.note:
            diagnostics.append(document.diagnostic(pointer, "normalized-shape", result.note, Severity.WARNING))
        kept = []
        for key, value, where in result.fields:
            if value is None and key in _NULL_MEANS_ABSENT:
                continue
            if key in CANONICAL_KEYS:
                kept.append((key, value, where))
            elif key not in _PROVIDER_KEYS and key != "type" and (meant := _typo(key)) is not None:
                # A typo of a key toolgen reads would build the tool without what it holds (its arguments).
                problem = f"unknown tool key {key!r}; did you mean {meant!r}?"
                diagnostics.append(document.key_diagnostic(where, "unknown-key", problem))
            elif (why := _ignored(key, value)) is not None:
                diagnostics.append(document.diagnostic(where, "unknown-key", why, Severity.WARNING))
        for key, value, where, place in result.aside:
            if (why := _ignored(key, value, place)) is not None:
                diagnostics.append(document.diagnostic(where, "unknown-key", why, Severity.WARNING))
        tools.append(RawTool(document, pointer, result.shape, tuple(kept), result.note))
    return tools, diagnostics
