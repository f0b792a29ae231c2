"""Recording for conformance: `HTTPModel(record=DIR)` and `python -m <package> --record DIR` write each exchange
as files that `toolgen conformance`, `toolgen decode` and `ReplayModel.from_recordings` read as they are, with
every secret masked, against real local HTTP servers on 127.0.0.1."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue, serving
from support.projects import REPO_ROOT, SOURCE_PACKAGE, shared_dir

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
USER = [{"role": "user", "content": "What's the weather in Paris?"}]
SSE = "text/event-stream"
KEY = "sk-proj-RecordedKey0123456789abcdefXYZ"
AZURE = "/openai/deployments/gpt4o?api-version=2024-10-21"


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


def weather_answers() -> list[Answer]:
    return [
        Answer((FIXTURES / "openai-chat-weather-parallel.sse").read_bytes(), content_type=SSE, chunk=53),
        Answer((FIXTURES / "openai-chat-answer.sse").read_bytes(), content_type="text/event-stream; charset=utf-8"),
    ]


@pytest.fixture
def weather() -> Iterator[LocalServer]:
    yield from serving(queue(*weather_answers()))


def tools_for(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()
    tools.get_current_weather.handler(
        lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": args.unit or "celsius"}
    )
    return tools


def assert_no_secret(folder: Path, *secrets: str) -> None:
    """The recordings hold no secret, whole, URL-encoded, or as a long piece of one."""
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        for secret in secrets:
            for form in {secret, urllib.parse.quote(secret, safe=""), secret[4:16]}:
                assert form.encode() not in data, f"{path.name} holds {form!r}"


def conformance(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgen", "conformance", "--format", "json", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_record_then_conformance_then_replay(sdk: SimpleNamespace, weather: LocalServer, tmp_path: Path) -> None:
    folder = tmp_path / "recorded"
    model = sdk.runtime.HTTPModel(weather.base + AZURE, "gpt-4o", api_key=KEY, record=folder)
    live = sdk.runtime.run(USER, model, tools_for(sdk), stream=True)
    model.close()
    assert live.stop_reason == "finished", live.error
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "0001.exchange.json",
        "0001.request.json",
        "0001.response.sse",
        "0002.exchange.json",
        "0002.request.json",
        "0002.response.sse",
    ]
    # The bodies exactly as they went and came.
    for number, (sent, answer) in enumerate(zip(weather.seen, weather_answers(), strict=True), start=1):
        assert (folder / f"{number:04d}.request.json").read_bytes() == sent.body
        assert (folder / f"{number:04d}.response.sse").read_bytes() == answer.body
    meta = json.loads((folder / "0001.exchange.json").read_text())
    assert meta["url"].endswith("/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21")
    assert (meta["wire"], meta["status"], meta["content_type"], meta["stream"], meta["whole"]) == (
        "openai-chat",
        200,
        SSE,
        True,
        True,
    )
    assert meta["request_headers"]["authorization"] == "***" and meta["request_headers"]["accept"] == SSE
    assert meta["masked"] is False
    assert_no_secret(folder, KEY)

    checked = conformance(folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rows = json.loads(checked.stdout)
    assert [(Path(r["file"]).name, r["wire"], r["kind"], r["result"]) for r in rows] == [
        ("0001.request.json", "openai-chat", "request", "ok"),
        ("0001.response.sse", "openai-chat", "stream", "ok"),
        ("0002.request.json", "openai-chat", "request", "ok"),
        ("0002.response.sse", "openai-chat", "stream", "ok"),
    ]
    assert rows[1]["tool_calls"] == ["get_current_weather", "get_current_weather"]

    replay = sdk.runtime.ReplayModel.from_recordings(folder)
    again = sdk.runtime.run(USER, replay, tools_for(sdk), stream=True)
    assert again.text == live.text and again.messages == live.messages
    assert replay.requests[1].messages == live.messages[:4]


def test_decode_reads_a_recorded_response_as_it_is(sdk: SimpleNamespace, weather: LocalServer, tmp_path: Path) -> None:
    model = sdk.runtime.HTTPModel(weather.base + "/v1", "m", record=tmp_path)
    list(model.stream(sdk.runtime.Request(USER)))
    decoded = subprocess.run(
        [sys.executable, "-m", "toolgen", "decode", str(tmp_path / "0001.response.sse")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert decoded.returncode == 0, decoded.stderr
    body = json.loads(decoded.stdout)
    assert (body["wire"], body["kind"], body["complete"]) == ("openai-chat", "stream", True)
    assert [c["id"] for c in body["response"]["message"]["tool_calls"]] == ["call_paris", "call_oslo"]


def test_an_echoed_key_and_key_query_parameters_are_masked_and_errors_replay(
    sdk: SimpleNamespace, tmp_path: Path
) -> None:
    echoed = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {KEY[:12]}****{KEY[-4:]}", "code": "invalid_api_key"}}
    )
    for server in serving(queue(Answer(echoed.encode(), 401, headers={"Set-Cookie": "session=abc"}))):
        model = sdk.runtime.HTTPModel(
            f"{server.base}/v1beta?key={KEY}", "m", wire="gemini", api_key=KEY, record=tmp_path
        )
        with pytest.raises(sdk.runtime.ProviderError) as live:
            model.complete(sdk.runtime.Request(USER))
    meta = json.loads((tmp_path / "0001.exchange.json").read_text())
    assert meta["url"].endswith("/v1beta/models/m:generateContent?key=***")
    assert meta["status"] == 401 and meta["response_headers"]["set-cookie"] == "***"
    assert meta["request_headers"]["x-goog-api-key"] == "***"
    assert "***" in (tmp_path / "0001.response.json").read_text() and meta["masked"] is True
    assert_no_secret(tmp_path, KEY)
    with pytest.raises(sdk.runtime.ProviderError) as replayed:
        sdk.runtime.ReplayModel.from_recordings(tmp_path).complete(sdk.runtime.Request(USER))
    assert (
        (replayed.value.status, replayed.value.code) == (live.value.status, live.value.code) == (401, "invalid_api_key")
    )


def test_retried_attempts_are_not_recorded(sdk: SimpleNamespace, tmp_path: Path) -> None:
    answers = [Answer(b'{"error": {"message": "busy"}}', 503), *weather_answers()[1:]]
    for server in serving(queue(*answers)):
        policy = sdk.runtime.RetryPolicy(max_retries=1, backoff=0.01)
        model = sdk.runtime.HTTPModel(server.base + "/v1", "m", record=tmp_path, retry=policy)
        assert sdk.runtime.run(USER, model, tools_for(sdk), stream=True).stop_reason == "finished"
        assert len(server.seen) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "0001.exchange.json",
        "0001.request.json",
        "0001.response.sse",
    ]


def test_a_recorded_signed_bedrock_stream_keeps_its_bytes_and_no_credentials(
    sdk: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("botocore", reason="the bedrock extra (botocore) is not installed")
    recorded = shared_dir("payloads") / "bedrock-converse" / "stream" / "nova-micro-tool-use.eventstream"
    access, secret, token = (
        "AKIDRECORDTEST000001",
        "q8Zr/Tw2xKpL9vYc+E4mHn7bUj1sDg6fRa3oWi5e",
        "IQoJb3JpZ2luX2VjEJr8dGhpcyBpcyBhIHRlc3Q",
    )
    credentials = importlib.import_module("botocore.credentials").Credentials(access, secret, token)
    folder = tmp_path / "bedrock"
    for server in serving(queue(Answer(recorded.read_bytes(), content_type="application/vnd.amazon.eventstream"))):
        auth = sdk.runtime.SigV4("us-east-1", credentials=credentials)
        model = sdk.runtime.HTTPModel(server.base, "amazon.nova-micro-v1:0", wire="bedrock", auth=auth, record=folder)
        events = list(model.stream(sdk.runtime.Request(USER)))
        assert server.seen[0].headers["x-amz-security-token"] == token
    assert events[-1].complete
    assert (folder / "0001.response.eventstream").read_bytes() == recorded.read_bytes()
    assert_no_secret(folder, access, secret, token)
    checked = conformance(folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [(r["wire"], r["kind"]) for r in json.loads(checked.stdout)] == [
        ("bedrock-converse", "request"),
        ("bedrock-converse", "stream"),
    ]


def test_python_m_package_records_and_conformance_reads_it(
    weather: LocalServer, source_build: Path, tmp_path: Path
) -> None:
    """`--record` then `toolgen conformance` on the recordings, with no key inside them; an Azure deployment
    URL with `api-version`."""
    folder = tmp_path / "cli"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "RECORD_TEST_KEY": KEY}
    args = ["--base-url", weather.base + AZURE, "--model", "gpt-4o", "--api-key-env", "RECORD_TEST_KEY"]
    result = subprocess.run(
        [sys.executable, "-m", SOURCE_PACKAGE, *args, "--record", str(folder), "--stream", "weather?"],
        cwd=source_build,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert weather.seen[0].path == "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
    assert weather.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert_no_secret(folder, KEY)
    checked = conformance(folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert len(json.loads(checked.stdout)) == 4
    assert "0 failed" in checked.stderr


def test_record_without_an_endpoint_is_a_usage_error(source_build: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", SOURCE_PACKAGE, "--record", str(tmp_path), "hi"],
        cwd=source_build,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2 and "--record needs --base-url" in result.stderr


def test_unreadable_recordings_name_the_folder_or_file(sdk: SimpleNamespace, tmp_path: Path) -> None:
    replay = sdk.runtime.ReplayModel
    with pytest.raises(ValueError, match="no such folder of recordings"):
        replay.from_recordings(tmp_path / "missing")
    (tmp_path / "0001.exchange.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"0001\.exchange\.json: not a readable recording"):
        replay.from_recordings(tmp_path)
    (tmp_path / "0001.exchange.json").write_text(json.dumps({"response": "../../etc/passwd"}))
    with pytest.raises(ValueError, match="is not in the folder"):
        replay.from_recordings(tmp_path)
