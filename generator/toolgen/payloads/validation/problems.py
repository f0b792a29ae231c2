"""What is wrong with one parsed record of `toolgen validate`, each problem at a pointer into the record itself.

A canonical record is checked by the SDK's validators, its tool calls' arguments by their tools, and a list of
messages paired (results with calls) over the messages that are valid. A provider body is checked for the shape
its wire documents (wire_shapes.py), decoded, and its canonical messages checked the same way; each of their
problems is then placed back in the body (wire_places.py): a tool call's arguments at
`/choices/0/message/tool_calls/1/function/arguments/location`, even when the arguments are JSON text in a string.
A body message the wire's decoder refuses is reported and left out, and the rest still decoded and paired.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple

from toolgen.core.kinds import KINDS
from toolgen.payloads.validation.fast import SNAKE_KEYS, snake_messages, tool_calls
from toolgen.payloads.wire_places import BodyPlaces, escape, resolve, strings_of, tokens

# How a shape's sentence ends for a value the body lacks.
MISSING = "(it is required), got nothing"
# Body items (messages, turns) a request may have refused by its decoder and still be decoded without; past
# this, the record's other problems are not looked for.
MAX_DROPPED = 100


class Finding(NamedTuple):
    """One problem of a record: where (a JSON pointer into the record), which rule, and the sentence.

    `string` is set when `pointer` goes on into JSON text held by a string (tool call arguments): the pointer of
    that string, so the place can be found inside it. `at` is a line:col already known (a stream's event), and
    `canonical` the canonical place a stream's problem concerns (for the summary, which counts them per call).
    """

    pointer: str
    rule: str
    message: str
    string: str | None = None
    at: tuple[int, int] | None = None
    canonical: str | None = None


def argument_problems(sdk: ModuleType, kind: str, data: Any) -> list[Finding]:
    """Tool calls naming no tool of the SDK, or with arguments their tool refuses, each at the argument."""
    found: list[Finding] = []
    for pointer, call in tool_calls(kind, data):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue  # the payload check already says what is wrong with this call
        name, arguments = function["name"], function.get("arguments")
        spec = sdk.TOOLS.get(name)
        if spec is None:
            known = ", ".join(sorted(sdk.TOOLS)) or "none"
            message = f"there is no tool named {name!r} (the tools: {known})"
            found.append(Finding(f"{pointer}/function/name", "unknown-tool", message))
            continue
        if not isinstance(arguments, str):
            continue
        at = f"{pointer}/function/arguments"
        try:
            # Read as dispatch reads them: blank text is a call without arguments.
            args = spec.check_arguments(arguments if arguments.strip() else "{}")
        except sdk.ToolgenValidationError as error:
            for problem in error.problems:
                message = f"arguments of {name!r} at {problem.pointer or '(root)'}: {problem.message}"
                found.append(Finding(at + problem.pointer, "arguments-invalid", message, at))
            continue
        if not isinstance(args, spec.args_model):
            model = spec.args_model.__name__
            message = f"arguments of {name!r} fit its input schema, but not {model}, which its handler takes: dispatch refuses this call"
            found.append(Finding(at, "arguments-unholdable", message))
    return found


def canonical_problems(
    sdk: ModuleType, kind: str, data: Any, unreadable: frozenset[str] = frozenset()
) -> list[Finding]:
    """A canonical record's problems; a list of messages is also paired, over its valid messages.

    `unreadable`: call ids that messages left out (not readable) may hold; a pairing problem of one is not said.
    """
    found: list[Finding] = []
    try:
        getattr(sdk, KINDS[kind])(data)
    except sdk.ToolgenValidationError as error:
        found.extend(
            Finding(p.pointer, "payload-invalid", f"{p.pointer or '(root)'}: {p.message}") for p in error.problems
        )
    found.extend(argument_problems(sdk, kind, data))
    if kind == "messages" and isinstance(data, list):
        invalid = {_index(f.pointer) for f in found if f.rule == "payload-invalid"}
        if None not in invalid:  # a problem of the list itself leaves no message to pair
            found.extend(pairing_problems(sdk, data, {i for i in invalid if i is not None}, unreadable))
    return found


def _index(pointer: str) -> int | None:
    first = tokens(pointer)[:1]
    return int(first[0]) if first and first[0].isdigit() else None


def _mentioned(messages: list[Any], indexes: set[int]) -> set[str]:
    """The call ids the messages at `indexes` name, as calls or as results (valid or not)."""
    ids: set[str] = set()
    for index in indexes:
        message = messages[index] if index < len(messages) else None
        if not isinstance(message, dict):
            continue
        for key in ("tool_call_id", "toolCallId"):
            if isinstance(message.get(key), str):
                ids.add(message[key])
        for key in ("tool_calls", "toolCalls"):
            calls = message.get(key)
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    ids.add(call["id"])
    return ids


def pairing_problems(
    sdk: ModuleType, messages: list[Any], invalid: set[int], unreadable: frozenset[str] = frozenset()
) -> list[Finding]:
    """Tool results that answer no call, and calls no result answers, among the valid messages, pointed at where
    the record spells them. A problem that an invalid message may explain (it names the same id) is not said:
    that message's own problem is."""
    kept = [i for i, message in enumerate(messages) if i not in invalid and isinstance(message, dict)]
    doubtful = _mentioned(messages, invalid) | unreadable
    found = []
    for problem in sdk._runtime.check_pairing(snake_messages([messages[i] for i in kept])):
        index, _, rest = problem.pointer[1:].partition("/")
        original = kept[int(index)]
        message = messages[original]
        if doubtful and _pairing_id(message, rest) in doubtful:
            continue
        for camel, snake in SNAKE_KEYS:
            if rest.startswith(snake) and camel in message:
                rest = f"{camel}{rest[len(snake) :]}"
        pointer = f"/{original}/{rest}"
        found.append(Finding(pointer, "pairing-invalid", f"{pointer}: {problem.message}"))
    return found


def _pairing_id(message: dict[str, Any], rest: str) -> Any:
    """The call id a pairing problem at `rest` (within `message`) is about."""
    parts = rest.split("/")
    if parts[0] in ("tool_calls", "toolCalls") and len(parts) > 1 and parts[1].isdigit():
        calls = message.get("tool_calls", message.get("toolCalls"))
        call = calls[int(parts[1])] if isinstance(calls, list) and int(parts[1]) < len(calls) else None
        return call.get("id") if isinstance(call, dict) else None
    return message.get("tool_call_id", message.get("toolCallId"))


def without_place(message: str, pointer: str) -> str:
    """A canonical problem's sentence without the pointer it starts with (the caller names the place once)."""
    place = f"{pointer or '(root)'}: "
    return message[len(place) :] if message.startswith(place) else message


def decoded_canonical(
    sdk: ModuleType, decoded: Any, body_kind: str, unreadable: frozenset[str] = frozenset()
) -> tuple[list[Any], list[Finding]]:
    """A decoded body's canonical messages and their problems, at canonical pointers (`/<message>/...`)."""
    if type(decoded).__name__ == "ProviderError":
        # A provider's error body is a valid recording of an error. By name: modules a wire loads on first use
        # may come from another package of the same name validated earlier in this process.
        return [], []
    if body_kind == "response":
        message = decoded.message
        found = canonical_problems(sdk, "message", message)
        # A response is one message: its pointers are given the index a request's messages have.
        return [message], [f._replace(pointer=f"/0{f.pointer}", string=_under("/0", f.string)) for f in found]
    messages = list(decoded.messages)
    return messages, canonical_problems(sdk, "messages", messages, unreadable)


def _under(prefix: str, pointer: str | None) -> str | None:
    return None if pointer is None else prefix + pointer


def decoded_problems(sdk: ModuleType, decoded: Any, body_kind: str) -> list[Finding]:
    """A decoded body's problems named by their canonical place (`canonical /tool_calls/0/...: ...`), for a body
    whose own places are not known."""
    _, found = decoded_canonical(sdk, decoded, body_kind)
    return [_canonical_named(f, body_kind) for f in found]


def _canonical_named(finding: Finding, body_kind: str) -> Finding:
    pointer = finding.pointer[2:] if body_kind == "response" else finding.pointer
    sentence = without_place(finding.message, finding.pointer)
    return Finding("", finding.rule, f"canonical {pointer or '/'}: {sentence}")


class _Reduced:
    """A request body with the items its decoder refused taken out, and the way back to the body's own indexes."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.kept: dict[str, list[int]] = {}
        self.dropped: list[Any] = []

    def original(self, pointer: str) -> str:
        parts = tokens(pointer)
        if (
            len(parts) >= 2
            and parts[0] in self.kept
            and parts[1].isdigit()
            and int(parts[1]) < len(self.kept[parts[0]])
        ):
            parts[1] = str(self.kept[parts[0]][int(parts[1])])
            return "".join(f"/{escape(part)}" for part in parts)
        return pointer

    def drop(self, pointer: str) -> bool:
        """Take out the top-level list item `pointer` is in; False when it is in none."""
        parts = tokens(pointer)
        if len(parts) < 2 or not parts[1].isdigit() or not isinstance(self.body, dict):
            return False
        key, index = parts[0], int(parts[1])
        items = self.body.get(key)
        if not isinstance(items, list) or index >= len(items):
            return False
        kept = self.kept.get(key, list(range(len(items))))
        self.dropped.append(items[index])
        self.kept[key] = kept[:index] + kept[index + 1 :]
        self.body = {**self.body, key: items[:index] + items[index + 1 :]}
        return True

    def unreadable(self) -> frozenset[str]:
        """Every string of the items taken out: a call id among them may be what a result answers."""
        return frozenset(value for item in self.dropped for _, value in strings_of(item, ""))


def wire_problems(sdk: ModuleType, kind: str, data: Any) -> list[Finding]:
    """A provider body's problems: its wire shape, its decoding, then its canonical messages', all at body
    pointers (a canonical problem nothing of the body can be tied to keeps its canonical place)."""
    from toolgen.payloads.codec import kept_nothing, look_alike, misread, pointer_of, unrecognized
    from toolgen.payloads.wire_shape_specs import shape_problems

    wire, body_kind = kind.rsplit(".", 1)
    runtime = (
        sdk._runtime
    )  # its names were read by load_sdk, so they are this package's even when another took the name
    found = [
        Finding(p, "wire-invalid", f"not a valid {wire} {body_kind}: {p or '/'}: {m}")
        for p, m in shape_problems(wire, body_kind, data)
    ]
    reduced = _Reduced(data)
    for _ in range(MAX_DROPPED + 1):
        try:
            decoded = runtime.decode(reduced.body, wire, body_kind)
            break
        except ValueError as error:
            at = pointer_of(error)
            pointer = reduced.original(at)
            message = str(error)
            if at and message.startswith(at):
                message = pointer + message[len(at) :]
            if message.endswith(_GOT_NULL) and _absent(reduced.body, at):
                # The decoder reads a key with .get(): a key the body lacks it says as null, which is not there.
                message = message[: -len(_GOT_NULL)] + ", got nothing"
            # At one place, the decoder's sentence says more than the shape's, but for a value that is missing.
            if not any(f.pointer == pointer and f.message.endswith(MISSING) for f in found):
                found = [f for f in found if f.pointer != pointer]
                found.append(Finding(pointer, "wire-invalid", f"not a valid {wire} {body_kind}: {message}"))
            if body_kind != "request" or not reduced.drop(at):
                return _named_look_alike(found, look_alike(data, wire, "--as", suffix=f".{body_kind}"))
    else:
        return _named_look_alike(found, look_alike(data, wire, "--as", suffix=f".{body_kind}"))
    if not reduced.dropped and kept_nothing(
        decoded
    ):  # a body of another wire, which this one reads as an empty message
        return [*found, Finding("", "wire-invalid", unrecognized(data, wire, body_kind, "--as", f".{body_kind}"))]
    lost = None if reduced.dropped else misread(data, wire, body_kind, "--as", f".{body_kind}")
    if lost is not None:  # read as the wire given, a body of another wire would lose what its own wire reads
        return [*found, Finding("", "wire-invalid", f"not a valid {wire} {body_kind}: {lost}")]
    messages, canonical = decoded_canonical(sdk, decoded, body_kind, reduced.unreadable())
    if canonical:
        places = BodyPlaces(reduced.body, messages, wire)
        found.extend(_in_body(finding, places, reduced, body_kind) for finding in canonical)
    return found


_GOT_NULL = ", got null"


def _absent(body: Any, pointer: str) -> bool:
    """Whether `pointer` names a key its object lacks (the object itself being there)."""
    parts = tokens(pointer)
    if not parts:
        return False
    parent = resolve(body, "".join(f"/{escape(part)}" for part in parts[:-1]))
    return isinstance(parent, dict) and parts[-1] not in parent


def _named_look_alike(found: list[Finding], sentence: str | None) -> list[Finding]:
    """The shape findings, the first one saying which wire the body looks like when detection names another."""
    if sentence is None or not found:
        return found
    first = found[0]
    return [first._replace(message=f"{first.message}; {sentence}"), *found[1:]]


def _in_body(finding: Finding, places: BodyPlaces, reduced: _Reduced, body_kind: str) -> Finding:
    placed = places.place(finding.pointer)
    if placed is None:
        return _canonical_named(finding, body_kind)
    pointer, string = reduced.original(placed[0]), placed[1]
    sentence = without_place(finding.message, finding.pointer[2:] if body_kind == "response" else finding.pointer)
    return Finding(
        pointer, finding.rule, f"{pointer}: {sentence}", None if string is None else reduced.original(string)
    )
