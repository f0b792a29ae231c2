"""Bedrock Converse over real HTTP on 127.0.0.1, signed with SigV4: the server recomputes every signature with
botocore from the request as it arrived and refuses a mismatch with 403, the way Bedrock does; it replays a
recorded ConverseStream as `application/vnd.amazon.eventstream`. Also the framing against botocore's own
eventstream decoder on the recorded streams."""

from __future__ import annotations

import asyncio
import hmac
import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, Received, queue, serving
from support.projects import shared_dir

botocore_auth = pytest.importorskip("botocore.auth", reason="the bedrock extra (botocore) is not installed")
from botocore.awsrequest import AWSRequest  # noqa: E402 - after the skip that guards it
from botocore.credentials import Credentials  # noqa: E402
from botocore.eventstream import EventStreamBuffer  # noqa: E402

ACCESS_KEY = "AKIDEXAMPLE7TESTKEY1"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKENvalue0123456789"
REGION = "eu-west-3"
MODEL = "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.amazon.nova-micro-v1:0"
USER = [{"role": "user", "content": "What is the temperature in the capital of France?"}]
EVENTSTREAM = "application/vnd.amazon.eventstream"
_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)


def signature_problem(received: Received, base: str, secrets: dict[str, str]) -> str | None:
    """Why the request's SigV4 signature is wrong, recomputed by botocore from what arrived; None when it is right."""
    match = _AUTHORIZATION.match(received.headers.get("authorization", ""))
    if match is None:
        return "no SigV4 Authorization header"
    secret = secrets.get(match["key"])
    if secret is None:
        return f"unknown access key {match['key']}"
    signed = match["signed"].split(";")
    if "x-amz-date" not in signed or "host" not in signed:
        return "host and x-amz-date must be signed"
    token = received.headers.get("x-amz-security-token")
    if token is not None and "x-amz-security-token" not in signed:
        return "the session token is not signed"
    request = AWSRequest(
        method=received.method,
        url=base + received.path,
        data=received.body,
        headers={name: received.headers[name] for name in signed},
    )
    request.context["timestamp"] = received.headers["x-amz-date"]
    signer = botocore_auth.SigV4Auth(Credentials(match["key"], secret, token), match["service"], match["region"])
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, match["signature"]):
        return "The request signature we calculated does not match the signature you provided."
    return None


class SigningBedrock:
    """A Bedrock stand-in: checks each request's signature, then answers with the next queued answer."""

    def __init__(self, *answers: Answer, secrets: dict[str, str] | None = None) -> None:
        self.answers = list(answers)
        self.secrets = secrets or {ACCESS_KEY: SECRET_KEY}
        self.problems: list[str] = []
        self.server = LocalServer(self)

    def __call__(self, received: Received) -> Answer:
        problem = signature_problem(received, self.server.base, self.secrets)
        if problem is not None:
            self.problems.append(problem)
            return Answer(
                json.dumps({"message": problem}).encode(),
                403,
                headers={
                    "x-amzn-ErrorType": "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/"
                },
            )
        return self.answers.pop(0) if self.answers else Answer(b'{"message": "no answer queued"}', 500)


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


@pytest.fixture(scope="module")
def recorded() -> Path:
    return shared_dir("payloads") / "bedrock-converse" / "stream" / "nova-micro-tool-use.eventstream"


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Credentials in the standard AWS variables only: no shared files of this machine, no instance metadata."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
        "AWS_BEARER_TOKEN_BEDROCK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    return monkeypatch


def tools_for(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()
    tools.add("get_temperature", {"type": "object"}, lambda args, ctx: {"city": args["city"], "celsius": 18})
    return tools


def calls_of(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]


def test_a_signed_bedrock_run_replays_a_recorded_conversestream(
    sdk: SimpleNamespace, recorded: Path, aws_env: pytest.MonkeyPatch
) -> None:
    """A Bedrock run through HTTPModel against a server that verifies the SigV4 signature with botocore and
    replays a recorded ConverseStream."""
    body = recorded.read_bytes()
    expected = calls_of(sdk.runtime.aggregate(body, "bedrock-converse").message)
    assert expected and expected[0][1] == "get_temperature"
    bedrock = SigningBedrock(Answer(body, content_type=EVENTSTREAM, chunk=57))
    try:
        model = sdk.runtime.HTTPModel(bedrock.server.base, MODEL, wire="bedrock")
        assert isinstance(model.auth, sdk.runtime.SigV4) and model.auth.region == REGION
        result = sdk.runtime.run(USER, model, tools_for(sdk), stream=True, max_steps=1)
        model.close()
    finally:
        bedrock.server.close()
    assert bedrock.problems == []
    assert result.stop_reason == "max_steps", result.error
    assert calls_of(result.messages[1]) == expected
    assert [(r.name, r.status) for r in result.calls] == [("get_temperature", "ok")]
    (seen,) = bedrock.server.seen
    # The model id is one path segment, its `:` and `/` quoted; Converse takes it from the path, not the body.
    assert seen.path == "/model/" + MODEL.replace(":", "%3A").replace("/", "%2F") + "/converse-stream"
    assert seen.headers["accept"] == EVENTSTREAM
    sent = json.loads(seen.body)
    assert "modelId" not in sent and "stream" not in sent
    assert sent["messages"] == [{"role": "user", "content": [{"text": USER[0]["content"]}]}]
    assert (
        f"Credential={ACCESS_KEY}/" in seen.headers["authorization"]
        and f"/{REGION}/bedrock/" in seen.headers["authorization"]
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_whole_converse_with_session_token_from_a_shared_profile(
    sdk: SimpleNamespace, aws_env: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    """The credential chain: a profile in the shared credentials file, with a session token, and its region."""
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    aws_env.delenv("AWS_REGION")
    (tmp_path / "credentials").write_text(
        f"[work]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
        f"aws_session_token = {SESSION_TOKEN}\n"
    )
    (tmp_path / "config").write_text(f"[profile work]\nregion = {REGION}\n")
    aws_env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    aws_env.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    aws_env.setenv("AWS_PROFILE", "work")
    payloads = shared_dir("payloads")
    answer = (payloads / "bedrock-converse" / "response" / "claude-sonnet45-tool-use.json").read_bytes()
    bedrock = SigningBedrock(Answer(answer))
    try:
        model = sdk.runtime.HTTPModel(bedrock.server.base, "anthropic.claude-sonnet-4-5", wire="bedrock-converse")
        request = sdk.runtime.Request(USER)
        response = model.complete(request) if mode == "sync" else asyncio.run(model.acomplete(request))
    finally:
        bedrock.server.close()
    assert bedrock.problems == [] and response.message["tool_calls"]
    (seen,) = bedrock.server.seen
    assert seen.path == "/model/anthropic.claude-sonnet-4-5/converse"
    assert seen.headers["x-amz-security-token"] == SESSION_TOKEN
    assert "x-amz-security-token" in seen.headers["authorization"]


def test_a_wrong_secret_is_refused_with_403_and_never_shown(sdk: SimpleNamespace, aws_env: pytest.MonkeyPatch) -> None:
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "not" + SECRET_KEY[3:])
    bedrock = SigningBedrock()
    try:
        model = sdk.runtime.HTTPModel(bedrock.server.base, "m", wire="bedrock")
        result = sdk.runtime.run(USER, model, tools_for(sdk), stream=True)
    finally:
        bedrock.server.close()
    assert len(bedrock.server.seen) == 1  # a 403 is not retried
    assert bedrock.problems == ["The request signature we calculated does not match the signature you provided."]
    error = result.error
    assert result.stop_reason == "error" and isinstance(error, sdk.runtime.ProviderError)
    assert error.status == 403 and "signature we calculated" in error.message
    assert ACCESS_KEY not in repr(error) and SECRET_KEY[3:] not in repr(error)


CONVERSE_OK = b'{"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}, "stopReason": "end_turn"}'


@pytest.fixture
def plain() -> Iterator[LocalServer]:
    yield from serving(queue(Answer(CONVERSE_OK)))


def test_bedrock_api_keys_are_bearer_tokens_and_need_no_signature(
    sdk: SimpleNamespace, aws_env: pytest.MonkeyPatch, plain: LocalServer
) -> None:
    model = sdk.runtime.HTTPModel(plain.base, "m", wire="bedrock", api_key="ABSKbedrockapikey0123")
    assert model.auth is None
    assert model.complete(sdk.runtime.Request(USER)).message["content"] == "ok"
    assert plain.seen[0].headers["authorization"] == "Bearer ABSKbedrockapikey0123"


def test_bedrock_without_credentials_or_region_says_what_to_set(
    sdk: SimpleNamespace, aws_env: pytest.MonkeyPatch
) -> None:
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ValueError, match="no AWS credentials: set AWS_ACCESS_KEY_ID"):
        sdk.runtime.HTTPModel(None, "m", wire="bedrock")
    aws_env.delenv("AWS_REGION")
    with pytest.raises(ValueError, match="no AWS region: pass region="):
        sdk.runtime.HTTPModel(None, "m", wire="bedrock", api_key="ABSKkey")
    model = sdk.runtime.HTTPModel(None, "m", wire="bedrock", api_key="ABSKkey", region="ap-south-1")
    assert model.base_url == "https://bedrock-runtime.ap-south-1.amazonaws.com"


# ---- the framing against botocore's decoder ----


def eventstreams() -> list[Path]:
    folder = shared_dir("payloads")
    found = sorted(folder.rglob("*.eventstream"))
    assert found, f"no .eventstream recordings under {folder}"
    return found


def botocore_frames(data: bytes, step: int) -> list[tuple[str | None, bytes, str]]:
    buffer = EventStreamBuffer()
    frames = []
    for start in range(0, len(data), step):
        buffer.add_data(data[start : start + step])
        for message in buffer:
            headers = message.headers
            kind = headers.get(":message-type", "event")
            name = {"exception": ":exception-type", "error": ":error-code"}.get(kind, ":event-type")
            frames.append((headers.get(name), message.payload, kind))
    return frames


def our_frames(sdk: SimpleNamespace, data: bytes, step: int) -> list[tuple[str | None, bytes, str]]:
    framing = importlib.import_module(f"{sdk.package.__name__}._runtime.streams.framing")
    decoder = framing.EventStreamDecoder()
    frames = [f for start in range(0, len(data), step) for f in decoder.feed(data[start : start + step])]
    frames += decoder.close()
    return [(f.event, f.data, f.kind) for f in frames]


def _chunkings(data: bytes) -> Iterator[int]:
    yield from (1, 7, 61, 4096, len(data))


def test_the_framing_reads_recorded_eventstreams_as_botocore_does(sdk: SimpleNamespace) -> None:
    for path in eventstreams():
        data = path.read_bytes()
        reference = botocore_frames(data, len(data))
        assert len(reference) > 3, path.name
        for step in _chunkings(data):
            assert our_frames(sdk, data, step) == botocore_frames(data, step) == reference, (path.name, step)


def test_the_framing_refuses_what_botocore_refuses(sdk: SimpleNamespace) -> None:
    """A flipped byte in each message's prelude, headers or payload: both decoders stop at the same message."""
    framing = importlib.import_module(f"{sdk.package.__name__}._runtime.streams.framing")
    for path in eventstreams():
        data = path.read_bytes()
        first_size = int.from_bytes(data[:4], "big")
        for offset in (2, 14, first_size - 6, first_size + 20):
            broken = bytearray(data)
            broken[offset] ^= 0x20
            with pytest.raises(Exception) as theirs:
                botocore_frames(bytes(broken), len(broken))
            with pytest.raises(framing.FramingError) as ours:
                our_frames(sdk, bytes(broken), len(broken))
            good = len(ours.value.frames)
            assert type(theirs.value).__name__ in ("ChecksumMismatch", "InvalidHeadersLength", "InvalidPayloadLength")
            assert good == (0 if offset < first_size else 1), (path.name, offset)
