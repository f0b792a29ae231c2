# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Inline media whatever wire it came from: a base64 `data:` URL read as the data and media type it holds.

Chat-style wires send inline images as `data:` URLs, which decode to a part with that `url`; wires that take
inline bytes in a field of their own (Anthropic, Gemini, Bedrock, Interactions) refuse a `data:` URL as a URL.
Ollama sends images as bare base64 without a type; the type of an image is then read off its first bytes.
`url_type` names the MIME type of a URL by its extension (Gemini's encoder, and placement.py, which must know
whether Gemini can send a URL before its encoder is asked to).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

# The base64 of the first bytes of each image format the providers take.
_IMAGE_MAGIC = (
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
)


def inline(part: Mapping[str, Any]) -> Mapping[str, Any]:
    """`part` with a base64 `data:` URL as `data` and `media_type`, and an untyped inline image typed by its
    first bytes; any other part as it is."""
    url = part.get("url")
    if not isinstance(url, str) or not url.startswith("data:"):
        data = part.get("data")
        if (
            part.get("type") == "image"
            and "media_type" not in part
            and isinstance(data, str)
        ):
            for magic, media_type in _IMAGE_MAGIC:
                if data.startswith(magic):
                    return {**part, "media_type": media_type}
        return part
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return part
    out = {key: value for key, value in part.items() if key != "url"}
    out["data"] = data
    if head[5:-7]:
        out["media_type"] = head[5:-7]
    return out


# The base64 of the first bytes of the two audio formats OpenAI's inputs take: RIFF (WAV), an ID3 tag or an MPEG
# frame sync (MP3).
_AUDIO_MAGIC = (
    ("UklGR", "wav"),
    ("SUQz", "mp3"),
    ("//s", "mp3"),
    ("//M", "mp3"),
    ("//I", "mp3"),
    ("//o", "mp3"),
)
_AUDIO_NAMES = MappingProxyType(
    {
        "wav": "wav",
        "wave": "wav",
        "x-wav": "wav",
        "vnd.wave": "wav",
        "mp3": "mp3",
        "mpeg": "mp3",
        "mpeg3": "mp3",
        "x-mpeg-3": "mp3",
    }
)


def audio_format(part: Mapping[str, Any]) -> str | None:
    """`wav` or `mp3` for an audio part, from its `format` (a bare name or a media type) or, without one, from
    its first bytes; None for any other format."""
    given = part.get("format")
    if isinstance(given, str):
        return _AUDIO_NAMES.get(given.lower().removeprefix("audio/"))
    data = part.get("data")
    if isinstance(data, str):
        for magic, name in _AUDIO_MAGIC:
            if data.startswith(magic):
                return name
    return None


# MIME types by file extension, for a URL that names none (Gemini refuses a fileData without one): a fixed table, so
# every machine sends the same body.
_TYPES_BY_EXTENSION = MappingProxyType(
    {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "webp": "image/webp",
        "gif": "image/gif",
        "heic": "image/heic",
        "heif": "image/heif",
        "pdf": "application/pdf",
        "txt": "text/plain",
        "mp3": "audio/mp3",
        "wav": "audio/wav",
        "mp4": "video/mp4",
    }
)


def url_type(url: str) -> str | None:
    """The MIME type a URL's path names by its extension (query and fragment aside), if the table knows it."""
    if url.startswith("data:"):
        head = url[5:].split(";", 1)[0].split(",", 1)[0]
        return head or None
    path = url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
    extension = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return _TYPES_BY_EXTENSION.get(extension)
