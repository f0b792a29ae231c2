"""An OpenAI Responses answer with status "incomplete" that gives no reason, or one toolgen does not know.

The API documents `incomplete_details: {"reason": "max_output_tokens" | "content_filter"}` beside that status.
Without a reason (no incomplete_details, a null one, one without `reason`, a null reason, or one that is no object)
the answer still reads as finish `length`, which is a guess: a note in `extras["notes"]` says what was sent and what
it was read as, of the whole body and of the stream ending in `response.incomplete` alike (the stream's end is the
body the decoder reads). A reason the table does not know (a new string, or no string) keeps its `unknown_finish`
note. The stream's status stays `complete`: the note is about the body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_endings_note_finish import _responses_stream, _responses_whole, end_of, note, whole

from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.response_losses import encode_response_noted

_ABSENT = object()


def _body(details: Any) -> dict[str, Any]:
    body = _responses_whole("incomplete")
    if details is _ABSENT:
        del body["incomplete_details"]
    else:
        body["incomplete_details"] = details
    return body


def _missing(given: str, raw: Any = None) -> dict[str, Any]:
    return {
        "type": "unknown_finish",
        "message": f"openai-responses sent status 'incomplete' with {given}, so no reason why: read as 'length'",
        "raw": raw,
    }


# incomplete_details as sent, the note it gives
_NO_REASON = [
    pytest.param(_ABSENT, _missing("no incomplete_details"), id="no-details"),
    pytest.param(None, _missing("incomplete_details null"), id="details-null"),
    pytest.param({}, _missing("incomplete_details without a reason"), id="reason-absent"),
    pytest.param({"reason": None}, _missing("incomplete_details.reason null"), id="reason-null"),
    pytest.param(
        "max_output_tokens",
        _missing("incomplete_details 'max_output_tokens', no object", "max_output_tokens"),
        id="details-a-string",
    ),
    pytest.param(
        ["max_output_tokens"],
        _missing("incomplete_details ['max_output_tokens'], no object", ["max_output_tokens"]),
        id="details-a-list",
    ),
]

# A reason the table does not know: the note note_finish gives any unknown finish value.
_UNKNOWN_REASON = [
    pytest.param({"reason": "brand_new_reason"}, "brand_new_reason", id="unknown-string"),
    pytest.param({"reason": 5}, 5, id="a-number"),
    pytest.param({"reason": {"why": "x"}}, {"why": "x"}, id="an-object"),
]


def _stream(details: Any) -> list[bytes]:
    """The recorded-shape stream ending in `response.incomplete`, its response carrying `details`."""
    reads = _responses_stream("incomplete", "max_output_tokens")
    known = _responses_whole("incomplete", "max_output_tokens")
    assert b'"incomplete_details": {"reason": "max_output_tokens"}' in reads[-1]
    wanted = _body(details)
    assert {k: v for k, v in wanted.items() if k != "incomplete_details"} == {
        k: v for k, v in known.items() if k != "incomplete_details"
    }
    last = json.loads(reads[-1][len(b"data: ") :])
    assert last["type"] == "response.incomplete"
    last["response"] = wanted
    return [*reads[:-1], b"data: " + json.dumps(last).encode() + b"\n\n"]


@pytest.mark.parametrize(("details", "expected"), _NO_REASON)
def test_a_whole_incomplete_body_without_a_reason_is_noted(details: Any, expected: dict[str, Any]) -> None:
    response = whole("openai-responses", _body(details))
    assert response.finish == {"reason": "length", "raw": "incomplete"}
    assert response.message["content"] == "Hi"
    assert response.extras["notes"] == [expected]


@pytest.mark.parametrize(("details", "expected"), _NO_REASON)
def test_a_stream_ending_incomplete_without_a_reason_is_noted(details: Any, expected: dict[str, Any]) -> None:
    end, finishes = end_of(_stream(details), "openai-responses")
    assert (end.status, end.complete) == ("complete", True)
    assert [(f.reason, f.raw) for f in finishes] == [("length", "incomplete")]
    assert isinstance(end.response, Response)
    assert end.response.finish == {"reason": "length", "raw": "incomplete"}
    assert end.response.extras["notes"] == [expected]
    assert "stream" not in end.response.extras


@pytest.mark.parametrize(("details", "raw"), _UNKNOWN_REASON)
def test_a_reason_the_table_does_not_know_keeps_its_note(details: Any, raw: Any) -> None:
    expected = [note("openai-responses", "incomplete_details.reason", raw, "length")]
    response = whole("openai-responses", _body(details))
    assert response.finish == {"reason": "length", "raw": "incomplete"}
    assert response.extras["notes"] == expected
    end, _ = end_of(_stream(details), "openai-responses")
    assert end.status == "complete" and isinstance(end.response, Response)
    assert end.response.extras["notes"] == expected


@pytest.mark.parametrize(("reason", "read"), [("max_output_tokens", "length"), ("content_filter", "content_filter")])
def test_a_known_reason_gives_no_note(reason: str, read: str) -> None:
    response = whole("openai-responses", _body({"reason": reason}))
    assert response.finish == {"reason": read, "raw": "incomplete"}
    assert "notes" not in response.extras
    end, _ = end_of(_stream({"reason": reason}), "openai-responses")
    assert isinstance(end.response, Response) and "notes" not in end.response.extras


@pytest.mark.parametrize("details", [_ABSENT, None])
def test_a_completed_body_needs_no_incomplete_details(details: Any) -> None:
    body = _responses_whole("completed")
    if details is not _ABSENT:
        body["incomplete_details"] = details
    response = whole("openai-responses", body)
    assert response.finish == {"reason": "stop", "raw": "completed"}
    assert "notes" not in response.extras


@pytest.mark.parametrize(("details", "expected"), _NO_REASON)
def test_the_same_wire_gives_the_body_back_and_the_note_again(details: Any, expected: dict[str, Any]) -> None:
    body = _body(details)
    response = whole("openai-responses", body)
    again = codec("openai-responses").encode_response(response)
    assert again.get("incomplete_details", _ABSENT) == body.get("incomplete_details", _ABSENT)
    assert again["status"] == "incomplete"
    back = whole("openai-responses", again)
    assert back.extras["notes"] == [expected]


def test_converting_an_incomplete_answer_with_no_reason_says_no_finish_value_came() -> None:
    response = whole("openai-responses", _responses_whole("incomplete", None))
    other = encode_response_noted(response, "anthropic")
    assert [n for n in other.notes if n.startswith("/finish")] == [
        "/finish: no finish value came (read as 'length'); anthropic sends its own word for 'length' instead"
    ]
