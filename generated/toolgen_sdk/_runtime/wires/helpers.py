# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Helpers the wire codecs share: malformed-input errors, argument text, settings, extras and turn grouping.

The conventions they keep are the canonical ones (canonical.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from json.encoder import encode_basestring
from types import MappingProxyType
from typing import Any, NoReturn

from ..schema.sentences import expected as sentence
from .canonical import Request, Response

# Helpers the wire modules share. Decoded values share structure with the body they came from and encoded bodies
# share structure with the canonical values: nothing is deep-copied, so treat both as read-only.

_ABSENT: Any = object()


def fail(pointer: str, expected: str, got: Any = _ABSENT) -> NoReturn:
    """Reject malformed input: a JSON pointer to the bad value, what was expected there and, when known, what
    was there instead (the sentence shape of every validation problem)."""
    if got is _ABSENT:
        raise ValueError(f"{pointer or '/'}: expected {expected}")
    raise ValueError(f"{pointer or '/'}: {sentence(expected, got)}")


def as_dict(value: Any, pointer: str, expected: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        fail(pointer, expected, value)
    return value


def as_list(value: Any, pointer: str, expected: str = "an array") -> list[Any]:
    if not isinstance(value, list):
        fail(pointer, expected, value)
    return value


def as_str(value: Any, pointer: str, expected: str = "a string") -> str:
    if not isinstance(value, str):
        fail(pointer, expected, value)
    return value


# json.dumps with these options builds a new encoder on every call; this one is configured once, never changed.
# NaN and infinity are refused: arguments are JSON text, and JSON has no words for them.
_ARGS_JSON = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
)
# json's C encoder with the options json.dumps passes it, but no table of the containers being written: a
# circular value then runs out of recursion, and the encoder above says what json.dumps says. None without C.
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_ENCODE_ARGS: Any = (
    None
    if _C_ENCODER is None
    else _C_ENCODER(
        None, _ARGS_JSON.default, encode_basestring, None, ":", ",", False, False, False
    )
)
# The scanner of a default decoder, as json.loads has its own: (value, end) of the JSON value at an index.
_SCAN_JSON: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def args_text(value: Any) -> str:
    """Canonical arguments text for a wire that sends arguments as a JSON value."""
    if _ENCODE_ARGS is not None:
        try:
            return "".join(_ENCODE_ARGS(value, 0))
        except RecursionError:
            pass  # circular, or nested too deep: json.dumps's own check and error below
    text: str = _ARGS_JSON.encode(value)
    return text


def args_object(arguments: str, pointer: str) -> dict[str, Any]:
    """Arguments text as the object wires like Anthropic and Gemini need; empty text and `null` mean no arguments."""
    if not arguments or arguments.isspace():
        return {}
    try:
        # The scanner json.loads runs, without the layers around it that cost more than small arguments.
        value, end = _SCAN_JSON(arguments, 0)
    except (StopIteration, ValueError, TypeError):
        end = -1
    if end != len(arguments):
        # Whitespace around the value, or not JSON: json.loads reads the one and words the other as it always did.
        value = _loaded(arguments, pointer)
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(pointer, f"the arguments to be a JSON object, not {type(value).__name__}")
    return value


def _loaded(arguments: str, pointer: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError as exc:
        said = f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"
        fail(pointer, f"the arguments to be JSON text ({said})")


_ROLES = ("system", "user", "assistant", "tool")


def _malformed_message(message: Any, pointer: str) -> tuple[str, str] | None:
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        return pointer, "a message object with role system, user, assistant or tool"
    content = message.get("content")
    if not (content is None or isinstance(content, str | list)):
        return f"{pointer}/content", "a string, a list of parts or null"
    for i, part in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return f"{pointer}/content/{i}", "a content part object with a `type`"
    if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
        return f"{pointer}/tool_call_id", "the id of the call this tool message answers"
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return f"{pointer}/tool_calls", "a list of tool calls"
    for j, call in enumerate(calls or ()):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(call.get("id"), str):
            return f"{pointer}/tool_calls/{j}", "a tool call with `id` and `function`"
        if not isinstance(fn.get("name"), str) or not isinstance(
            fn.get("arguments"), str
        ):
            return (
                f"{pointer}/tool_calls/{j}/function",
                "`name` and `arguments`, both strings",
            )
    return None


def malformed(messages: Any, pointer: str) -> tuple[str, str] | None:
    """Where a canonical message list departs from the canonical shape, if it visibly does."""
    if not isinstance(messages, list):
        return pointer, "a list of canonical messages"
    for i, message in enumerate(messages):
        found = _malformed_message(message, f"{pointer}/{i}")
        if found:
            return found
    return None


def guarded(encode: Callable[[Any], dict[str, Any]], value: Any) -> dict[str, Any]:
    """Run an encoder; a canonical value it cannot read becomes a ValueError with a pointer, not a crash.

    The check runs only after a failure, so well-formed values pay nothing for it.
    """
    try:
        return encode(value)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        if isinstance(value, Request):
            found = malformed(value.messages, "/messages")
        else:
            found = _malformed_message(getattr(value, "message", None), "/message")
        pointer, expected = found or (
            "/",
            f"a canonical value the encoder can read ({type(exc).__name__}: {exc})",
        )
        raise ValueError(f"{pointer}: expected {expected}") from exc


def number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def stop_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


# The type of the note a decoder gives for a usage count it leaves out.
BAD_COUNT = "bad_usage_count"


class Counts:
    """One usage object's token counts as a decoder takes them: a whole number, 0 or more, is read (`5.0` too,
    the same number in JSON). Any other value is left out, the valid counts beside it kept, and `notes` says what
    and why: text, a fraction, a negative, infinity, null where the wire always sends a count."""

    def __init__(self, wire: str, where: str) -> None:
        # `where`: the body's key holding the usage object, the start of every field a note names.
        self.wire, self.where = wire, where
        self.notes: list[dict[str, Any]] = []
        self.bad: set[str] = set()

    def take(
        self,
        raw: Mapping[str, Any],
        key: str,
        *,
        within: str = "",
        required: bool = False,
        spoils: str = "",
    ) -> int | None:
        """The count `raw[key]` (`raw`: the usage's object `within`), else None; `spoils`: the count it is part of."""
        value = raw.get(key)
        if type(value) is int and value >= 0:
            return value
        if value is None and (not required or key not in raw):
            return None
        if type(value) is float and value.is_integer() and value >= 0:
            return int(value)
        field = ".".join(filter(None, (self.where, within, key)))
        self.bad.add(field)
        if value is None:
            why = "where it always sends a count"
        elif type(value) is float and abs(value) == float("inf"):
            why = "a number past a float's range (read as infinity)"
        elif type(value) is int or (type(value) is float and value < 0):
            why = "a negative count"
        else:
            why = "not a whole number" if type(value) is float else "not a number"
        also = f", and with it {spoils}, which counts it" if spoils else ""
        text = json.dumps(value, default=repr)
        text = text if len(text) <= 80 else f"{text[:77]}..."
        message = (
            f"{self.wire} sent {field} {text}, {why}: it is left out of the usage{also}"
        )
        self.notes.append({"type": BAD_COUNT, "message": message, "field": field})
        return None

    def failed(self, *keys: str) -> bool:
        """Whether any of `keys` (of the usage object itself) was sent as no count."""
        return any(f"{self.where}.{key}".lstrip(".") in self.bad for key in keys)

    def noted(self, extras: dict[str, Any]) -> dict[str, Any]:
        """`extras`, with the notes under "notes" (where `note_finish` puts its note)."""
        if self.notes:
            extras["notes"] = [*extras.get("notes", ()), *self.notes]
        return extras


def usage_total(usage: Mapping[str, Any]) -> Any:
    """The total an encoder writes: the one the usage states, else input plus output when it holds both."""
    total = usage.get("total_tokens")
    if total is None and "input_tokens" in usage and "output_tokens" in usage:
        total = usage["input_tokens"] + usage["output_tokens"]
    return total


def sampling_settings(
    config: Mapping[str, Any],
    out: dict[str, Any],
    max_key: str,
    top_key: str,
    stop_key: str,
) -> None:
    """Put into `out` the `max_tokens`, `temperature`, `top_p` and `stop` settings `config` states under these keys."""
    # Each key looked up once and tested only when present: most requests state one or two of them.
    value = config.get(max_key)
    if type(value) is int:
        out["max_tokens"] = value
    value = config.get("temperature")
    if value is not None and number(value):
        out["temperature"] = value
    value = config.get(top_key)
    if value is not None and number(value):
        out["top_p"] = value
    value = config.get(stop_key)
    stop = None if value is None else stop_list(value)
    if stop is not None:
        out["stop"] = stop


def portable(request: Request, wire: str, have: Mapping[str, Any]) -> dict[str, Any]:
    """The portable settings an encoder must write: those `Request.extras["settings"]` states differently from
    what the wire's own kept fields already say (all of them for a request from another wire)."""
    wanted = request.extras.get("settings")
    if not isinstance(wanted, dict):
        return {}
    return {key: value for key, value in wanted.items() if have.get(key) != value}


def stop_value(
    response: Response,
    wire: str,
    table: Mapping[str, str],
    out: Mapping[str, str],
    default: str,
) -> str:
    """The wire's stop value for `response`: the recorded one while it still means the same finish, else the
    value `out` gives for the canonical reason."""
    assert response.finish is not None
    raw = response.finish.get("raw") if wire in response.extras else None
    has_calls = bool(response.message.get("tool_calls"))
    fits = (
        isinstance(raw, str)
        and (finish_from(table, raw, has_calls) or {}).get("reason")
        == response.finish["reason"]
    )
    return (
        raw
        if fits and isinstance(raw, str)
        else out.get(response.finish["reason"], default)
    )


def body_rest(
    body: Mapping[str, Any], consumed: Collection[str], model_key: str = "model"
) -> tuple[str | None, dict[str, Any]]:
    """The request's model (when the body names one as text) and the body fields no canonical field took."""
    model = body.get(model_key)
    if isinstance(model, str):
        return model, {
            key: value
            for key, value in body.items()
            if key not in consumed and key != model_key
        }
    return None, {key: value for key, value in body.items() if key not in consumed}


def decoded_request(
    wire: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    model: Any,
    fields: dict[str, Any],
    kept: dict[str, Any],
    settings: Mapping[str, Any],
    *,
    keep_empty: bool = True,
) -> Request:
    """A decoded request: body fields no canonical field took are kept for the same wire, and the portable
    settings read from them go into `extras["settings"]`."""
    if fields:
        kept["fields"] = fields
    extras: dict[str, Any] = {wire: kept} if kept or keep_empty else {}
    if settings:
        extras["settings"] = dict(settings)
    return Request(messages, tools, model if isinstance(model, str) else None, extras)


def finish(reason: str, raw: Any) -> dict[str, Any]:
    return {"reason": reason, "raw": raw}


def finish_from(
    table: Mapping[str, str], raw: Any, has_calls: bool
) -> dict[str, Any] | None:
    """The normalized finish of a wire's raw stop value (`table` maps it; unknown values read as stop, and
    `note_finish` says so); a message that holds tool calls stopped for them."""
    if not isinstance(raw, str):
        return None
    reason = table.get(raw, "stop")
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


# The type of the note a decoder gives for a finish value its wire's table does not know.
UNKNOWN_FINISH = "unknown_finish"


def note_finish(
    extras: dict[str, Any],
    wire: str,
    field: str,
    raw: Any,
    done: Mapping[str, Any] | None,
    known: Collection[str],
) -> dict[str, Any]:
    """`extras`, with a note under "notes" when `raw`, the finish value sent in the body's `field`, is none of the
    values `known` (the wire's table): it is kept as sent (finish.raw, or the body's fields), and the note says
    what it was read as (`done`), which is a guess. A decoder calls this once per body."""
    if raw is None or (type(raw) is str and raw in known):
        return extras
    reason = done.get("reason") if done else None
    read = f"read as {reason!r}" if reason else "no finish is read from it"
    note = {
        "type": UNKNOWN_FINISH,
        "message": f"{wire} sent {field} {raw!r}, a value toolgen does not know: {read}",
        "raw": raw,
    }
    extras["notes"] = [*extras.get("notes", ()), note]
    return extras


def fill(target: dict[str, Any], rest: Mapping[str, Any]) -> dict[str, Any]:
    """Add the keys of `rest` that `target` lacks, nested objects included; what `target` has always wins."""
    for key, value in rest.items():
        have = target.get(key, _ABSENT)
        if have is _ABSENT:
            target[key] = value
        elif isinstance(have, dict) and isinstance(value, dict):
            target[key] = fill(dict(have), value)
    return target


def _missing(block: Mapping[str, Any], encoded: Mapping[str, Any]) -> dict[str, Any]:
    rest: dict[str, Any] = {}
    for key, value in block.items():
        have = encoded.get(key, _ABSENT)
        if have is _ABSENT:
            rest[key] = value
        elif isinstance(have, dict) and isinstance(value, dict):
            inner = _missing(value, have)
            if inner:
                rest[key] = inner
    return rest


def keep_entry(block: dict[str, Any], encoded: dict[str, Any]) -> dict[str, Any]:
    """What to keep of a wire block so that encoding its canonical value again gives the block back.

    Nothing when the encoder already reproduces it; `{"rest": {...}}` with the keys the encoder does not produce;
    `{"raw": block}` when the block spells a canonical value differently (read back only while that value is
    unchanged).
    """
    if encoded == block:
        return {}
    rest = _missing(block, encoded)
    if rest and fill(dict(encoded), rest) == block:
        return {"rest": rest}
    return {"raw": block}


def restore(
    encoded: dict[str, Any],
    entry: Mapping[str, Any] | None,
    same: Callable[[dict[str, Any]], bool],
) -> Any:
    """`encoded` completed from a `keep_entry`; a kept raw block is used only if `same(raw)` says it still fits."""
    if not entry:
        return encoded
    raw = entry.get("raw")
    if raw is not None:
        return raw if same(raw) else encoded
    rest = entry.get("rest")
    return fill(encoded, rest) if rest else encoded


def is_trivial(skeleton: list[dict[str, Any]]) -> bool:
    """A block layout the encoder rebuilds by itself: plain parts first, then plain calls, nothing kept aside."""
    seen_call = False
    for entry in skeleton:
        if "part" in entry:
            if entry["part"] or seen_call:
                return False
        elif "call" in entry:
            if entry["call"]:
                return False
            seen_call = True
        else:
            return False
    return True


def _counts(skeleton: list[dict[str, Any]]) -> tuple[int, int]:
    parts = calls = 0
    for entry in skeleton:
        if "part" in entry:
            parts += 1
        elif "call" in entry:
            calls += 1
        elif "group" in entry:
            parts += len(entry["parts"])
    return parts, calls


def weave(
    skeleton: list[dict[str, Any]] | None,
    parts: list[Any],
    calls: list[Any],
    part_block: Callable[[Any, Mapping[str, Any] | None], Any],
    call_block: Callable[[Any, Mapping[str, Any] | None], Any],
    group_block: Callable[[Mapping[str, Any], list[Any]], Any] | None = None,
) -> list[Any]:
    """Wire blocks in the order a decoded skeleton recorded; parts then calls when there is none or it no longer fits.

    Skeleton entries: `{"part": entry}` and `{"call": entry}` take the next canonical part or call, `{"keep":
    block}` puts a block canonical content had no place for back where it was, and `{"group": meta, "parts":
    [entry, ...]}` takes several parts that one wire item holds (built by `group_block(meta, blocks)`).
    """
    if skeleton and _counts(skeleton) == (len(parts), len(calls)):
        out: list[Any] = []
        p = c = 0
        for entry in skeleton:
            if "part" in entry:
                out.append(part_block(parts[p], entry["part"]))
                p += 1
            elif "call" in entry:
                out.append(call_block(calls[c], entry["call"]))
                c += 1
            elif "group" in entry and group_block is not None:
                inner = [
                    part_block(part, sub)
                    for part, sub in zip(parts[p:], entry["parts"], strict=False)
                ]
                p += len(inner)
                out.append(group_block(entry["group"], inner))
            elif "keep" in entry:
                out.append(entry["keep"])
        return out
    blocks = [part_block(part, None) for part in parts]
    blocks.extend(call_block(call, None) for call in calls)
    if skeleton:
        blocks.extend(entry["keep"] for entry in skeleton if "keep" in entry)
    return blocks


def call_pointer(pointer: str, calls: list[Any], call: Any) -> str:
    """Where `call`, one of the message's `calls`, stands under the message at `pointer`."""
    for index, candidate in enumerate(calls):
        if candidate is call:
            return f"{pointer}/tool_calls/{index}"
    return pointer


def assistant_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """The conventional assistant content: None without parts, a string for one text part, else the parts."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0].get("type") == "text":
        text: str = parts[0]["text"]
        return text
    return parts


_NOTHING: Mapping[str, Any] = MappingProxyType({})


def plain_text(
    content: list[dict[str, Any]], skeleton: list[dict[str, Any]]
) -> str | list[dict[str, Any]]:
    """One plain text part reads as a string, for wires whose content is always a list."""
    if len(content) == 1 and content[0].get("type") == "text" and is_trivial(skeleton):
        text: str = content[0]["text"]
        return text
    return content


def extras_of(item: Mapping[str, Any], wire: str) -> Mapping[str, Any]:
    """What a canonical message (or Request/Response extras dict) kept for `wire`; empty when it came from elsewhere."""
    extras = item.get("extras")
    if not extras:
        return _NOTHING
    kept = extras.get(wire)
    return kept if isinstance(kept, dict) else _NOTHING


def signed_for(message: Mapping[str, Any], wire: str) -> bool:
    """Reasoning signatures and encrypted reasoning are only valid for the provider that issued them."""
    return bool(extras_of(message, wire).get("signed"))


def turns(
    messages: list[dict[str, Any]], wire: str
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Canonical messages grouped into wire messages for wires that put tool results inside a user message.

    Consecutive tool messages share a user message; `extras[wire]["joined"]` joins a message to the previous wire
    message and `extras[wire]["split"]` starts a new one, as the decoded body had them. System messages are left
    out: these wires carry them outside the conversation.
    """
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    previous_role = None
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        side = "assistant" if role == "assistant" else "user"
        if "extras" in message:
            kept = extras_of(message, wire)
            merges = kept.get("joined") or (role == "tool" and previous_role == "tool")
            merges = merges and not kept.get("split")
        else:
            # A message built by hand or from another wire: only consecutive results share a turn.
            merges = role == "tool" and previous_role == "tool"
        if merges and groups and groups[-1][0] == side:
            groups[-1][1].append(message)
        else:
            groups.append((side, [message]))
        previous_role = role
    return groups


def split_marks(produced: list[dict[str, Any]], before: str | None, wire: str) -> None:
    """Mark the canonical messages decoded from one wire message so that `turns` regroups them the same way."""
    previous = before
    for position, message in enumerate(produced):
        role = message["role"]
        merges_by_default = role == "tool" and previous == "tool"
        mark = None
        if position == 0 and merges_by_default:
            mark = "split"
        elif position > 0 and not merges_by_default:
            mark = "joined"
        if mark:
            message.setdefault("extras", {}).setdefault(wire, {})[mark] = True
        previous = role
