"""The shape of a tools list `toolgen import` reads: where its entries are, and which format each looks like.

`import --from F` reads a file as F; an entry that can only be another format's (an Anthropic `input_schema`
read as openai, a Bedrock `toolSpec` read as anything else) is refused by name rather than read as a tool
that accepts anything. Entries that are a provider's own tools (web search, code execution, a cache point)
are not functions: the readers skip them with a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

Pointer = tuple[str | int, ...]

# Gemini `Tool` fields other than function declarations: the service's own tools (either spelling).
_GEMINI_OWN = frozenset(
    {
        *("googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval"),
        *("codeExecution", "code_execution", "urlContext", "url_context", "retrieval"),
        *("computerUse", "computer_use", "fileSearch", "file_search", "googleMaps", "google_maps"),
        *("enterpriseWebSearch", "enterprise_web_search", "mcpServers", "mcp_servers"),
    }
)
# Anthropic's own tools carry a dated type (`web_search_20250305`, `bash_20250124`).
_DATED_TYPE = re.compile(r"_\d{8}$")
_DECLARATIONS = ("functionDeclarations", "function_declarations")
_GEMINI_SCHEMAS = ("parametersJsonSchema", "parameters_json_schema", "responseJsonSchema", "response_json_schema")


class ImportProblem(ValueError):
    """A tools list that cannot be imported: what is wrong, and where (`pointer`, keys from the top)."""

    def __init__(self, message: str, pointer: Pointer = ()) -> None:
        super().__init__(message)
        self.pointer = pointer


def looks_like(entry: Any) -> tuple[frozenset[str], str, bool]:
    """The formats `entry` could be an entry of (empty: it tells nothing), the keys that say so, and whether it is
    a provider's own tool rather than a function."""
    if not isinstance(entry, Mapping):
        return frozenset(), "", False
    kind = entry.get("type")
    if "toolSpec" in entry:
        return frozenset({"bedrock"}), "`toolSpec`", False
    if "cachePoint" in entry or "systemTool" in entry:
        return frozenset({"bedrock"}), "`cachePoint`" if "cachePoint" in entry else "`systemTool`", True
    for key in _DECLARATIONS:
        if key in entry:
            return frozenset({"gemini"}), f"`{key}`", False
    own = sorted(_GEMINI_OWN & entry.keys())
    if own and "name" not in entry:
        return frozenset({"gemini"}), f"`{own[0]}`", True
    if "input_schema" in entry:
        return frozenset({"anthropic"}), "`input_schema`", False
    if "inputSchema" in entry:
        return frozenset({"mcp"}), "`inputSchema`", False
    if kind == "function" and isinstance(entry.get("function"), Mapping):
        return frozenset({"openai"}), "`type: function` with a `function` object", False
    for key in _GEMINI_SCHEMAS:
        if key in entry:
            return frozenset({"gemini"}), f"`{key}`", False
    if kind == "function":
        return frozenset({"openai"}), "`type: function`", False
    if isinstance(kind, str) and kind:
        # A provider's own tool: Anthropic's are dated and named, OpenAI's are not.
        if _DATED_TYPE.search(kind) and "name" in entry:
            return frozenset({"anthropic"}), f"`type: {kind}`", True
        return frozenset({"openai"}), f"`type: {kind}`", True
    if "name" in entry and ("parameters" in entry or set(entry) <= {"name", "description"}):
        # A bare function: OpenAI's legacy `functions` entries and Gemini's declarations are spelled alike.
        return frozenset({"openai", "gemini"}), "`name` and `parameters`", False
    return frozenset(), "", False


def _list_at(data: Any, *path: str) -> list[Any] | None:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data if isinstance(data, list) else None


# Where a format's list may also stand, besides a request's `tools`.
_OTHER_PLACES: Mapping[str, tuple[tuple[str, ...], ...]] = MappingProxyType(
    {
        "bedrock": (("toolConfig", "tools"),),
        "openai": (("functions",),),
        "mcp": (("result", "tools"),),
    }
)


def entries(data: Any, source: str) -> Iterator[tuple[Any, Pointer]]:
    """Each entry of the tools list in `data` read as `source`, with where it is: the list itself, or a request
    (or result) holding it (`tools`; Bedrock's `toolConfig.tools`; OpenAI's legacy `functions`; an MCP
    JSON-RPC response's `result.tools`; one Gemini `Tool` object)."""
    if isinstance(data, list):
        yield from ((entry, (index,)) for index, entry in enumerate(data))
        return
    places: list[tuple[str, ...]] = [("tools",), *_OTHER_PLACES.get(source, ())]
    for path in places:
        found = _list_at(data, *path)
        if found is not None:
            for index, entry in enumerate(found):
                pointer: Pointer = (*path, index)
                yield entry, pointer
            return
    if source == "gemini" and isinstance(data, Mapping) and any(key in data for key in _DECLARATIONS):
        yield data, ()
        return
    other = _other_container(data, source)
    if other:
        kind, what = other
        raise ImportProblem(f"this looks like {what}, not {source}: import it with --from {kind}")
    place = "toolConfig.tools` (or `tools" if source == "bedrock" else "tools"
    raise ImportProblem(f"expected a list of tools, or an object with a `{place}` list")


def _other_container(data: Any, source: str) -> tuple[str, str] | None:
    """The format whose request or tool object `data` is, and what it is, when that is not `source`'s."""
    if _list_at(data, "toolConfig", "tools") is not None and source != "bedrock":
        return "bedrock", "a bedrock Converse request (`toolConfig.tools`)"
    if isinstance(data, Mapping) and any(key in data for key in _DECLARATIONS) and source != "gemini":
        return "gemini", "a gemini tool (`functionDeclarations`)"
    return None


def _a(names: str) -> str:
    return f"an {names}" if names[0] in "aeio" or names.startswith("mcp") else f"a {names}"


def check_entries(found: list[tuple[Any, Pointer]], source: str) -> None:
    """Refuse a list whose entries are another format's: at the first such entry, naming the format it looks like
    and how many entries do."""
    wrong = [(entry, pointer) for entry, pointer in found if (kinds := looks_like(entry)[0]) and source not in kinds]
    if not wrong:
        return
    entry, pointer = wrong[0]
    kinds, evidence, _ = looks_like(entry)
    first = sorted(kinds)[0]
    more = f" (so do {len(wrong) - 1} more of its {len(found)} entries)" if len(wrong) > 1 else ""
    raise ImportProblem(
        f"{where(pointer)} looks like {_a(' or '.join(sorted(kinds)))} tool ({evidence}), not {source}{more}: "
        f"import the file with --from {first}",
        pointer,
    )


def own_tool_note(entry: Mapping[str, Any], pointer: Pointer, evidence: str) -> str:
    """The note for an entry that is a provider's own tool, which toolgen cannot define as a function."""
    name = entry.get("name")
    called = f" ({name!r})" if isinstance(name, str) else ""
    return f"{where(pointer)}{called}: {evidence} is the provider's own tool, not a function; not imported"


def where(pointer: Pointer) -> str:
    """`tools[2]`, `toolConfig.tools[0]`: a pointer as a reader of the file names the place."""
    text = ""
    for part in pointer:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return f"tools{text}" if text.startswith("[") else text or "the file"
