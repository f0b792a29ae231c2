# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One choice of an OpenAI chat stream as it accumulates, and how the data its deltas send in pieces is merged."""

from __future__ import annotations

from typing import Any

from ...streams.state import Call

# Call entry keys the state reads itself; every other key is per-call data the body keeps.
_CALL_KEYS = frozenset({"index", "id", "function", "custom"})
_FUNCTION_KEYS = frozenset({"name", "arguments", "input"})
# Text of an indexed reasoning entry that arrives in pieces; its other keys arrive whole.
_PIECEWISE_KEYS = frozenset({"text", "summary"})
AUDIO_PIECES = frozenset({"data", "transcript"})


class Choice:
    """One choice's accumulated message; only the first choice emits events."""

    __slots__ = (
        "calls",
        "content",
        "extra",
        "finish",
        "function_call",
        "index",
        "last",
        "logprobs",
        "logprobs_key",
        "parts",
        "primary",
        "reasoning",
        "reasoning_key",
        "refusal",
        "role",
        "saw_content",
        "slots",
    )

    def __init__(self, index: int, primary: bool) -> None:
        self.index = index
        self.primary = primary
        self.role: str | None = None
        self.content: list[str] = []
        self.saw_content = False
        # Typed content chunks (Mistral's thinking/text arrays): [type, fragments or the raw chunk].
        self.parts: list[list[Any]] | None = None
        self.reasoning: list[str] = []
        self.reasoning_key = "reasoning_content"
        self.refusal: list[str] = []
        self.calls: list[Call] = []
        self.slots: dict[Any, Call] = {}
        self.last: Call | None = None
        self.function_call: Call | None = None
        self.finish: str | None = None
        self.logprobs: list[Any] = []
        # The chunks carried a `logprobs` key (null when not asked for); the whole response carries it too.
        self.logprobs_key = False
        self.extra: dict[str, Any] = {}


def add_part(parts: list[list[Any]], kind: str, text: str) -> None:
    if parts and parts[-1][0] == kind:
        parts[-1][1].append(text)
    else:
        parts.append([kind, [text]])


def empty(value: Any) -> bool:
    """A placeholder value: what a preamble chunk puts where it has nothing yet."""
    if type(value) is int:
        return value == 0
    return value is None or value == "" or value == [] or value == {}


def _merge_value(target: dict[str, Any], key: str, value: Any) -> None:
    """Later deltas fill in or replace a call's data; an empty repeat (Qwen's `id: ""`) changes nothing."""
    have = target.get(key)
    if isinstance(have, dict) and isinstance(value, dict):
        merged = dict(have)
        for inner, inner_value in value.items():
            _merge_value(merged, inner, inner_value)
        target[key] = merged
    elif key not in target or not empty(value):
        target[key] = value


def keep_call_data(call: Call, entry: dict[str, Any], function: Any) -> None:
    extra = call.extra if call.extra is not None else {}
    for key, value in entry.items():
        if key not in _CALL_KEYS:
            _merge_value(extra, key, value)
    if isinstance(function, dict):
        # A custom tool's entry holds its name and input under `custom` (see OpenAIChatState._tool_call).
        holder = "custom" if function is entry.get("custom") else "function"
        for key, value in function.items():
            if key not in _FUNCTION_KEYS:
                _merge_value(extra.setdefault(holder, {}), key, value)
    call.extra = extra or None


def merge_indexed(entries: list[Any], deltas: list[Any]) -> None:
    """Indexed entries merged by `index`: pieces of text joined, every other key as its latest non-empty value."""
    for delta in deltas:
        index = delta.get("index") if isinstance(delta, dict) else None
        same = next(
            (
                entry
                for entry in entries
                if index is not None
                and isinstance(entry, dict)
                and entry.get("index") == index
            ),
            None,
        )
        if same is None:
            entries.append(dict(delta) if isinstance(delta, dict) else delta)
            continue
        merge_entry(same, delta, _PIECEWISE_KEYS)


def merge_entry(
    same: dict[str, Any], delta: dict[str, Any], pieces: frozenset[str]
) -> None:
    """One delta into the entry it continues: `pieces` keys joined, the others as their latest non-empty value."""
    for key, value in delta.items():
        have = same.get(key)
        if key in pieces and isinstance(have, str) and isinstance(value, str):
            same[key] = have + value
        elif key not in same or not empty(value):
            same[key] = value
