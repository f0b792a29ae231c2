# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""MCP content blocks as canonical content parts and back: images, audio and resources as content, not JSON text.

From a server (`tool_result`, `parts_from_mcp`), checked as a peer's data is, never raising:

- `text` is a text part; `image` an image part when its data is base64 of a PNG, JPEG, GIF or WebP (the bytes
  name the type: the types every wire that takes images takes), `audio` an audio part;
- `resource` (an embedded resource) is a text part headed by its URI, for text, or for a blob that is text
  (a text/*, JSON, XML, YAML or SVG type, or no type, and UTF-8); for an image, audio or PDF blob the header
  and the part; any other blob is a note (no wire shows a model arbitrary bytes);
- `resource_link` is a text line naming the link (name, URI, type, size, description): the model cannot open
  a URI of the server's, and a provider fetching `file://` or `demo://` would fail the request;
- anything else (a block of a type this client does not read, data that is not base64, a type that is no media
  type, an image no model is shown) is a text note saying what was left out and why.

A result of text alone stays one string, as before. A result with other parts reaches the model as a list of
parts (`ContentParts`), which each wire carries where it can: in the tool result (Anthropic, Responses,
Bedrock), moved to a user message after the tool results (OpenAI chat), or noted as dropped (Gemini, Ollama);
see wires/placement.py and wires/losses.py. Where a tool has `structuredContent`, it stays the result (checked
and served as before), and a text block that is its JSON is taken as its serialization, as the spec asks
servers to send (or, for an object of one field, that field's value: the Python SDK's wrapped results); every
other block (a text that says something else, an image) follows its JSON as parts, so nothing beside structured
data is lost. An error result is read as text (`error_text`), its structured content's JSON after it.

To a client (`mcp_from_parts`): text, image and audio parts are their MCP blocks; a file with data is an
embedded blob resource (URI `toolgen://attachment/<index>/<filename>`), an image or file by URL a resource link;
anything else its JSON as text. An image's `detail` hint has no MCP field and is not sent.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..tools.guards import cut_text, sendable
from ..tools.outcomes import ContentParts, default_converter
from ..wires.media import audio_format, inline

# The first bytes of the image types all image-taking wires take, and of a PDF.
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_PDF_MAGIC = b"%PDF-"
# RFC 6838: a type and a subtype of at most 127 characters each; parameters after `;` are not looked at.
_MEDIA_TYPE = re.compile(
    r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
)
_TEXT_TYPES = frozenset(
    {
        *("application/json", "application/xml", "application/javascript"),
        *("application/yaml", "application/x-yaml", "application/toml"),
        *("application/sql", "application/x-sh", "image/svg+xml"),
    }
)
_AUDIO_TYPES = MappingProxyType({"wav": "audio/wav", "mp3": "audio/mpeg"})
# How much of a peer's name, URI or description a note quotes.
_NAME_CHARS = 200
_LONG_CHARS = 2000


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": sendable(text)}


def _quoted(value: Any, limit: int = 60) -> str:
    """What a peer sent, for a note: a string's repr, any other value's JSON (it came as JSON), cut short."""
    if isinstance(value, str):
        return repr(cut_text(value, limit))
    return cut_text(_json_of(value), limit)


def _size(count: int) -> str:
    return f"{count:,} byte{'s' if count != 1 else ''}"


def _media_type(value: Any) -> str | None:
    """`value` as a lowercase media type without parameters; None when it is none (absent, not text, too long)."""
    if not isinstance(value, str) or len(value) > 1000:
        return None
    bare = value.partition(";")[0].strip().lower()
    return bare if _MEDIA_TYPE.fullmatch(bare) else None


def _decoded(data: Any) -> tuple[str, bytes] | str:
    """(standard base64, its bytes) of a block's data, or why it has none: whitespace, missing padding and the
    URL-safe alphabet are forgiven, since wires need the standard form and servers write all three."""
    if not isinstance(data, str):
        return "no data" if data is None else f"data that is not text ({_quoted(data)})"
    clean = "".join(data.split()).translate(str.maketrans("-_", "+/"))
    if not clean:
        return "no data"
    clean += "=" * (-len(clean) % 4)
    try:
        return clean, base64.b64decode(clean, validate=True)
    except (binascii.Error, ValueError):
        return f"data that is not base64 ({_quoted(data)})"


def _image_type(raw: bytes) -> str | None:
    for magic, media_type in _IMAGE_MAGIC:
        if raw.startswith(magic):
            return media_type
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _as_text(raw: bytes, media_type: str | None) -> str | None:
    """The bytes as text, when their type is a text type (or not given) and they are UTF-8."""
    texty = media_type is None or (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )
    if not texty:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if media_type is not None or "\x00" not in text else None


def _note(what: str, why: str) -> dict[str, Any]:
    return _text(f"[{what}: {why}; left out]")


def _image(block: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    decoded = _decoded(block.get("data"))
    if isinstance(decoded, str):
        return [_note(what, f"it has {decoded}")]
    return _image_of(*decoded, block.get("mimeType"), what)


def _image_of(data: str, raw: bytes, declared: Any, what: str) -> list[dict[str, Any]]:
    found = _image_type(raw)
    if found is None:
        shown = "no mimeType" if declared is None else _quoted(declared)
        kind = _media_type(declared) or f"an unnamed type ({shown})"
        why = f"its {_size(len(raw))} are {kind}, not PNG, JPEG, GIF or WebP, the images models are shown"
        return [_note(what, why)]
    return [{"type": "image", "data": data, "media_type": found}]


def _audio(block: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    decoded = _decoded(block.get("data"))
    if isinstance(decoded, str):
        return [_note(what, f"it has {decoded}")]
    return _audio_of(*decoded, _media_type(block.get("mimeType")), what)


def _audio_of(
    data: str, raw: bytes, declared: str | None, what: str
) -> list[dict[str, Any]]:
    subtype = (
        declared.partition("/")[2]
        if declared and declared.startswith("audio/")
        else None
    )
    known = audio_format({"format": subtype} if subtype else {"data": data})
    audio_name = known or subtype
    if audio_name is None:
        why = f"its {_size(len(raw))} are of no audio type it names or shows"
        return [_note(what, why)]
    return [{"type": "audio", "data": data, "format": audio_name}]


def _filename(uri: Any) -> str | None:
    """The last segment of a URI's path, as a file name; None without one."""
    if not isinstance(uri, str):
        return None
    try:
        path = urllib.parse.urlsplit(uri[:_LONG_CHARS]).path
    except ValueError:  # a malformed URI (an unclosed IPv6 bracket) names no file
        return None
    name = urllib.parse.unquote(path.rpartition("/")[2])
    return sendable(name) if name else None


def _resource(block: Mapping[str, Any]) -> list[dict[str, Any]]:
    resource = block.get("resource")
    if not isinstance(resource, Mapping):
        why = (
            "it holds no resource"
            if resource is None
            else f"its resource is no JSON object ({_quoted(resource)})"
        )
        return [_note("an MCP resource block", why)]
    uri = resource.get("uri")
    uri_text = cut_text(uri, _LONG_CHARS) if isinstance(uri, str) else "(no URI)"
    declared = _media_type(resource.get("mimeType"))
    header = f"[MCP resource {uri_text}{f', {declared}' if declared else ''}]"
    text = resource.get("text")
    if isinstance(text, str):
        return [_text(f"{header}\n{text}")]
    what = f"the MCP resource {uri_text}"
    if "blob" not in resource:
        why = (
            "it has neither text nor a blob"
            if text is None
            else f"its text is not text ({_quoted(text)})"
        )
        return [_note(what, why)]
    decoded = _decoded(resource.get("blob"))
    if isinstance(decoded, str):
        return [_note(what, f"its blob is {decoded}")]
    data, raw = decoded
    if _image_type(raw) is not None:
        return [_text(header), *_image_of(data, raw, declared, what)]
    if declared is not None and declared.startswith("audio/"):
        return [_text(header), *_audio_of(data, raw, declared, what)]
    if raw.startswith(_PDF_MAGIC):
        file = {"type": "file", "data": data, "media_type": "application/pdf"}
        name = _filename(uri)
        return [_text(header), {**file, "filename": name} if name else file]
    as_text = _as_text(raw, declared)
    if as_text is not None:
        return [_text(f"{header}\n{as_text}")]
    kind = declared or "bytes of no named type"
    return [
        _note(what, f"its {_size(len(raw))} of {kind} are nothing a model is shown")
    ]


def _link(block: Mapping[str, Any]) -> dict[str, Any]:
    fields = {
        key: cut_text(
            block[key], _LONG_CHARS if key in ("uri", "description") else _NAME_CHARS
        )
        for key in ("name", "title", "uri", "description")
        if isinstance(block.get(key), str) and block[key]
    }
    name = fields.get("name", "(unnamed)")
    title = fields.get("title")
    line = (
        f"[MCP resource link: {name}{f' ({title})' if title and title != name else ''}"
    )
    line += f" <{fields.get('uri', '(no URI)')}>"
    declared = _media_type(block.get("mimeType"))
    if declared:
        line += f", {declared}"
    size = block.get("size")
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        line += f", {_size(size)}"
    line += "]"
    if "description" in fields:
        line += f" {fields['description']}"
    return _text(line)


def _plain(block: Any) -> Mapping[str, Any] | None:
    """A block as JSON data, whether the SDK's model or data already."""
    if isinstance(block, Mapping):
        return block
    dump = getattr(block, "model_dump", None)
    if not callable(dump):
        return None
    try:
        data = dump(mode="json", by_alias=True, exclude_none=True)
    except Exception:  # noqa: BLE001 - a block that cannot dump itself is reported, not raised
        return None
    return data if isinstance(data, Mapping) else None


def _unknown(block: Any, data: Mapping[str, Any] | None) -> dict[str, Any]:
    if data is None:
        # A JSON value is quoted; an object the SDK made that cannot be dumped is named by its class.
        json_value = block is None or isinstance(block, (str, int, float, list, tuple))
        shown = _quoted(block) if json_value else type(block).__name__
        return _note("an MCP content block", f"it is no JSON object ({shown})")
    shown = _json_of(data)
    kind = data.get("type")
    named = "without a type" if kind is None else f"of type {_quoted(kind)}"
    return _text(
        f"[an MCP content block {named}, which this client does not read: "
        f"{cut_text(shown, _LONG_CHARS)}]"
    )


def _converted(blocks: Iterable[Any]) -> list[tuple[bool, dict[str, Any]]]:
    """Each block's parts, with whether the part is a text block's text (the rest are media or notes)."""
    out: list[tuple[bool, dict[str, Any]]] = []
    for block in blocks:
        data = _plain(block)
        kind = data.get("type") if data is not None else None
        if data is None:
            out.append((False, _unknown(block, data)))
        elif kind == "text":
            text = data.get("text")
            part = (
                _text(text)
                if isinstance(text, str)
                else _note("an MCP text block", _not_text(data))
            )
            out.append((isinstance(text, str), part))
        elif kind == "image":
            out.extend((False, p) for p in _image(data, "an MCP image block"))
        elif kind == "audio":
            out.extend((False, p) for p in _audio(data, "an MCP audio block"))
        elif kind == "resource":
            out.extend((False, p) for p in _resource(data))
        elif kind == "resource_link":
            out.append((False, _link(data)))
        else:
            out.append((False, _unknown(block, data)))
    return out


def _not_text(block: Mapping[str, Any]) -> str:
    if "text" not in block:
        return "it has no text"
    return f"its text is not text ({_quoted(block['text'])})"


def _blocks(blocks: Any) -> Sequence[Any]:
    return blocks if isinstance(blocks, (list, tuple)) else ()


def parts_from_mcp(blocks: Any) -> list[dict[str, Any]]:
    """Canonical content parts of MCP content blocks (the SDK's models or their JSON); never raises."""
    return [part for _, part in _converted(_blocks(blocks))]


def text_from_mcp(blocks: Any) -> str:
    """The blocks as one text (for an error result): the text parts, and a line saying what each other part is."""
    lines = []
    for part in parts_from_mcp(blocks):
        if part["type"] == "text":
            lines.append(part["text"])
        else:
            lines.append(f"[{describe_part(part)}]")
    return "\n".join(lines)


def describe_part(part: Mapping[str, Any]) -> str:
    """A few words for a media part: its kind, type and size."""
    data = part.get("data")
    count = (
        len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
        if isinstance(data, str)
        else None
    )
    size = f", {_size(count)}" if count is not None else ""
    kind = part.get("media_type") or part.get("format") or ""
    return f"{part.get('type')}{f' {kind}' if kind else ''}{size}"


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):  # no JSON: a text that says something else
        return False


def _serializes(part: Mapping[str, Any], structured: Any) -> bool:
    """Whether a text block's text is the structured content written out: its JSON (what the spec asks servers
    to send), or, for an object of one field, that field's value (the Python SDK wraps a tool's plain value as
    {"result": value} and sends the value as the text)."""
    text = part["text"]
    if _same_json(text, structured):
        return True
    if isinstance(structured, Mapping) and len(structured) == 1:
        (value,) = structured.values()
        return text == value or _same_json(text, value)
    return False


def _json_of(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return "(its JSON could not be written)"


def error_text(blocks: Any, structured: Any = None) -> str:
    """An error result as the text the model reads: text_from_mcp's, then the structured content's JSON when
    the server sent some and no text block is that JSON already (a code or a retry time is the model's to see)."""
    text = text_from_mcp(blocks)
    if structured is None or any(
        from_text and _serializes(part, structured)
        for from_text, part in _converted(_blocks(blocks))
    ):
        return text
    shown = _json_of(structured)
    return f"{text}\n{shown}" if text else shown


def tool_result(blocks: Any, structured: Any = None) -> Any:
    """An MCP tool result as a handler's return value: the structured content, text, or ContentParts (see the
    module docstring for how the three combine)."""
    converted = _converted(_blocks(blocks))
    if structured is not None:
        # A text block that is not the structured content's JSON says something else (a warning, a caption).
        extra = [
            part
            for from_text, part in converted
            if not (from_text and _serializes(part, structured))
        ]
        if not extra:
            return structured
        try:
            text = default_converter(structured)
        except (TypeError, ValueError):
            # Data JSON cannot hold: the registry says what is wrong with it, as for any result.
            return structured
        head = text if isinstance(text, list) else [_text(text)]
        return ContentParts([*head, *extra], value=structured)
    parts = [part for _, part in converted]
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return ContentParts(parts)


# ---- canonical parts to MCP blocks ----


def _json_text(part: Any) -> dict[str, Any]:
    try:
        text = json.dumps(part, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(part)
    return _text(text)


def _audio_type(part: Mapping[str, Any]) -> str:
    known = audio_format(part)
    if known is not None:
        return _AUDIO_TYPES[known]
    given = _media_type(part.get("format"))
    if given is not None:
        return given
    if isinstance(part.get("format"), str):
        return _media_type(f"audio/{part['format']}") or "application/octet-stream"
    return "application/octet-stream"


def _sent(value: Any) -> str:
    return sendable(value) if isinstance(value, str) else ""


def _block(part: Any, index: int) -> dict[str, Any]:
    if not isinstance(part, Mapping):
        return _json_text(part)
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return _text(part["text"])
    held = inline(part) if kind in ("image", "file") else part
    data, url = held.get("data"), held.get("url")
    media_type = _media_type(held.get("media_type"))
    if kind == "image" and isinstance(data, str):
        return {
            "type": "image",
            "data": _sent(data),
            "mimeType": media_type or "application/octet-stream",
        }
    if kind == "audio" and isinstance(data, str):
        return {"type": "audio", "data": _sent(data), "mimeType": _audio_type(part)}
    filename = held.get("filename")
    named = _sent(filename) if isinstance(filename, str) and filename else None
    if kind == "file" and isinstance(data, str):
        uri = f"toolgen://attachment/{index}/{urllib.parse.quote(named or 'file', safe='')}"
        resource = {"uri": uri, "blob": _sent(data)}
        if media_type:
            resource["mimeType"] = media_type
        return {"type": "resource", "resource": resource}
    if kind in ("image", "file") and isinstance(url, str) and url:
        link = {"type": "resource_link", "uri": _sent(url), "name": named or kind}
        return {**link, "mimeType": media_type} if media_type else link
    return _json_text(part)


def mcp_from_parts(parts: Iterable[Any]) -> list[dict[str, Any]]:
    """MCP content blocks (JSON data) of canonical content parts; never raises."""
    return [_block(part, index) for index, part in enumerate(parts)]
