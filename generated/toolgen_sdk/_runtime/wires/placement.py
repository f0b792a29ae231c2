# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Content a wire cannot hold where it stands: moved into a user message after its turn, or dropped, each with a note.

The table says which part types each role takes on a wire, as the official SDK's request types spell it: OpenAI's
chat tool message takes text parts only and its assistant message text only (reasoning goes in a field of its
own, or nowhere), while its user message takes images, audio and files; a Responses assistant item holds text
and reasoning only. A part its role cannot hold but a user message can is moved into one user message right after
the turn (after the tool results that follow an assistant message, or after the batch of tool results), behind a
text naming where it came from. Reasoning that no role but the assistant's holds is dropped. Anything else stays
where it is, for the encoder to refuse by name (audio on Responses). The encoder, the conversion notes and a
run's `note` events (placement_notes, through the model client) all call `place`, so the body and its notes agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_TEXT = frozenset({"text"})
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
    }
)
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


@dataclass(frozen=True)
class Placed:
    """The messages as a wire holds them, a note per part moved or dropped, and for each message the index of
    the message it came from (for a user message made to carry moved parts, the first message it carries from)."""

    messages: list[dict[str, Any]]
    notes: tuple[str, ...]
    origin: tuple[int, ...]
    # Per placed message whose parts moved or were dropped, the index each kept part had.
    kept: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

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
            kept = self.kept.get(index)
            if part is not None and kept is not None and int(part.group(1)) < len(kept):
                rest = f"/content/{kept[int(part.group(1))]}" + rest[part.end() :]
            yield self.pointer(index) + rest


def place(messages: list[dict[str, Any]], wire: str) -> Placed:
    """`messages` with every part `wire` cannot hold where it stands moved or dropped (see the module docstring)."""
    held = _HELD.get(wire)
    if held is None or not any(_misplaced(m, held) for m in messages):
        return Placed(messages, (), tuple(range(len(messages))))
    out: list[dict[str, Any]] = []
    origin: list[int] = []
    notes: list[str] = []
    carried: list[dict[str, Any]] = []
    first = 0
    positions: dict[int, tuple[int, ...]] = {}
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        role = message.get("role")
        if role != "tool" and carried:
            out.append({"role": "user", "content": carried})
            origin.append(first)
            carried = []
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name"))
        content = message.get("content")
        if not isinstance(content, list) or not _misplaced(message, held):
            out.append(message)
            origin.append(i)
            continue
        allowed = held.get(str(role), _TEXT)
        kept: list[Any] = []
        where_kept: list[int] = []
        moved: list[dict[str, Any]] = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            at = f"/messages/{i}/content/{j}"
            where = _WHERE.get(str(role), f"a {role} message")
            if kind in allowed or not isinstance(kind, str):
                kept.append(part)
                where_kept.append(j)
            elif kind in held["user"]:
                moved.append(part)
                notes.append(
                    f"{at}: {wire} takes no {kind} in {where}; moved to a user message after "
                    f"{'the tool results' if role == 'tool' else 'this turn'}, behind a text naming "
                    f"{'its call' if role == 'tool' else 'where it came from'}"
                )
            elif kind == "reasoning":
                notes.append(
                    f"{at}: {wire} has no place for this reasoning part in {where}; dropped"
                )
            else:
                kept.append(part)
                where_kept.append(j)
        if moved:
            first = first if carried else i
            carried.append({"type": "text", "text": _label(message, names)})
            carried.extend(moved)
        positions[len(out)] = tuple(where_kept)
        out.append(_with_content(message, kept))
        origin.append(i)
    if carried:
        out.append({"role": "user", "content": carried})
        origin.append(first)
    return Placed(out, tuple(notes), tuple(origin), MappingProxyType(positions))


def placement_notes(messages: list[dict[str, Any]], wire: str) -> tuple[str, ...]:
    """The notes `place` gives for `messages` on `wire`: what its encoder moves or drops. A scan of the parts when
    nothing is out of place (the common case), which builds nothing."""
    held = _HELD.get(wire)
    if held is None or not any(_misplaced(m, held) for m in messages):
        return ()
    return place(messages, wire).notes


def _misplaced(message: Mapping[str, Any], held: Mapping[str, frozenset[str]]) -> bool:
    content = message.get("content")
    if not isinstance(content, list):
        return False
    allowed = held.get(str(message.get("role")), _TEXT)
    return any(
        isinstance(part, dict)
        and isinstance(part.get("type"), str)
        and part["type"] not in allowed
        and (part["type"] in held["user"] or part["type"] == "reasoning")
        for part in content
    )


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
