# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a request loses on its way to another wire: one note per field the target cannot carry.

`encode_request_noted` and `convert_request_noted` return the body and its notes, as `export_tools` returns tool
definitions with theirs. Three kinds of loss are found:

- body fields of the wire the request was decoded from that no canonical field or portable setting took (`seed`
  on a wire without one, `logprobs`, `service_tier`), and message or part fields kept only for that wire;
- portable settings (`Request.extras["settings"]`) the target does not write back as they were: the body is
  decoded again with the target's own codec and compared;
- canonical content that does not survive the target's round trip (an image's `detail`, a tool's `strict`, an
  empty description), found the same way, plus the tool-export notes.

Fields that only steer the transport (`stream`, `stream_options`) are not losses: each client sets them for its
own endpoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from .canonical import Request, parts_of
from .codecs import codec, decode, encode_request
from .export import export_tools
from .placement import place
from .settings_table import wire_default
from .table import BY_NAME, canonical_name
from .table import wire as wire_row

# Per wire sub-package: the body fields (`key`, or `container.key` one level in) its portable settings are read from.
_SETTING_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "openai_chat": frozenset(
            {
                *("max_completion_tokens", "max_tokens", "temperature", "top_p"),
                *("stop", "tool_choice", "function_call", "parallel_tool_calls"),
                *("response_format", "seed", "random_seed", "user"),
                *("maxCompletionTokens", "maxTokens", "topP", "toolChoice"),
                *("functionCall", "parallelToolCalls", "responseFormat"),
            }
        ),
        "responses": frozenset(
            {
                *("max_output_tokens", "temperature", "top_p", "tool_choice"),
                *("parallel_tool_calls", "text.format", "user"),
            }
        ),
        "anthropic": frozenset(
            {
                *("max_tokens", "temperature", "top_p", "stop_sequences"),
                *("tool_choice", "output_config.format", "metadata.user_id"),
            }
        ),
        "gemini": frozenset(
            f"{container}.{key}"
            for container, keys in (
                (
                    "generationConfig",
                    (
                        *("maxOutputTokens", "temperature", "topP", "stopSequences"),
                        *("responseMimeType", "responseJsonSchema", "responseSchema"),
                        "seed",
                    ),
                ),
                (
                    "generation_config",
                    (
                        *(
                            "max_output_tokens",
                            "temperature",
                            "top_p",
                            "stop_sequences",
                        ),
                        *("response_mime_type", "response_json_schema"),
                        *("response_schema", "seed"),
                    ),
                ),
                ("toolConfig", ("functionCallingConfig",)),
                ("tool_config", ("function_calling_config",)),
            )
            for key in keys
        ),
        "bedrock": frozenset(
            {
                *("inferenceConfig.maxTokens", "inferenceConfig.temperature"),
                *("inferenceConfig.topP", "inferenceConfig.stopSequences"),
                *("toolConfig.toolChoice", "outputConfig.textFormat"),
            }
        ),
        "cohere": frozenset(
            {
                *("max_tokens", "temperature", "p", "stop_sequences"),
                *("tool_choice", "response_format", "seed"),
            }
        ),
        "ollama": frozenset(
            {
                *("options.num_predict", "options.temperature", "options.top_p"),
                *("options.stop", "options.seed", "format"),
            }
        ),
        "interactions": frozenset(
            {
                *("generation_config.max_output_tokens", "generation_config.top_p"),
                *("generation_config.temperature", "generation_config.stop_sequences"),
                *("generation_config.tool_choice", "generation_config.seed"),
                *("response_format", "response_mime_type"),
            }
        ),
    }
)
_TRANSPORT_FIELDS = frozenset({"stream", "stream_options", "streamOptions"})
# The canonical tool definition keys a request body carries; the rest (title, outputSchema, returnDirect,
# timeout, requiresApproval, meta) steer this package, not the provider, on every wire alike.
_TOOL_WIRE_KEYS = ("name", "description", "inputSchema", "strict")
# Keys a wire keeps on a part or call entry only as stream bookkeeping.
_BOOKKEEPING = frozenset({"index"})


@dataclass(frozen=True)
class Encoded:
    """A request body for one wire, and one sentence per field that wire could not carry."""

    wire: str
    body: dict[str, Any]
    notes: tuple[str, ...]


def encode_request_noted(request: Request, wire: str) -> Encoded:
    """`request` as a body of `wire`, with a note for every field the wire has no place for."""
    name = canonical_name(wire)
    body = encode_request(request, name)
    return Encoded(name, body, request_losses(request, name, body))


def convert_request_noted(
    body: Any, to_wire: str, from_wire: str | None = None
) -> Encoded:
    """A request body of one wire as the same request in another, with its notes."""
    decoded = decode(body, from_wire, "request")
    assert isinstance(decoded, Request)
    return encode_request_noted(decoded, to_wire)


def request_losses(
    request: Request, wire: str, body: dict[str, Any]
) -> tuple[str, ...]:
    """The notes for `request` encoded to `wire` as `body` (see the module docstring)."""
    target = canonical_name(wire)
    notes: list[str] = []
    for source in _sources(request):
        if source != target:
            notes.extend(_dropped_fields(request, source, target))
    again = codec(target).decode_request(body)
    notes.extend(_setting_losses(request, again, target))
    # Parts the target holds elsewhere are compared where its encoder put them; placement notes each move.
    placed = place(request.messages, target)
    notes.extend(placed.notes)
    moved = replace(request, messages=placed.messages)
    notes.extend(placed.renumber(_content_losses(moved, again, target)))
    if request.tools:
        # The round trip above names a tool's lost `strict` at its pointer already.
        exported = export_tools(request.tools, target, unnoted=("strict",))
        notes.extend(f"{target}: {note}" for note in exported.notes)
    return tuple(dict.fromkeys(notes))


def _sources(request: Request) -> list[str]:
    return [key for key in request.extras if key in BY_NAME and key != "settings"]


def _paths(fields: Mapping[str, Any], settable: frozenset[str]) -> Iterator[str]:
    containers = {path.split(".", 1)[0] for path in settable if "." in path}
    for key, value in fields.items():
        if key in containers and isinstance(value, dict):
            yield from (f"{key}.{inner}" for inner in value)
        else:
            yield key


def _dropped_fields(request: Request, source: str, target: str) -> Iterator[str]:
    kept = request.extras.get(source)
    if not isinstance(kept, dict):
        return
    settable = _SETTING_FIELDS.get(wire_row(source).package, frozenset())
    fields = kept.get("fields")
    fields = fields if isinstance(fields, dict) else {}
    unread = _unread(source, fields, settable)
    for path in _paths(fields, settable):
        if path in unread:
            yield f"{path}: no setting took this {source} value, so {target} does not get it; dropped"
        elif path not in settable and path not in _TRANSPORT_FIELDS:
            yield f"{path}: {target} has no place for this {source} field; dropped"
    raw_tools = kept.get("tools")
    if isinstance(raw_tools, list) and len(raw_tools) > len(request.tools):
        extra = len(raw_tools) - len(request.tools)
        yield f"tools: {extra} {source} tool(s) that are not functions cannot be sent to {target}; dropped"
    for i, message in enumerate(request.messages):
        yield from _message_fields(message, f"/messages/{i}", source, target)


def _read_settings(source: str, fields: Mapping[str, Any]) -> Any:
    """The portable settings `source`'s decoder reads from these body fields (in a body of one message)."""
    probe = Request(
        [{"role": "user", "content": "."}], [], None, {source: {"fields": dict(fields)}}
    )
    wire_codec = codec(source)
    return wire_codec.decode_request(wire_codec.encode_request(probe)).extras.get(
        "settings"
    )


def _without(fields: Mapping[str, Any], path: str) -> dict[str, Any]:
    if path in fields:
        return {name: value for name, value in fields.items() if name != path}
    container, _, key = path.partition(".")
    inner = {name: value for name, value in fields[container].items() if name != key}
    return {**fields, container: inner}


def _unread(
    source: str, fields: Mapping[str, Any], settable: frozenset[str]
) -> set[str]:
    """The settable fields whose value no setting took: a value the decoder does not know (OpenAI's
    `allowed_tools` choice), or one another field overrode (`max_tokens` beside `max_completion_tokens`)."""
    try:
        present = [
            path
            for path in _paths(fields, settable)
            if path in settable and _value(fields, path) is not None
        ]
        if not present:
            return set()
        read = _read_settings(source, fields)
        return {
            path
            for path in present
            if _read_settings(source, _without(fields, path)) == read
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        # Fields this wire's own codec cannot write back: the settings it read stand for them, as before.
        return set()


def _value(fields: Mapping[str, Any], path: str) -> Any:
    if path in fields:
        return fields[path]
    container, _, key = path.partition(".")
    return fields[container].get(key)


def _message_fields(
    message: Mapping[str, Any], pointer: str, source: str, target: str
) -> Iterator[str]:
    extras = message.get("extras")
    kept = extras.get(source) if isinstance(extras, dict) else None
    if not isinstance(kept, dict):
        return
    fields = kept.get("fields")
    for key, value in fields.items() if isinstance(fields, dict) else ():
        if value is not None:
            yield f"{pointer}/{key}: {target} has no place for this {source} field; dropped"
    for group, what in (("parts", "content"), ("calls", "tool_calls")):
        entries = kept.get(group)
        for j, entry in enumerate(entries if isinstance(entries, list) else ()):
            rest = entry.get("rest") if isinstance(entry, dict) else None
            for key in rest if isinstance(rest, dict) else ():
                if key not in _BOOKKEEPING:
                    yield f"{pointer}/{what}/{j}/{key}: {target} has no place for this {source} field; dropped"


def _setting_losses(request: Request, again: Request, target: str) -> Iterator[str]:
    wanted = request.extras.get("settings")
    if not isinstance(wanted, dict):
        return
    got = again.extras.get("settings")
    got = got if isinstance(got, dict) else {}
    for key, value in wanted.items():
        if key not in got:
            default = wire_default(target, key, value)
            if default is None:
                yield f"{key}: {target} has no equivalent setting; dropped"
            else:
                yield f"{key}: {value!r} is {target}'s default, left out of the body: {default}"
        elif got[key] != value:
            detail = _difference(value, got[key])
            yield f"{key}: {target} cannot state it exactly ({detail}); sent as {got[key]!r}"


def _difference(wanted: Any, got: Any) -> str:
    if isinstance(wanted, dict) and isinstance(got, dict):
        lost = [key for key in wanted if key not in got]
        if lost:
            return "no " + ", ".join(f"`{key}`" for key in lost)
    return f"was {wanted!r}"


def _plain(value: Any) -> Any:
    """A canonical value without wire extras, content as parts, inline data as data rather than a `data:` URL:
    what every wire must carry alike."""
    if isinstance(value, dict):
        out = {key: _plain(item) for key, item in value.items() if key != "extras"}
        if "content" in out and "role" in out:
            out["content"] = [_plain(part) for part in parts_of(value.get("content"))]
        url = out.get("url")
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, _, data = url.partition(",")
            del out["url"]
            out.update(media_type=head[5:-7], data=data)
        return out
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _content_losses(request: Request, again: Request, target: str) -> Iterator[str]:
    sent = _plain(request.messages)
    back = _plain(again.messages)
    if len(sent) == len(back):
        for i, (one, other) in enumerate(zip(sent, back, strict=True)):
            yield from _differences(one, other, f"/messages/{i}", target)
    else:
        yield f"/messages: {target} carries {len(sent)} messages as {len(back)}"
    sent_tools = [_sendable(tool) for tool in request.tools]
    back_tools = [_sendable(tool) for tool in again.tools]
    if len(sent_tools) == len(back_tools):
        for i, (one, other) in enumerate(zip(sent_tools, back_tools, strict=True)):
            yield from _differences(one, other, f"/tools/{i}", target)


def _sendable(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What of a tool definition goes on a wire at all: title, output schema and execution policy stay local."""
    return {key: tool[key] for key in _TOOL_WIRE_KEYS if key in tool}


def _differences(sent: Any, back: Any, pointer: str, target: str) -> Iterator[str]:
    if sent == back:
        return
    if isinstance(sent, dict) and isinstance(back, dict):
        for key, value in sent.items():
            if key not in back:
                if value not in (None, "", [], {}) or key == "description":
                    yield f"{pointer}/{key}: {target} has no place for it; dropped"
            else:
                yield from _differences(value, back[key], f"{pointer}/{key}", target)
        return
    if isinstance(sent, list) and isinstance(back, list):
        if len(sent) == len(back):
            for i, (one, other) in enumerate(zip(sent, back, strict=True)):
                yield from _differences(one, other, f"{pointer}/{i}", target)
            return
        missing = [i for i, item in enumerate(sent) if item not in back]
        if len(back) < len(sent) and all(item in sent for item in back):
            for i in missing:
                what = sent[i].get("type") if isinstance(sent[i], dict) else None
                kind = f"this {what} part" if isinstance(what, str) else "this entry"
                yield f"{pointer}/{i}: {target} has no place for {kind}; dropped"
            return
    yield f"{pointer}: {target} cannot carry it as it is (sent {_short(sent)}, it reads back {_short(back)})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
