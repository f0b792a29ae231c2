"""A credential sent in a custom header (`HTTPModel(headers={"X-Gateway-Key": ...})`, or the header a route's auth
names) is masked as `***` in the recording's request headers, and wherever the server echoes it: the answer, a
stream split across deltas, an error, a response header, the recorded bodies. Against a real HTTP server on
127.0.0.1 that echoes what it was sent."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from support.local_http import Answer, Received, serving
from test_recording_truth_replay import USER, exchange

from toolgen import runtime as rt
from toolgen.runtime.wires.table import wire as wire_row

GATEWAY = "gw-Gateway5ecretValue-0123456789"
SESSION = "sess-Cust0mSessi0nTok-98765"
COOKIE_VALUE = "c00kieValue-ABCDEFGH-123"
KEY = "sk-test-PortalKey-0123456789abcdef"
SSE = "text/event-stream"


def answer(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    ).encode()


def chunk(text: str, finish: str | None = None) -> str:
    choice = {"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"


def recorded(folder: Path) -> str:
    return "".join(path.read_text("latin-1") for path in sorted(folder.iterdir()))


HEADERS = {
    "X-Gateway-Key": GATEWAY,
    "X-Session-Id": SESSION,
    "Cookie": f"theme=dark; session={COOKIE_VALUE}",
    "X-Api-Token": "abc123",
    "X-Team": "blue",
}


def echo(received: Received) -> Answer:
    """Says the gateway key back in the answer and in a header, as a misconfigured gateway might."""
    key = received.headers["x-gateway-key"]
    headers = {"X-Echoed-Key": key, "X-Ratelimit-Remaining-Tokens": "999"}
    return Answer(answer(f"you sent {key} and {received.headers['x-session-id']}"), headers=headers)


def test_a_key_in_a_custom_header_is_masked_in_the_recording_and_the_answer(tmp_path: Path) -> None:
    for server in serving(echo):
        model = rt.HTTPModel(server.base, "gpt-4o-mini", headers=HEADERS, record=tmp_path)
        live = model.complete(rt.Request(USER))
        model.close()
        # Sent as given.
        assert server.seen[0].headers["x-gateway-key"] == GATEWAY
    assert live.message["content"] == "you sent *** and ***"
    sent = exchange(tmp_path)["request_headers"]
    assert {name: sent[name] for name in ("x-gateway-key", "x-session-id", "cookie", "x-api-token", "x-team")} == {
        "x-gateway-key": "***",
        "x-session-id": "***",
        "cookie": "***",
        "x-api-token": "***",
        "x-team": "blue",
    }
    received = exchange(tmp_path)["response_headers"]
    # A response header echoing the key is masked; a rate-limit count named "tokens" is no secret and stays.
    assert (received["x-echoed-key"], received["x-ratelimit-remaining-tokens"]) == ("***", "999")
    assert exchange(tmp_path)["masked"] is True
    for secret in (GATEWAY, SESSION, COOKIE_VALUE, GATEWAY[4:16]):
        assert secret not in recorded(tmp_path)
    replayed = rt.ReplayModel.from_recordings(tmp_path).complete(rt.Request(USER))
    assert replayed.message["content"] == "you sent *** and ***"


def test_a_key_in_a_custom_header_echoed_across_stream_deltas_is_masked(tmp_path: Path) -> None:
    half = len(GATEWAY) // 2
    pieces = [chunk("key: "), chunk(GATEWAY[:half]), chunk(GATEWAY[half:]), chunk(" ok", "stop"), "data: [DONE]\n\n"]
    for server in serving(lambda _: Answer("".join(pieces).encode(), content_type=SSE, chunk=40)):
        model = rt.HTTPModel(server.base, "gpt-4o-mini", headers=HEADERS, record=tmp_path)
        events = list(model.stream(rt.Request(USER)))
        model.close()
    text = "".join(e.text for e in events if isinstance(e, rt.TextDelta))
    assert text == "key: *** ok"
    assert GATEWAY[:half] not in recorded(tmp_path) and GATEWAY[half:] not in recorded(tmp_path)


def test_a_key_in_a_custom_header_echoed_in_an_error_is_masked(tmp_path: Path) -> None:
    def refuse(received: Received) -> Answer:
        said = {"error": {"message": f"key {received.headers['x-gateway-key']} is revoked", "type": "auth"}}
        return Answer(json.dumps(said).encode(), 401)

    for server in serving(refuse):
        model = rt.HTTPModel(server.base, "gpt-4o-mini", headers=HEADERS, record=tmp_path)
        with pytest.raises(rt.ProviderError) as raised:
            model.complete(rt.Request(USER))
        model.close()
    assert raised.value.message == "key *** is revoked"
    assert exchange(tmp_path)["failure"]["message"] == "key *** is revoked"
    assert GATEWAY not in recorded(tmp_path)


def test_a_key_the_route_puts_in_a_custom_header_is_masked(tmp_path: Path) -> None:
    route = replace(wire_row("openai-chat").route, auth="X-Portal-Credential")
    for server in serving(lambda _: Answer(answer("hi"))):
        model = rt.HTTPModel(server.base, "gpt-4o-mini", api_key=KEY, route=route, record=tmp_path)
        model.complete(rt.Request(USER))
        model.close()
        assert server.seen[0].headers["x-portal-credential"] == KEY
    assert exchange(tmp_path)["request_headers"]["x-portal-credential"] == "***"
    assert KEY not in recorded(tmp_path)
