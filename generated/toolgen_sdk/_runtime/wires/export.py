# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Tool definitions in each provider's request format, built from toolgen's canonical tool definition, and read back.

Each function returns what goes into the request's tools field, with notes saying what had to change
for that provider and which fields of a tool it does not carry (export_notes.py); nothing is changed or
dropped silently. `decode_tools` and `encode_tools` are the wire codecs' side:
a request's tool list read into canonical definitions, and the list as sent kept when exporting would not
give it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import is_
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from .export_notes import described, field_notes
from .export_root import STRICT_REFUSED, flatten_root, refused_at_root, sent_builder
from .table import MCP, target_names, wire

if TYPE_CHECKING:
    from ..schema.fit import Rewrite

# Every name `export_tools` takes: the wires of the table (and their aliases) and MCP.
FORMATS = target_names()
GeminiSchema = Literal["json", "openapi"]
# The schema subsets export rewrites input schemas into: OpenAI strict mode, Gemini's `parameters`, and the root a
# provider takes (its refused root composition merged, export_root.py).
FitTarget = Literal["strict", "gemini", "root"]


@dataclass(frozen=True)
class Export:
    """The provider payload and one sentence per change made to fit the provider."""

    provider: str
    tools: list[Any]
    notes: tuple[str, ...]


def canonical_definition(**fields: Any) -> dict[str, Any]:
    """A canonical tool definition from its fields (camelCase keys); absent values and empty metadata left out."""
    return {
        key: value
        for key, value in fields.items()
        if value is not None and not (key in ("meta", "annotations") and not value)
    }


def _object_schema(tool: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """Providers take an object schema for arguments; `true`/`{}` become an open object, with a note."""
    schema = tool["inputSchema"]
    if schema is True or schema == {}:
        notes.append(
            f"{tool['name']}: an input schema that accepts anything is sent as an empty object schema"
        )
        return {"type": "object", "properties": {}}
    if schema is False or not isinstance(schema, Mapping):
        raise ValueError(
            f"{tool['name']}: an input schema of {schema!r} cannot be sent to a provider"
        )
    if schema.get("type") != "object":
        notes.append(
            f"{tool['name']}: input schema root has no `type: object`; it was added"
        )
        return {**schema, "type": "object"}
    return dict(schema)


def _provider_schema(
    tool: Mapping[str, Any], notes: list[str], builder: str
) -> dict[str, Any]:
    """The object schema, its root composition merged where the builder's provider refuses it (export_root.py)."""
    schema = _object_schema(tool, notes)
    refused = refused_at_root(builder)
    if not any(key in schema for key in refused):
        return schema
    flat, merged = flatten_root(schema, refused)
    notes.extend(change.note(str(tool["name"])) for change in merged)
    return flat


def fit_input_schema(
    tool: Mapping[str, Any], target: FitTarget, provider: str = ""
) -> tuple[dict[str, Any], list[Rewrite]]:
    """The tool's input schema as export sends it in OpenAI strict mode or Gemini's `parameters`, and each rewrite;
    with "root", as `provider`'s export sends it without strict mode (its root merged where it refuses the root).

    Raises Unfit where that subset cannot express the schema: export then sends the tool with strict: false, or
    as parametersJsonSchema. `toolgen lint` reports these same rewrites (warnings) and refusals (errors).
    """
    schema = _object_schema(tool, [])
    if target == "root":
        row = wire(provider)
        return flatten_root(
            schema, refused_at_root(sent_builder(row.export, row.lint.strict_mode))
        )
    # Imported here: only strict mode and Gemini's subset need the rewrites, and the SDK's import time counts.
    from ..schema.fit import gemini_parameters, strict_rewrites

    if target == "gemini":
        return gemini_parameters(schema)
    # Strict mode's root must be a plain object: the merge comes first, and its rewrites with the others.
    flat, merged = flatten_root(schema, STRICT_REFUSED)
    rewritten, changes = strict_rewrites(flat)
    return rewritten, [*merged, *changes]


def _named(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The name and the description a provider's model reads: with meta folded in where `describeMeta` asks."""
    entry: dict[str, Any] = {"name": tool["name"]}
    description = described(tool)
    if description:
        entry["description"] = description
    return entry


def _openai_parameters(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool, builder: str
) -> tuple[dict[str, Any], bool]:
    """The parameters schema and whether the tool goes out strict: rewritten for strict mode when asked, else as is."""
    schema = _provider_schema(tool, notes, builder)
    if not (force_strict or tool.get("strict") is True):
        return schema, False
    from ..schema.fit import Unfit, strict_rewrites

    try:
        rewritten, changes = strict_rewrites(schema)
    except Unfit as unfit:
        notes.append(
            f"{tool['name']}: sent with strict: false; strict mode cannot express {unfit}"
        )
        return schema, False
    notes.extend(change.note(str(tool["name"])) for change in changes)
    return rewritten, True


def _chat_function(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    """OpenAI Chat Completions (and its camelCase dialect), with OpenAI's strict mode."""
    parameters, strict = _openai_parameters(tool, notes, force_strict, "chat-function")
    function = {**_named(tool), "parameters": parameters}
    if strict or force_strict or tool.get("strict") is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


def _plain_function(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    """Mistral, Ollama and Cohere take the Chat Completions shape without OpenAI's strict mode."""
    return {
        "type": "function",
        "function": {**_named(tool), "parameters": _object_schema(tool, notes)},
    }


def _responses_function(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    # The Responses API treats a function without `strict` as strict; say what the tool asks for.
    parameters, strict = _openai_parameters(
        tool, notes, force_strict, "responses-function"
    )
    return {
        "type": "function",
        **_named(tool),
        "parameters": parameters,
        "strict": strict,
    }


def _interactions_function(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    """Google Interactions: a function tool named at the top level, its schema as `parameters`."""
    return {
        "type": "function",
        **_named(tool),
        "parameters": _object_schema(tool, notes),
    }


def _anthropic(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    return {**_named(tool), "input_schema": _provider_schema(tool, notes, "anthropic")}


def _bedrock(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    return {
        "toolSpec": {
            **_named(tool),
            "inputSchema": {"json": _provider_schema(tool, notes, "bedrock")},
        }
    }


def _without_dialect(
    schema: Any, tool: Mapping[str, Any], field: str, notes: list[str]
) -> Any:
    """`schema` without its `$schema`, which Gemini refuses in a declaration, with a note saying so."""
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return schema
    notes.append(
        f"{tool['name']}: {field}'s $schema {schema['$schema']!r} is not sent to gemini (it refuses the "
        "keyword); toolgen still checks the values under that draft"
    )
    return {key: value for key, value in schema.items() if key != "$schema"}


def _gemini_declaration(
    tool: Mapping[str, Any], notes: list[str], schema_field: GeminiSchema
) -> dict[str, Any]:
    declaration = _named(tool)
    schema = _object_schema(tool, notes)
    if schema_field == "openapi":
        from ..schema.fit import Unfit

        try:
            parameters, changes = fit_input_schema(tool, "gemini")
        except Unfit as unfit:
            notes.append(
                f"{tool['name']}: sent as parametersJsonSchema; Gemini's OpenAPI subset cannot express {unfit}"
            )
        else:
            notes.extend(change.note(str(tool["name"])) for change in changes)
            # "For function with no parameters, this can be left unset"; an OBJECT without properties is refused.
            if parameters.get("properties"):
                declaration["parameters"] = parameters
            return declaration
    # parametersJsonSchema takes JSON Schema as it is (but $schema); `parameters` only an OpenAPI subset, whose
    # rewrite drops $schema with the other annotations (schema/fit.py), each with a note.
    declaration["parametersJsonSchema"] = _without_dialect(
        schema, tool, "inputSchema", notes
    )
    if tool.get("outputSchema") is not None:
        declaration["responseJsonSchema"] = _without_dialect(
            tool["outputSchema"], tool, "outputSchema", notes
        )
    return declaration


def _mcp(
    tool: Mapping[str, Any], notes: list[str], force_strict: bool = False
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool["name"]}
    if tool.get("title"):
        entry["title"] = tool["title"]
    if tool.get("description"):
        entry["description"] = tool["description"]
    entry["inputSchema"] = _object_schema(tool, notes)
    meta = dict(tool.get("meta") or {})
    output = tool.get("outputSchema")
    if isinstance(output, Mapping) and output.get("type") == "object":
        entry["outputSchema"] = dict(output)
    elif output is not None:
        # toolgen's own MCP client and `toolgen import` read it back from there.
        meta["outputSchema"] = output
        notes.append(
            f"{tool['name']}: MCP output schemas must describe an object; it travels in _meta.outputSchema"
        )
    if tool.get("annotations"):
        entry["annotations"] = dict(tool["annotations"])
    # MCP has no field for toolgen's policies, so they travel in _meta like any other tool metadata.
    if tool.get("returnDirect"):
        meta["returnDirect"] = True
    if tool.get("requiresApproval"):
        meta["requiresApproval"] = True
    if tool.get("timeout") is not None:
        meta["timeout"] = tool["timeout"]
    if tool.get("strict") is not None:
        meta["strict"] = tool["strict"]
    if tool.get("describeMeta"):
        # MCP keeps meta as _meta and the description as written; toolgen's MCP client folds it for a provider.
        meta["describeMeta"] = tool["describeMeta"]
    if meta:
        entry["_meta"] = meta
    return entry


# The builders the table's `export` column names, one entry per tool ("gemini" wraps them all in one).
_ONE_PER_TOOL: Mapping[
    str, Callable[[Mapping[str, Any], list[str], bool], dict[str, Any]]
] = MappingProxyType(
    {
        "anthropic": _anthropic,
        "bedrock": _bedrock,
        "chat-function": _chat_function,
        "interactions": _interactions_function,
        MCP: _mcp,
        "plain-function": _plain_function,
        "responses-function": _responses_function,
    }
)
BUILDERS = (*_ONE_PER_TOOL, "gemini")


def export_tools(
    tools: Iterable[Mapping[str, Any]],
    provider: str,
    *,
    strict: bool = False,
    gemini: GeminiSchema = "json",
    unnoted: Iterable[str] = (),
) -> Export:
    """`tools` are canonical tool definitions (name, description, inputSchema, ...); `provider` a wire of the
    table (or an alias: `openai`, `bedrock`) or `mcp`.

    Tools that declare `strict: true` (every tool, with `strict=True`) are rewritten for OpenAI strict mode in the
    openai formats; `gemini="openapi"` sends Gemini's `parameters` subset instead of `parametersJsonSchema`. A root
    composition the provider refuses (OpenAI, Anthropic, Bedrock) is merged into one object (export_root.py).
    The notes name every rewrite, and every field of a tool the format does not carry (export_notes.py), but
    for the fields in `unnoted`, whose losses the caller names itself.
    """
    if provider == MCP:
        builder = MCP
    else:
        try:
            row = wire(provider)
        except ValueError:
            raise ValueError(
                f"unknown provider format {provider!r}; one of {', '.join(FORMATS)}"
            ) from None
        # OpenAI's strict mode goes only to the wires whose rules have it (Cohere shares the chat shape only).
        provider, builder = row.name, sent_builder(row.export, row.lint.strict_mode)
    notes: list[str] = []
    entries: list[dict[str, Any]] = []
    quiet = frozenset(unnoted)
    for tool in tools:
        if builder == "gemini":
            entry = _gemini_declaration(tool, notes, gemini)
            # A schema Gemini's subset cannot express goes as parametersJsonSchema, its output schema with it.
            form = "json" if "parametersJsonSchema" in entry else gemini
        else:
            entry, form = _ONE_PER_TOOL[builder](tool, notes, strict), gemini
        entries.append(entry)
        notes.extend(field_notes(tool, provider, builder, strict, form, quiet))
    if builder == "gemini":
        entries = [{"functionDeclarations": entries}] if entries else []
    return Export(provider, entries, tuple(notes))


class ToolSet(list[dict[str, Any]]):
    """Canonical tool definitions that keep their export per wire, made on first use.

    Requests built from one set for one wire reuse its export instead of exporting every tool on every call
    (`encode_request(..., tools=ToolSet(definitions))`). Adding, removing or replacing a definition makes the
    exports anew; a definition changed in place is not noticed, and neither is a change to the exported entries
    of a request body, which share their schemas with the set: change neither.
    """

    def __init__(self, tools: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(dict(tool) for tool in tools)
        # provider -> (the definitions exported, by identity; the export)
        self._exports: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {}

    def share(self) -> ToolSet:
        """A new set of the same definitions that shares this one's exports: a request may add to or drop from
        its own list without changing the set it came from."""
        copy = ToolSet()
        copy.extend(self)
        copy._exports = self._exports
        return copy

    def exported(self, provider: str) -> list[Any]:
        """`export_tools(self, provider).tools`, built once while the set stays the same."""
        cached = self._exports.get(provider)
        if cached is None or not _same_items(cached[0], self):
            cached = (tuple(self), tuple(export_tools(self, provider).tools))
            self._exports[provider] = cached
        # A fresh list of fresh entries: a body's caller may add to either without touching the set.
        return list(map(dict, cached[1]))


def _same_items(kept: tuple[Any, ...], now: list[Any]) -> bool:
    # map(is_) rather than a generator: this runs on every request that sends the set.
    return len(kept) == len(now) and all(map(is_, kept, now))


# ---- a request's tool list read back: what to keep of the list a body sent ----


def export_checked(tools: list[dict[str, Any]], provider: str) -> list[Any]:
    """`export_tools(...).tools`, with a schema export cannot read reported as malformed input."""
    try:
        if isinstance(tools, ToolSet):
            return tools.exported(provider)
        return export_tools(tools, provider).tools
    except (TypeError, AttributeError, KeyError) as exc:
        raise ValueError(
            f"/tools: expected each tool's input schema to be a JSON Schema object ({exc})"
        ) from None


ToolReader = Callable[[Any], "dict[str, Any] | None"]


def decode_tools(
    raw: Any,
    kept: dict[str, Any],
    read: ToolReader,
    provider: str,
    plain: Callable[[Any], bool] | None = None,
    short: ToolReader | None = None,
) -> list[dict[str, Any]]:
    """Canonical definitions of a request's `tools` (`read` turns one entry into one, or None for a tool that is
    not a function); the raw list is kept when encoding would not give it back.

    `plain(entry)` says True only of an entry the export writes back exactly as it is (it may say False of one
    that would come back too): when it says so of every entry, nothing is exported to find out. `short(entry)` is
    `read(entry)` for such an entry and None for any other: a list of them is read in one pass.
    """
    if not isinstance(raw, list):
        return []
    if short is not None:
        read_plain = plain_definitions(raw, short)
        if read_plain is not None:
            return read_plain
    tools: list[dict[str, Any]] = []
    told = plain or _not_told
    all_plain = plain is not None
    # One loop of plain calls, not map(): a call from Python code to Python code costs less than one from C.
    for entry in raw:
        tool = read(entry)
        if tool is not None:
            tools.append(tool)
        if all_plain:
            all_plain = told(entry)
    if not tools or not (all_plain or encode_tools(tools, None, read, provider) == raw):
        kept["tools"] = raw
    return tools


def plain_definitions(raw: list[Any], short: ToolReader) -> list[dict[str, Any]] | None:
    """The definitions `short` reads of every entry of a non-empty list; None when it reads none of some entry
    (or the list is empty), and then the list takes the long way."""
    tools: list[dict[str, Any]] = []
    for entry in raw:
        tool = short(entry)
        if tool is None:
            return None
        tools.append(tool)
    return tools or None


def _not_told(entry: Any) -> bool:
    return False


def object_schema(value: Any) -> bool:
    """A schema export sends as it is: an object schema (a dict whose `type` is "object")."""
    return type(value) is dict and value.get("type") == "object"


def named_entry(entry: Any, keys: frozenset[str], described: frozenset[str]) -> bool:
    """A dict with exactly `keys` (or `described`, the same plus a non-empty `description` string), its `name` a
    string: the fields export writes for a tool and nothing else."""
    if type(entry) is not dict or type(entry.get("name")) is not str:
        return False
    found = entry.keys()
    if found == keys:
        return True
    description = entry.get("description")
    return found == described and type(description) is str and description != ""


_FUNCTION_KEYS = frozenset({"name", "parameters"})
_DESCRIBED_FUNCTION_KEYS = _FUNCTION_KEYS | {"description"}


def plain_chat_definition(entry: Any) -> dict[str, Any] | None:
    """The definition of a chat-completions tool entry (OpenAI Chat and its dialects, Cohere, Ollama) that the
    export writes back as it is, as those wires read it: a function of a name, a description and an object schema,
    without `strict` (which it may rewrite for). None for any other entry."""
    # Keys told by count and lookup, not a key view compared: this runs for every tool of every decoded request.
    if type(entry) is not dict or len(entry) != 2 or entry.get("type") != "function":
        return None
    fn = entry.get("function")
    if type(fn) is not dict:
        return None
    name, schema = fn.get("name"), fn.get("parameters")
    if (
        type(name) is not str
        or type(schema) is not dict
        or schema.get("type") != "object"
    ):
        return None
    count = len(fn)
    if count == 2:
        return {"name": name, "inputSchema": schema}
    description = fn.get("description")
    if count != 3 or type(description) is not str or not description:
        return None
    return {"name": name, "description": description, "inputSchema": schema}


def plain_chat_function(entry: Any) -> bool:
    """A chat-completions tool entry that the export writes back as it is (see `plain_chat_definition`)."""
    return plain_chat_definition(entry) is not None


def encode_tools(
    tools: list[dict[str, Any]],
    kept: Mapping[str, Any] | None,
    read: ToolReader,
    provider: str,
) -> list[Any]:
    """The wire's `tools`: the kept list when the tools did not change, else the export, plus kept non-functions."""
    raw = kept.get("tools") if kept else None
    if (
        raw is not None
        and [tool for tool in map(read, raw) if tool is not None] == tools
    ):
        return list(raw)
    exported = export_checked(tools, provider)
    if raw is not None:
        exported.extend(entry for entry in raw if read(entry) is None)
    return exported
