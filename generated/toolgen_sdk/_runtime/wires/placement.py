# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Content a wire cannot hold where it stands: moved into a user message, dropped, or named in a text, with a note.

The table says which part types each role takes on a wire, as the official SDK's request types spell it: OpenAI's
chat tool message takes text parts only and its assistant message text only (reasoning goes in a field of its
own, or nowhere), while its user message takes images, audio and files; a Responses assistant item holds text
and reasoning only; a Gemini function response and a Cohere tool message hold text, an Ollama tool message text
and images. A role the table does not list for a wire is left to its encoder.

- A part its role cannot hold but a user message can is moved into one user message right after the turn (after
  the tool results that follow an assistant message, or after the batch of tool results), behind a text naming
  where it came from. On Gemini that message joins the turn of the function responses, as a Gemini body holds it.
- Reasoning that no role but the assistant's holds is dropped.
- A part of a tool result that no role of the wire can hold (audio on Anthropic, Responses, Bedrock, Cohere or
  Ollama; a PDF on Cohere or Ollama), or that the wire cannot carry as it is (a file by URL on OpenAI chat, an
  image by URL on Bedrock), is replaced in place by a text naming it, `[audio audio/wav, 70 KB: anthropic takes no
  audio in a tool result or a user message; left out]`: what a server sends never stops a run that could go on.
- On the wires whose tool result is one text (Gemini, Ollama), a result's text parts are joined into one, a line
  break between each, rather than run together: nothing is lost, no note.

Anything else stays where it is, for the encoder to refuse by name (audio in a user message on Responses): that
is what a user set, not what a server sent. The encoders of the wires in the table, the conversion notes
(losses.py) and a run's `note` events (clients/sent_notes.py, through the model client) all call `place`, so the
body and its notes agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .media import audio_format, inline, url_type

_TEXT = frozenset({"text"})
_MEDIA = frozenset({"image", "audio", "file"})
_HELD: Mapping[str, Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "openai-chat": MappingProxyType(
            {
                "system": _TEXT,
                "user": frozenset({"text", "image", "audio", "file"}),
                "assistant": frozenset({"text", "reasoning"}),
                "tool": _TEXT,
            }
        ),
        "openai-responses": MappingProxyType(
            {
                "system": frozenset({"text", "image", "file"}),
                "user": frozenset({"text", "image", "file"}),
                "assistant": frozenset({"text", "reasoning"}),
                "tool": frozenset({"text", "image", "file"}),
            }
        ),
        # Nothing moves here: a user message takes no more than a tool_result does, and the system prompt is a
        # top-level field of text. The encoder leaves reasoning out of user turns and results; this names it.
        "anthropic": MappingProxyType(
            {
                "system": frozenset({"text", "image", "audio", "file", "reasoning"}),
                "user": frozenset({"text", "image", "file"}),
                "assistant": frozenset({"text", "image", "file", "reasoning"}),
                "tool": frozenset({"text", "image", "file"}),
            }
        ),
        # A toolResult holds text, images and documents (ToolResultContentBlock); its encoder leaves reasoning out
        # of user turns.
        "bedrock-converse": MappingProxyType(
            {
                "user": frozenset({"text", "image", "file"}),
                "tool": frozenset({"text", "image", "file"}),
            }
        ),
        # v2 chat: a tool message's content is text (or documents of JSON data); a user message's text and
        # image_url. Thinking blocks in a user message are sent as they were.
        "cohere": MappingProxyType(
            {
                "user": frozenset({"text", "image", "reasoning"}),
                "tool": _TEXT,
            }
        ),
        # A functionResponse holds a JSON object: the result's text. A user turn holds inlineData of any type; its
        # encoder leaves reasoning out.
        "gemini": MappingProxyType(
            {
                "user": frozenset({"text", "image", "audio", "file"}),
                "tool": _TEXT,
            }
        ),
        # Every /api/chat message is `content`, `thinking` and `images` (base64): no audio, no files.
        "ollama": MappingProxyType(
            {
                "user": frozenset({"text", "image", "reasoning"}),
                "tool": frozenset({"text", "image", "reasoning"}),
            }
        ),
    }
)
# Wires whose tool result is one text: a result's text parts are joined, a line break between each.
_ONE_TEXT = frozenset({"gemini", "ollama"})
# Wires where the user message carrying moved parts joins the turn of the results it follows.
_JOINS = frozenset({"gemini"})
_WHERE = MappingProxyType(
    {
        "system": "a system message",
        "assistant": "an assistant message",
        "tool": "a tool result",
    }
)
# What a tool result left with nothing it can hold says, so that the model reads on.
EMPTIED = "(this result's content is in the next user message)"
_POINTER = re.compile(r"^/messages/(\d+)")
_PART = re.compile(r"^/content/(\d+)")
# How much of a URL, file name or file id a text naming a part quotes.
_QUOTED = 80


# ---- what a wire can carry of a part of a kind it takes ----


def _given(part: Mapping[str, Any], wire: str, *keys: str) -> str | None:
    """Why `wire` cannot send `part`, which has none of `keys`; None when it has one."""
    if any(isinstance(part.get(key), str) and part[key] for key in keys):
        return None
    named = " or ".join(f"`{key}`" for key in keys)
    return f"{wire} takes {_a(str(part.get('type')))} given by {named}, which this one lacks"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in ("a", "e", "i", "o", "u") else f"a {kind}"


def _fits_openai_chat(part: Mapping[str, Any]) -> str | None:
    kind = part.get("type")
    if kind == "image":
        return _given(part, "openai-chat", "url", "data")
    if kind == "audio":
        lacks = _given(part, "openai-chat", "data")
        if lacks is None and audio_format(part) is None:
            return "openai-chat takes wav or mp3 audio only"
        return lacks
    return _given(part, "openai-chat", "data", "file_id")


def _fits_responses(part: Mapping[str, Any]) -> str | None:
    if part.get("type") == "image":
        return _given(part, "openai-responses", "url", "data")
    return _given(part, "openai-responses", "data", "url", "file_id")


def _fits_anthropic(part: Mapping[str, Any]) -> str | None:
    return _given(inline(part), "anthropic", "data", "url", "file_id")


_BEDROCK_IMAGES = frozenset({"png", "jpeg", "jpg", "gif", "webp"})
_BEDROCK_DOCUMENTS = frozenset(
    {"application/pdf", "text/plain", "text/markdown", "text/html", "text/csv"}
)


def _fits_bedrock(part: Mapping[str, Any]) -> str | None:
    held, kind = inline(part), part.get("type")
    lacks = _given(held, "bedrock-converse", "data")
    if lacks is not None:
        return lacks
    media = str(held.get("media_type", "")).lower()
    if kind == "image" and media.removeprefix("image/") not in _BEDROCK_IMAGES:
        return "bedrock-converse takes png, jpeg, gif or webp images only"
    if kind == "file" and media not in _BEDROCK_DOCUMENTS:
        return "bedrock-converse takes pdf, txt, md, html or csv documents only"
    return None


def _fits_cohere(part: Mapping[str, Any]) -> str | None:
    return _given(part, "cohere", "url", "data")


def _fits_gemini(part: Mapping[str, Any]) -> str | None:
    held = inline(part)
    if part.get("type") == "audio":
        return _given(held, "gemini", "data")
    lacks = _given(held, "gemini", "data", "url")
    if lacks is not None or isinstance(held.get("data"), str):
        return lacks
    if not held.get("media_type") and url_type(str(held["url"])) is None:
        return "gemini takes a URL only with its MIME type, which neither the part nor the URL names"
    return None


def _fits_ollama(part: Mapping[str, Any]) -> str | None:
    return _given(inline(part), "ollama", "data")


# Per wire: why a part of a kind it takes cannot be sent as it is (None: it can).
_FITS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = MappingProxyType(
    {
        "openai-chat": _fits_openai_chat,
        "openai-responses": _fits_responses,
        "anthropic": _fits_anthropic,
        "bedrock-converse": _fits_bedrock,
        "cohere": _fits_cohere,
        "gemini": _fits_gemini,
        "ollama": _fits_ollama,
    }
)


# ---- placing ----


@dataclass(frozen=True)
class Placed:
    """The messages as a wire holds them, a note per part moved, dropped or replaced, and for each message the
    index of the message it came from (for a user message made to carry moved parts, the first message it
    carries from)."""

    messages: list[dict[str, Any]]
    notes: tuple[str, ...]
    origin: tuple[int, ...]
    # Per placed message whose parts changed: for each part, the (message, part) it came from (None for a text
    # this module wrote, the label of moved parts).
    sources: Mapping[int, tuple[tuple[int, int] | None, ...]] = field(
        default_factory=dict
    )

    def pointer(self, index: int) -> str:
        """The JSON pointer of placed message `index` in the messages given."""
        return f"/messages/{self.origin[index] if index < len(self.origin) else index}"

    def renumber(self, notes: Iterable[str]) -> Iterator[str]:
        """Notes about the placed messages, pointing into the messages given."""
        for note in notes:
            match = _POINTER.match(note)
            if match is None:
                yield note
                continue
            index, rest = int(match.group(1)), note[match.end() :]
            part = _PART.match(rest)
            sources = self.sources.get(index)
            if (
                part is not None
                and sources is not None
                and int(part.group(1)) < len(sources)
            ):
                source = sources[int(part.group(1))]
                if source is not None:
                    yield (
                        f"/messages/{source[0]}/content/{source[1]}"
                        + rest[part.end() :]
                    )
                    continue
            yield self.pointer(index) + rest


def place(messages: list[dict[str, Any]], wire: str) -> Placed:
    """`messages` with every part `wire` cannot hold where it stands moved, dropped or named in a text (see the
    module docstring)."""
    held = _HELD.get(wire)
    if held is None or not any(_misplaced(m, held, wire) for m in messages):
        return Placed(messages, (), tuple(range(len(messages))))
    out: list[dict[str, Any]] = []
    origin: list[int] = []
    notes: list[str] = []
    carried: list[dict[str, Any]] = []
    carried_from: list[tuple[int, int] | None] = []
    first = 0
    sources: dict[int, tuple[tuple[int, int] | None, ...]] = {}
    names: dict[str, str] = {}

    def carry() -> None:
        carrier: dict[str, Any] = {"role": "user", "content": list(carried)}
        if wire in _JOINS:
            carrier["extras"] = {wire: {"joined": True}}
        sources[len(out)] = tuple(carried_from)
        out.append(carrier)
        origin.append(first)
        carried.clear()
        carried_from.clear()

    for i, message in enumerate(messages):
        role = message.get("role")
        if role != "tool" and carried:
            carry()
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name"))
        content = message.get("content")
        if not isinstance(content, list) or not _misplaced(message, held, wire):
            out.append(message)
            origin.append(i)
            continue
        kept: list[Any] = []
        kept_from: list[tuple[int, int] | None] = []
        moved: list[dict[str, Any]] = []
        moved_from: list[tuple[int, int] | None] = []
        for j, part in enumerate(content):
            action, why = _action(part, str(role), held, wire)
            at = f"/messages/{i}/content/{j}"
            where = _WHERE.get(str(role), f"a {role} message")
            if action == "move":
                moved.append(part)
                moved_from.append((i, j))
                notes.append(
                    f"{at}: {wire} takes no {part['type']} in {where}; moved to a user message after "
                    f"{'the tool results' if role == 'tool' else 'this turn'}, behind a text naming "
                    f"{'its call' if role == 'tool' else 'where it came from'}"
                )
            elif action == "drop":
                notes.append(
                    f"{at}: {wire} has no place for this reasoning part in {where}; dropped"
                )
            elif action == "replace":
                named = _describe(part)
                kept.append({"type": "text", "text": f"[{named}: {why}; left out]"})
                kept_from.append((i, j))
                notes.append(
                    f"{at}: {why}; replaced in the result by a text naming it ({named})"
                )
            else:
                kept.append(part)
                kept_from.append((i, j))
        if role == "tool" and wire in _ONE_TEXT:
            kept, kept_from = _joined(kept, kept_from)
        if moved:
            first = first if carried else i
            carried.append({"type": "text", "text": _label(message, names)})
            carried_from.append(None)
            carried.extend(moved)
            carried_from.extend(moved_from)
        sources[len(out)] = tuple(kept_from)
        out.append(_with_content(message, kept))
        origin.append(i)
    if carried:
        carry()
    return Placed(out, tuple(notes), tuple(origin), MappingProxyType(sources))


def placement_notes(messages: list[dict[str, Any]], wire: str) -> tuple[str, ...]:
    """The notes `place` gives for `messages` on `wire`: what its encoder moves, drops or names in a text. A scan
    of the parts when nothing is out of place (the common case), which builds nothing."""
    held = _HELD.get(wire)
    if held is None or not any(_misplaced(m, held, wire) for m in messages):
        return ()
    return place(messages, wire).notes


def _describe(part: Mapping[str, Any]) -> str:
    """A few words naming a media part: its kind, type, name and size, or where it is (`audio audio/wav, 70 KB`)."""
    held = inline(part)
    words = [str(part.get("type"))]
    media = held.get("media_type")
    if part.get("type") == "audio":
        given = part.get("format")
        known = audio_format(part)
        if isinstance(given, str) and given:
            media = given if "/" in given else f"audio/{given}"
        elif known is not None:
            media = {"wav": "audio/wav", "mp3": "audio/mpeg"}[known]
    if isinstance(media, str) and media:
        words.append(_cut(media))
    filename = held.get("filename")
    if isinstance(filename, str) and filename:
        words.append(_cut(filename))
    data, url, file_id = held.get("data"), held.get("url"), held.get("file_id")
    if isinstance(data, str):
        return f"{' '.join(words)}, {_size(data)}"
    if isinstance(url, str):
        return f"{' '.join(words)} at {_cut(url)}"
    if isinstance(file_id, str):
        return f"{' '.join(words)}, file id {_cut(file_id)}"
    return " ".join(words)


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTED else flat[: _QUOTED - 3] + "..."


def _size(data: str) -> str:
    """The size of the bytes base64 `data` holds, as a person reads it."""
    count = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
    if count < 1024:
        return f"{count} byte{'s' if count != 1 else ''}"
    if count < 1024 * 1024:
        return f"{round(count / 1024)} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def _action(
    part: Any, role: str, held: Mapping[str, frozenset[str]], wire: str
) -> tuple[str | None, str]:
    """What becomes of `part` in a message of `role`: None (it stays), "move", "drop" or "replace" (with why)."""
    kind = part.get("type") if isinstance(part, dict) else None
    allowed = held.get(role)
    if allowed is None or not isinstance(kind, str):
        return None, ""
    if kind == "reasoning":
        return (None if kind in allowed else "drop"), ""
    if kind not in _MEDIA:
        return None, ""
    movable = role != "user" and kind in held["user"]
    if role != "tool":
        # What a user set: moved where the wire holds it, else left for the encoder to refuse by name.
        return ("move" if kind not in allowed and movable else None), ""
    if kind not in allowed and not movable:
        return "replace", f"{wire} takes no {kind} in a tool result or a user message"
    why = _FITS[wire](part)
    if why is not None:
        return "replace", why
    return (None if kind in allowed else "move"), ""


def _misplaced(
    message: Mapping[str, Any], held: Mapping[str, frozenset[str]], wire: str
) -> bool:
    content = message.get("content")
    if not isinstance(content, list):
        return False
    role = str(message.get("role"))
    if role == "tool" and wire in _ONE_TEXT and len(content) > 1:
        texts = sum(
            1
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
        if texts > 1:
            return True
    return any(_action(part, role, held, wire)[0] is not None for part in content)


def _joined(
    parts: list[Any], sources: list[tuple[int, int] | None]
) -> tuple[list[Any], list[tuple[int, int] | None]]:
    """`parts` with every text part joined into the first, a line break between each."""
    texts = [
        j
        for j, p in enumerate(parts)
        if isinstance(p, dict) and p.get("type") == "text"
    ]
    if len(texts) < 2:
        return parts, sources
    text = "\n".join(str(parts[j].get("text", "")) for j in texts)
    keep = [j for j in range(len(parts)) if j == texts[0] or j not in texts]
    out = [{"type": "text", "text": text} if j == texts[0] else parts[j] for j in keep]
    return out, [sources[j] for j in keep]


def _label(message: Mapping[str, Any], names: Mapping[str, str]) -> str:
    if message.get("role") == "tool":
        call_id = str(message.get("tool_call_id"))
        name = message.get("name") or names.get(call_id)
        named = f" ({name})" if isinstance(name, str) and name else ""
        return f"The result of tool call {call_id}{named} also holds:"
    if message.get("role") == "assistant":
        return "The assistant's last message also held:"
    return f"The {message.get('role')} message before also held:"


def _with_content(message: Mapping[str, Any], kept: list[Any]) -> dict[str, Any]:
    out = dict(message)
    role = message.get("role")
    if kept:
        out["content"] = kept
    elif role == "assistant":
        out["content"] = None
    elif role == "tool":
        out["content"] = EMPTIED
    else:
        out["content"] = ""
    return out
