"""What a recording's exchange says of the response's headers, against a real HTTP server on 127.0.0.1: a key the
base URL carried is masked wherever the server echoes it (a redirect's Location, a body), any credential query
parameter in a header value is masked, and a body recorded decoded says which content encodings were undone."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue, serving

from toolgen import runtime as rt

USER = [{"role": "user", "content": "Say hello"}]
# A Gemini-style key sent in the base URL's query, and a password in its user info.
QUERY_KEY = "AIzaSyQUERYKEY-0123456789abcdefghijkl"
PASSWORD = "pw-Url5ecretPassw0rd-987"
ANSWER = json.dumps(
    {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hello there."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
    }
).encode()


def recorded(folder: Path) -> str:
    return "".join(path.read_text("latin-1") for path in sorted(folder.iterdir()))


def exchange(folder: Path, number: int = 1) -> dict[str, Any]:
    return json.loads((folder / f"{number:04d}.exchange.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture
def echoing() -> Iterator[LocalServer]:
    """A 302 whose Location and Link carry the key back, then a 400 whose body echoes it."""
    redirect = Answer(
        b"",
        302,
        headers={
            "Location": f"/login?next=/x&key={QUERY_KEY}",
            "Link": '<https://cdn.example/a?X-Amz-Signature=f00dfeed&sig=abc123>; rel="preload"',
        },
    )
    echoed = Answer(json.dumps({"error": {"code": 400, "message": f"API key not valid: {QUERY_KEY}"}}).encode(), 400)
    yield from serving(queue(redirect, echoed))


def call(model: Any) -> None:
    with pytest.raises(rt.ProviderError):
        model.complete(rt.Request(USER))


def test_a_key_from_the_url_is_masked_in_every_header_and_body(echoing: LocalServer, tmp_path: Path) -> None:
    model = rt.HTTPModel(f"{echoing.base}/v1beta?key={QUERY_KEY}", "m", wire="gemini", record=tmp_path)
    call(model)
    call(model)
    model.close()
    headers = exchange(tmp_path)["response_headers"]
    assert headers["location"] == "/login?next=/x&key=***"
    assert headers["link"] == '<https://cdn.example/a?X-Amz-Signature=***&sig=***>; rel="preload"'
    assert exchange(tmp_path, 2)["masked"] is True
    assert json.loads((tmp_path / "0002.response.json").read_bytes())["error"]["message"] == "API key not valid: ***"
    assert QUERY_KEY not in recorded(tmp_path)


def test_user_info_in_the_url_is_masked(tmp_path: Path) -> None:
    for server in serving(queue(Answer(ANSWER))):
        host = server.base.removeprefix("http://")
        model = rt.HTTPModel(f"http://user:{PASSWORD}@{host}/v1beta", "m", wire="gemini", record=tmp_path)
        assert model.complete(rt.Request(USER)).message["content"] == "Hello there."
        model.close()
    assert exchange(tmp_path)["url"] == f"http://***@{host}/v1beta/models/m:generateContent"
    assert PASSWORD not in recorded(tmp_path)


def test_a_decoded_body_says_which_encodings_were_undone(tmp_path: Path) -> None:
    packed = gzip.compress(ANSWER)
    answers = [Answer(packed, headers={"Content-Encoding": "gzip"}), Answer(ANSWER)]
    for server in serving(queue(*answers)):
        model = rt.HTTPModel(server.base, "m", wire="gemini", record=tmp_path)
        for _ in answers:
            assert model.complete(rt.Request(USER)).message["content"] == "Hello there."
        model.close()
    first, second = exchange(tmp_path), exchange(tmp_path, 2)
    # The body file holds the decoded body; the headers stay as sent, and decoded_from says they no longer fit it.
    assert (tmp_path / "0001.response.json").read_bytes() == ANSWER
    assert first["response_headers"]["content-encoding"] == "gzip"
    assert first["response_headers"]["content-length"] == str(len(packed))
    assert first["decoded_from"] == ["gzip"]
    assert second["decoded_from"] == [] and (tmp_path / "0002.response.json").read_bytes() == ANSWER
    replay = rt.ReplayModel.from_recordings(tmp_path)
    assert replay.complete(rt.Request(USER)).message["content"] == "Hello there."
