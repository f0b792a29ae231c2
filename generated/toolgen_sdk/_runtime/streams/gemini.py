# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The stream state for Gemini generateContent (SSE, JSON lines or a JSON array).

Gemini chunks are whole response objects: their parts merge into one GenerateContentResponse (adjacent text of
the same kind joins; a later signature attaches to the text before it). Gemini 3 streams call arguments as
`partialArgs` entries (`jsonPath` plus a string, number, bool or null value; `willContinue` on a string means more
of it follows) between a `functionCall {name, willContinue: true}` and a closing `functionCall {}`; they are
rebuilt into the call's `args` object, and rendered live as JSON text while paths arrive in document order.
There are no call indexes: consecutive calls are told apart by order only.

A call that arrives whole is closed as it arrives; a streamed one is closed by its closing `functionCall {}`, by
the next call beginning, or by the candidate's `finishReason`, and cut when the body ends first.

Repeats and new calls: chunks carry no sequence number and no index, and every chunk repeats the same `responseId`.
What the wire does mark are parts: a `thoughtSignature` is an opaque blob made for one part, and a call `id` (where
one is sent) names one call, so a part carrying a signature or call id already seen is that part again (dropped),
and a call under a new id is a new call. What the order cannot settle makes the stream incomplete: a chunk with
content after its candidate's `finishReason` that is no such repeat and carries no `finishReason` again (which a
candidate sends once: that is the finishing chunk again) is dropped (a repeat, or a chunk out of order),
`partialArgs` with no streamed call open (dropped: the call's start never came), a chunk with neither candidates,
usage nor the prompt's feedback (it lost what it held), and a streamed call closed by the next call or by
`finishReason` instead of its closing `functionCall {}`. A repeated, lost or swapped chunk of plain text, of an
unsigned whole call or of `partialArgs` cannot be told from what a model may send, and is taken as it came.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..wires.base import ProviderError, Response
from ..wires.gemini import decode_response
from .events import dumps_compact
from .state import Call, WireState

_PATH_TOKEN = re.compile(
    r"\.([^.\[\]]+)|\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]"
)
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")
_CANDIDATE_SKIP = frozenset({"content"})
_TEXT_PART_KEYS = frozenset({"text", "thought", "thoughtSignature"})
# What json.dumps(text, ensure_ascii=False) escapes in a string; one encoder, since dumps with options makes one
# per call.
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_JSON = json.JSONEncoder(ensure_ascii=False)


def parse_json_path(path: str) -> tuple[str | int, ...] | None:
    """The keys and indexes of an RFC 9535 path like `$.recipe.steps[0]` or `$['a b']`; None if it is not one."""
    if not path.startswith("$"):
        return None
    tokens: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _PATH_TOKEN.match(path, pos)
        if match is None:
            return None
        name, index, single, double = match.groups()
        if index is not None:
            tokens.append(int(index))
        elif name is not None:
            tokens.append(name)
        else:
            tokens.append(_unescape(single if single is not None else double))
        pos = match.end()
    return tuple(tokens)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


class PartialArgs:
    """Rebuilds a call's arguments from `partialArgs` entries, and writes them as JSON text while it can.

    The text is exact while paths arrive depth-first in document order (what Gemini sends); a path that would
    reopen a finished object or array stops the live text, and the final arguments come from the object.
    """

    __slots__ = (
        "_counts",
        "_keys",
        "_kinds",
        "_last_path",
        "_open",
        "_seen",
        "_string",
        "live",
        "values",
    )

    def __init__(self) -> None:
        # path -> [is_string, fragments or value]; dict order is first arrival, which is the key order.
        self.values: dict[tuple[str | int, ...], list[Any]] = {}
        self.live = True
        self._string: tuple[str | int, ...] | None = None
        self._open = False
        self._keys: list[str | int] = []
        self._kinds: list[str] = []
        self._counts: list[int] = []
        self._seen: list[set[str]] = []
        # The last jsonPath as sent and as parsed: a string streamed in many fragments repeats its path each time.
        self._last_path: tuple[str, tuple[str | int, ...] | None] = ("", None)

    def apply(self, entry: dict[str, Any]) -> str:
        """Take one entry; returns the JSON text it adds (empty once the live text has stopped)."""
        raw = str(entry.get("jsonPath") or "")
        if raw == self._last_path[0]:
            path = self._last_path[1]
        else:
            path = parse_json_path(raw)
            self._last_path = (raw, path)
        if not path:
            self.live = False
            return ""
        kind, value = _entry_value(entry)
        continues = bool(entry.get("willContinue"))
        slot = self.values.get(path)
        appending = slot is not None and slot[0] and self._string == path
        if kind == "string":
            if appending:
                assert slot is not None
                slot[1].append(value)
            else:
                self.values[path] = [True, [value]]
        else:
            self.values[path] = [False, value]
        text = self._write(path, kind, value, continues, appending) if self.live else ""
        self._string = path if kind == "string" and continues else None
        return text

    def appended(self, raw_path: str, value: str, continues: bool) -> str | None:
        """What apply() makes of a string entry that goes on with the string the entry before left open, under the
        very same jsonPath text (the entry Gemini sends most): the JSON text it adds. None, and nothing changed,
        for any other entry."""
        last_raw, path = self._last_path
        if raw_path != last_raw or not path or self._string != path:
            return None
        slot = self.values.get(path)
        if slot is None or not slot[0]:
            return None
        slot[1].append(value)
        self._string = path if continues else None
        if not self.live:
            return ""
        return _escape(value) + ("" if continues else '"')

    def close(self) -> str:
        """The text that closes everything still open."""
        if not self.live:
            return ""
        if not self._open:
            return "{}"
        out = ['"'] if self._string is not None else []
        out.extend("}" if kind == "{" else "]" for kind in reversed(self._kinds))
        self._kinds.clear()
        return "".join(out)

    def build(self) -> dict[str, Any]:
        root: dict[str, Any] = {}
        for path, (is_string, value) in self.values.items():
            _assign(root, path, "".join(value) if is_string else value)
        return root

    def _write(
        self,
        path: tuple[str | int, ...],
        kind: str,
        value: Any,
        continues: bool,
        appending: bool,
    ) -> str:
        if appending:
            return _escape(value) + ("" if continues else '"')
        out: list[str] = []
        if self._string is not None:
            out.append('"')
        if not self._enter(path, out):
            self.live = False
            return ""
        if kind == "string":
            out.append('"' + _escape(value) + ("" if continues else '"'))
        else:
            out.append(_JSON.encode(value))
        return "".join(out)

    def _enter(self, path: tuple[str | int, ...], out: list[str]) -> bool:
        """Close containers the path leaves, open the ones it enters, and write its member key."""
        if not self._open:
            if not isinstance(path[0], str):
                return False
            self._open = True
            self._push("{", out)
        containers = path[:-1]
        common = 0
        while (
            common < len(self._keys)
            and common < len(containers)
            and self._keys[common] == containers[common]
        ):
            common += 1
        while len(self._keys) > common:
            out.append("}" if self._kinds.pop() == "{" else "]")
            self._keys.pop()
            self._counts.pop()
            self._seen.pop()
        for depth in range(common, len(containers)):
            if not self._member(containers[depth], out):
                return False
            self._keys.append(containers[depth])
            self._push("[" if isinstance(path[depth + 1], int) else "{", out)
        return self._member(path[-1], out)

    def _push(self, kind: str, out: list[str]) -> None:
        out.append(kind)
        self._kinds.append(kind)
        self._counts.append(0)
        self._seen.append(set())

    def _member(self, key: str | int, out: list[str]) -> bool:
        count = self._counts[-1]
        if self._kinds[-1] == "{":
            if not isinstance(key, str) or key in self._seen[-1]:
                return False
            self._seen[-1].add(key)
            out.append(("," if count else "") + _JSON.encode(key) + ":")
            self._counts[-1] = count + 1
            return True
        if not isinstance(key, int) or key < count:
            return False
        while count < key:
            # Skipped array slots read as null in the object too.
            out.append(("," if count else "") + "null")
            count += 1
        out.append("," if count else "")
        self._counts[-1] = count + 1
        return True


def _entry_value(entry: dict[str, Any]) -> tuple[str, Any]:
    for key in _VALUE_KEYS:
        if key in entry:
            if key == "stringValue":
                return "string", str(entry[key])
            return "value", None if key == "nullValue" else entry[key]
    return "value", None


def _escape(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return text  # most fragments are plain words: nothing to escape
    return _JSON.encode(text)[1:-1]


def _assign(root: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    node: Any = root
    for depth, key in enumerate(path):
        last = depth == len(path) - 1
        child: Any = value if last else ([] if isinstance(path[depth + 1], int) else {})
        if isinstance(key, int):
            if not isinstance(node, list):
                return
            node.extend([None] * (key + 1 - len(node)))
            if last or node[key] is None:
                node[key] = child
            node = node[key]
        else:
            if not isinstance(node, dict):
                return
            if last:
                node[key] = child
            node = node.setdefault(key, child)


class _Candidate:
    __slots__ = (
        "args",
        "call",
        "entry",
        "fields",
        "finished",
        "index",
        "parts",
        "primary",
        "role",
        "streamed",
    )

    def __init__(self, index: int, primary: bool) -> None:
        self.index = index
        self.primary = primary
        self.role: str | None = None
        # Each entry is [part dict, text fragments or None].
        self.parts: list[list[Any]] = []
        self.fields: dict[str, Any] = {}
        self.call: Call | None = None
        self.args: PartialArgs | None = None
        self.streamed: dict[str, Any] | None = None
        # The parts entry of the call being streamed, taken out again if the call is cut.
        self.entry: list[Any] | None = None
        self.finished = False


class GeminiState(WireState):
    """GenerateContentResponse chunks in, one merged GenerateContentResponse out."""

    wire = "gemini"
    object_arguments = True
    end_signal = "a finishReason"
    call_end_signal = "its closing functionCall"

    def __init__(self) -> None:
        super().__init__()
        self.head: dict[str, Any] = {}
        self.candidates: dict[int, _Candidate] = {}
        # Thought signatures and call ids seen: each marks one part.
        self.marks: set[str] = set()

    def feed(self, event: str | None, data: Any) -> None:
        if "error" in data and "candidates" not in data:
            error = data.get("error") or {}
            detail = error if isinstance(error, dict) else {"message": error}
            code = detail.get("code")
            self.fail(
                str(detail.get("message") or error),
                code=None if code is None else str(code),
                type=detail.get("status"),
                status=code if isinstance(code, int) else None,
                raw=data,
            )
            return
        if (
            "candidates" not in data
            and "usageMetadata" not in data
            and "promptFeedback" not in data
        ):
            # Every chunk holds candidates, the usage or the prompt's feedback: this one lost what it held.
            self.doubt(
                "a chunk without candidates, usage or feedback: whatever it held is lost",
                data,
            )
        if not self.started:
            self.begin(data.get("responseId"), data.get("modelVersion"))
        for key, value in data.items():
            if key == "candidates":
                for candidate in value or ():
                    self._candidate(candidate)
            else:
                self.head[key] = value

    def _candidate(self, data: dict[str, Any]) -> None:
        index = data.get("index") or 0
        candidate = self.candidates.get(index)
        if candidate is None:
            candidate = self.candidates[index] = _Candidate(index, not self.candidates)
        content = data.get("content")
        if content and candidate.finished:
            if data.get("finishReason") is not None:
                self.repeat()  # finishReason comes once a candidate: this is the finishing chunk again
            else:
                self._after_finish(content)
            return
        if content:
            candidate.role = content.get("role") or candidate.role
            for part in content.get("parts") or ():
                self._part(candidate, part)
        for key, value in data.items():
            if key not in _CANDIDATE_SKIP:
                candidate.fields[key] = value
        if data.get("finishReason") is not None:
            self.complete = candidate.finished = True
            if candidate.args is not None:
                self._unclosed(candidate, "the finishReason")
                self._end_streamed(candidate)

    def _after_finish(self, content: dict[str, Any]) -> None:
        """Content of a finished candidate: a repeat when every part is one already taken (or empty); else
        dropped, in doubt."""
        marks = self.marks
        for part in content.get("parts") or ():
            if not isinstance(part, dict):
                continue
            call = part.get("functionCall")
            named = [
                mark
                for mark in (
                    part.get("thoughtSignature"),
                    call.get("id") if isinstance(call, dict) else None,
                )
                if isinstance(mark, str) and mark
            ]
            if named and all(mark in marks for mark in named):
                continue
            if part.get("text") or call or len(part) > 1:
                self.presumed_repeat(
                    "content after the candidate's finishReason", content
                )
                return
        self.repeat()

    def _unclosed(self, candidate: _Candidate, by: str) -> None:
        call = candidate.call
        index = "" if call is None or call.index < 0 else f" {call.index}"
        self.doubt(
            f"streamed call{index} was closed by {by}: its closing functionCall never came"
        )

    def _seen(self, part: dict[str, Any]) -> bool:
        """Whether the part carries a signature or call id of a part already taken (and if not, remember them)."""
        call = part.get("functionCall")
        if "thoughtSignature" not in part and (
            not isinstance(call, dict) or "id" not in call
        ):
            return False  # nothing marks it (most text parts): nothing to look up or remember
        marks = [
            mark
            for mark in (
                part.get("thoughtSignature"),
                call.get("id") if isinstance(call, dict) else None,
            )
            if isinstance(mark, str) and mark
        ]
        if any(mark in self.marks for mark in marks):
            return True
        self.marks.update(marks)
        return False

    def _part(self, candidate: _Candidate, part: dict[str, Any]) -> None:
        if self._seen(part):
            self.repeat()
            return
        call = part.get("functionCall")
        if call is not None:
            self._function_call(candidate, part, call)
            return
        text = part.get("text")
        if text is None:
            candidate.parts.append([dict(part), None])
            return
        signature = part.get("thoughtSignature")
        if not text and signature is None and len(part) == 1:
            return  # the empty text part Gemini sends with finishReason
        thought = bool(part.get("thought"))
        last = candidate.parts[-1] if candidate.parts else None
        if (
            last is not None
            and last[1] is not None
            and bool(last[0].get("thought")) == thought
            and "thoughtSignature" not in last[0]
            and part.keys() <= _TEXT_PART_KEYS
        ):
            last[1].append(text)
            if signature is not None:
                last[0]["thoughtSignature"] = signature
        else:
            candidate.parts.append([dict(part), [text]])
        if text and candidate.primary:
            if thought:
                self.reasoning(text)
            else:
                self.text(text)

    def _function_call(
        self, candidate: _Candidate, part: dict[str, Any], call: dict[str, Any]
    ) -> None:
        name = call.get("name")
        partial = call.get("partialArgs")
        continues = bool(call.get("willContinue"))
        if candidate.args is not None and name is None:
            if partial:
                self._partial(candidate, partial)
            if not continues:
                self._end_streamed(candidate)
            return
        if candidate.args is not None:
            self._unclosed(candidate, "the next call")
            self._end_streamed(candidate)
        if name is None:
            if partial:
                self.doubt("partialArgs came with no streamed call open: dropped", call)
            return  # else a closing `functionCall {}` with no call open
        if continues or partial:
            self._start_streamed(candidate, part, call)
            if partial:
                self._partial(candidate, partial)
            if not continues:
                self._end_streamed(candidate)
            return
        candidate.parts.append([dict(part), None])
        self._whole_call(candidate, call)

    def _new_call(self, candidate: _Candidate, call: dict[str, Any]) -> Call:
        if candidate.primary:
            return self.open_call(call.get("id"), call.get("name"))
        return Call(-1, call.get("id"), call.get("name"))

    def _whole_call(self, candidate: _Candidate, data: dict[str, Any]) -> None:
        call = self._new_call(candidate, data)
        args = data.get("args")
        text = dumps_compact(args) if args is not None else ""
        if text and candidate.primary:
            self.arguments(call, text)
        self._finish_call(candidate, call, text)

    def _finish_call(self, candidate: _Candidate, call: Call, text: str) -> None:
        if candidate.primary:
            self.close_call(call, text)
        else:
            call.closed = True
            self.settle(call, text)

    def _start_streamed(
        self, candidate: _Candidate, part: dict[str, Any], call: dict[str, Any]
    ) -> None:
        streamed = {
            key: value
            for key, value in call.items()
            if key not in ("willContinue", "partialArgs")
        }
        entry = {key: value for key, value in part.items() if key != "functionCall"}
        entry["functionCall"] = streamed
        candidate.entry = [entry, None]
        candidate.parts.append(candidate.entry)
        candidate.streamed = streamed
        candidate.call = self._new_call(candidate, call)
        candidate.args = PartialArgs()

    def _partial(self, candidate: _Candidate, entries: list[dict[str, Any]]) -> None:
        assert candidate.args is not None and candidate.call is not None
        for entry in entries:
            text = candidate.args.apply(entry)
            if text and candidate.primary:
                self.arguments(candidate.call, text)

    def _end_streamed(self, candidate: _Candidate) -> None:
        args, call, streamed = candidate.args, candidate.call, candidate.streamed
        candidate.args = candidate.call = candidate.streamed = candidate.entry = None
        assert args is not None and call is not None and streamed is not None
        tail = args.close()
        if tail and candidate.primary:
            self.arguments(call, tail)
        value = args.build()
        if args.values:
            streamed["args"] = value
        # The arguments are the object's JSON, whether or not the live text kept up with it.
        text = dumps_compact(value)
        self._finish_call(candidate, call, text)

    def finish(self) -> None:
        for candidate in self.candidates.values():
            if candidate.call is not None:
                self._cut_streamed(candidate, candidate.call)
        super().finish()

    def _cut_streamed(self, candidate: _Candidate, call: Call) -> None:
        """A streamed call the body ended inside: cut, and out of the candidate's parts."""
        candidate.parts = [
            entry for entry in candidate.parts if entry is not candidate.entry
        ]
        candidate.args = candidate.call = candidate.streamed = candidate.entry = None
        if candidate.primary:
            self.cut_call(call)
        else:
            call.closed = call.cut = True

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "candidates": [
                self._candidate_body(self.candidates[i])
                for i in sorted(self.candidates)
            ]
        }
        body.update(self.head)
        return body

    @staticmethod
    def _candidate_body(candidate: _Candidate) -> dict[str, Any]:
        parts = [
            part if fragments is None else {**part, "text": "".join(fragments)}
            for part, fragments in candidate.parts
        ]
        body: dict[str, Any] = {
            "content": {"parts": parts, "role": candidate.role or "model"}
        }
        body.update(candidate.fields)
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)
