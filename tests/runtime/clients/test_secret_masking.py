"""What a model server sends back: the client's key masked wherever it echoes it, and bodies inflated to a cap.

The servers are real HTTP servers on 127.0.0.1 (tests/support/local_http.py). One echoes the key it was sent in a
successful answer, in every spelling it can take (as is, URL-encoded, base64 at each alignment inside a longer
run, standard and URL-safe, hex, JSON-escaped, cut short), in the text, the reasoning and a tool call's
arguments, whole and streamed, the key cut between two SSE reads and between two deltas: nothing of it reaches
a run's events, result, transcript, the tool, a recording or an error. Another sends gzip bombs (1 MiB that
inflates to 1 GiB) as answers and error bodies, whole and streamed: each is a ProviderError naming the cap, and
the process never holds the inflated body (its peak memory grows by far less than the bomb).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import re
import resource
import string
import urllib.parse
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.local_http import Answer, LocalServer, Received, serving

from toolgen import runtime as rt
from toolgen.runtime.clients.bodies import accept_encoding
from toolgen.runtime.clients.secrets import Redactor
from toolgen.runtime.clients.stream_mask import masked

KEY = "sk-test-Zq8/Lm+4Rt9=Vw2kXy7Pa0Jh3"
NO_RETRY = rt.RetryPolicy(max_retries=0)
USER = [{"role": "user", "content": "hi"}]
REQUEST = rt.Request(messages=USER)
SSE = "text/event-stream"
# The bytes before the key in a base64 run: whole groups of 3, so the key's own alignment is the padding's.
LEAD, TRAIL = b"<a base64 run>", b"</run>"


# ---- the key's spellings, and finding any of them ----


def spellings(secret: str) -> dict[str, str]:
    """Every spelling of `secret` an echo may use, whole."""
    raw = secret.encode()
    forms = {
        "as is": secret,
        "URL-encoded": urllib.parse.quote(secret, safe=""),
        "URL-encoded, lower case": re.sub(
            "%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(secret, safe="")
        ),
        "form-encoded": urllib.parse.quote_plus(secret),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "JSON-escaped": json.dumps(secret)[1:-1].replace("/", "\\/"),
    }
    for shift, pad in enumerate((b"", b"x", b"xy")):
        run = base64.b64encode(LEAD[: len(LEAD) // 3 * 3] + pad + raw + TRAIL).decode()
        forms[f"base64 at {shift}"] = run
        forms[f"URL-safe base64 at {shift}, unpadded"] = (
            base64.urlsafe_b64encode(LEAD[: len(LEAD) // 3 * 3] + pad + raw).decode().rstrip("=")
        )
    return forms


def _cores(secret: str) -> dict[str, str]:
    """The part of each spelling made of the key's bytes alone: a base64 run's ends carry the bytes around it."""
    raw = secret.encode()
    cores = {name: form for name, form in spellings(secret).items() if "base64" not in name}
    for shift, pad in enumerate((b"", b"x", b"xy")):
        alone = base64.b64encode(pad + raw).decode()[4:-4]
        cores[f"base64 at {shift}"] = alone
        cores[f"URL-safe base64 at {shift}"] = alone.replace("+", "-").replace("/", "_")
    return cores


def leaks(text: str, secret: str = KEY, run: int = 10, whole: bool = False) -> list[str]:
    """The spellings of which `run` characters in a row show in `text` (of the whole spellings, base64 runs with
    the bytes around the key, when `whole`)."""
    return [
        name
        for name, core in (spellings(secret) if whole else _cores(secret)).items()
        if any(core[i : i + run] in text for i in range(len(core) - run + 1))
    ]


def echo(secret: str) -> str:
    """A text that echoes the key in every spelling, and cut short as providers show it."""
    forms = spellings(secret)
    said = [f"{name}: {form}" for name, form in forms.items()]
    return "Your key, " + "; ".join(said) + f"; cut short: {secret[:12]}****{secret[-6:]}. Done."


def test_the_spellings_the_tests_look_for_are_in_the_echo() -> None:
    assert set(leaks(echo(KEY))) == set(_cores(KEY)), "a spelling the echo misses would test nothing"
    assert leaks("model gpt-4o-mini not found") == []


# ---- a server that echoes the key in its answers ----


def _key_of(received: Received) -> str:
    return received.headers.get("authorization", "").split()[-1]


def _tool_turn(received: Received) -> bool:
    return any(m.get("role") == "tool" for m in json.loads(received.body).get("messages", []))


def _arguments(secret: str) -> str:
    return json.dumps({"text": echo(secret), "key": secret, "url": urllib.parse.quote(secret, safe="")})


def _whole(secret: str, call: bool) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": echo(secret), "reasoning_content": echo(secret)}
    if call:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": _arguments(secret)}}
        ]
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
    body = {"id": f"chatcmpl-{secret}", "object": "chat.completion", "model": "m", "choices": [choice]}
    return json.dumps(body).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _streamed(secret: str, call: bool) -> bytes:
    """The answer as SSE: the key cut between two text deltas, two reasoning deltas and two argument fragments."""
    text, arguments = echo(secret), _arguments(secret)
    half = text.index(secret) + len(secret) // 2
    middle = arguments.index(secret) + 5
    chunks = [
        _chunk({"role": "assistant", "reasoning_content": text[:half]}),
        _chunk({"reasoning_content": text[half:]}),
        _chunk({"content": text[:half]}),
        _chunk({"content": text[half:]}),
    ]
    if call:
        start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "echo", "arguments": ""}}
        chunks += [
            _chunk({"tool_calls": [start]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:middle]}}]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[middle:]}}]}),
        ]
    chunks.append(_chunk({}, "tool_calls" if call else "stop"))
    return b"".join(chunks) + b"data: [DONE]\n\n"


def _echoing(received: Received) -> Answer:
    secret, call = _key_of(received), not _tool_turn(received)
    if json.loads(received.body).get("stream"):
        # Seven bytes a write: the key is cut between two reads of the stream too.
        return Answer(_streamed(secret, call), content_type=SSE, chunk=7)
    return Answer(_whole(secret, call))


@pytest.fixture
def echoing() -> Iterator[LocalServer]:
    yield from serving(_echoing)


def _texts(value: Any) -> str:
    """Everything a value shows: its repr, and its JSON where it has one."""
    return repr(value) + json.dumps(value, default=repr)


def _echo_tool(seen: list[Any]) -> rt.Registry:
    tools = rt.Registry({})
    tools.add("echo", {"type": "object"}, lambda args, ctx: seen.append(args) or "echoed")
    return tools


# ---- answers, whole and streamed ----


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_key_echoed_in_an_answer_reaches_no_event_result_transcript_tool_or_recording(
    echoing: LocalServer, tmp_path: Path, stream: bool
) -> None:
    model = rt.HTTPModel(echoing.base, "m", api_key=KEY, retry=NO_RETRY, record=tmp_path)
    seen: list[Any] = []
    try:
        events = rt.run_events(USER, model, _echo_tool(seen), stream=stream)
        shown = [json.dumps(event.data, default=repr) + repr(event) for event in events]
        result = events.result
    finally:
        model.close()
    assert result.stop_reason == "finished", result.error
    assert seen and result.text and "***" in result.text
    for text in [*shown, _texts(result.messages), repr(result), _texts(seen)]:
        assert leaks(text) == [], text
    recorded = sorted(tmp_path.iterdir())
    assert len(recorded) == 6  # two calls, three files each
    for path in recorded:
        assert leaks(path.read_bytes().decode("latin-1")) == [], path.name
    # The key went to the server: it is the echo that was masked, not the request.
    assert all(_key_of(r) == KEY for r in echoing.seen)


def _text_of(response: Any) -> str:
    return "".join(p["text"] for p in rt.parts_of(response.message["content"]) if p["type"] == "text")


def _words(text: str) -> list[str]:
    """The text's words, each holding a mask as the mask alone (a stream may show a key's first character)."""
    return ["***" if "***" in word else word for word in text.split()]


def test_streamed_deltas_hide_a_key_cut_between_them_and_keep_their_order(echoing: LocalServer) -> None:
    model = rt.HTTPModel(echoing.base, "m", api_key=KEY, retry=NO_RETRY)
    try:
        events = list(model.stream(REQUEST))
    finally:
        model.close()
    end = events[-1]
    assert isinstance(end, rt.MessageEnd) and end.complete, end
    text = "".join(e.text for e in events if isinstance(e, rt.TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, rt.ReasoningDelta))
    fragments = "".join(e.arguments for e in events if isinstance(e, rt.ToolCallDelta))
    for shown in (text, reasoning, fragments, *map(repr, events)):
        assert leaks(shown) == [], shown
    # Nothing is lost or given twice: the deltas are the final message, but for where each key was.
    final = _text_of(end.response)
    assert _words(text) == _words(final) and "***" in text
    assert text.startswith("Your key, as is: ") and text.endswith(" Done.")
    order = [type(e).__name__ for e in events]
    assert order.index("ToolCallStart") > max(i for i, n in enumerate(order) if n == "TextDelta")
    assert order[-2:] == ["Finish", "MessageEnd"]
    (ended,) = [e for e in events if isinstance(e, rt.ToolCallEnd)]
    assert json.loads(fragments) == json.loads(ended.arguments) == ended.parsed
    arguments = end.response.message["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments)["key"] == "***"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_async_calls_mask_answers_the_same(echoing: LocalServer, stream: bool) -> None:
    model = rt.HTTPModel(echoing.base, "m", api_key=KEY, retry=NO_RETRY)

    async def both() -> list[Any]:
        if not stream:
            return [await model.acomplete(REQUEST)]
        return [event async for event in model.astream(REQUEST)]

    out = asyncio.run(both())
    for value in out:
        assert leaks(repr(value)) == [], value
    response = out[-1] if not stream else out[-1].response
    assert "***" in _text_of(response)


def test_keys_in_credential_headers_are_masked_in_answers_too(echoing: LocalServer) -> None:
    model = rt.HTTPModel(echoing.base, "m", headers={"Authorization": f"Bearer {KEY}"}, retry=NO_RETRY)
    try:
        response = model.complete(REQUEST)
        events = list(model.stream(REQUEST))
    finally:
        model.close()
    assert leaks(repr(response)) == [] and all(leaks(repr(e)) == [] for e in events)


def test_a_server_echoing_encoded_keys_in_an_error_body_gets_them_masked() -> None:
    def refuse(received: Received) -> Answer:
        body = {"error": {"message": echo(_key_of(received)), "type": "auth", "code": "bad_key"}}
        return Answer(json.dumps(body).encode(), 401)

    for server in serving(refuse):
        model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
        try:
            with pytest.raises(rt.ProviderError) as raised:
                model.complete(REQUEST)
            events = list(model.stream(REQUEST))
        finally:
            model.close()
        error = raised.value
        assert error.status == 401 and "***" in error.message
        for shown in (repr(error), error.message, _texts(error.raw), *map(repr, events)):
            assert leaks(shown) == [], shown


# ---- the redactor and the stream mask, without HTTP ----


def test_tool_call_arguments_stay_json_whatever_the_echo_hides_in_them() -> None:
    redactor = Redactor([KEY])
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    for arguments in (
        json.dumps({"key": KEY, "n": 1}),
        json.dumps({"key": KEY.replace("/", "\\/")}),
        '{"key": "' + KEY.replace("/", "\\/") + '", "x": "a\\"b"}',
        '{"key": "' + escaped + '"}',
        json.dumps({"nested": [{"deep": f"prefix {KEY} suffix"}]}),
        json.dumps({KEY: "the key as a name"}),
    ):
        clean = redactor.arguments(arguments)
        assert json.loads(clean) is not None, clean
        assert leaks(json.dumps(json.loads(clean))) == [] and leaks(clean) == [], clean
    plain = json.dumps({"city": "Paris", "note": "a \\ backslash and \u00e9"})
    assert redactor.arguments(plain) is plain


def test_a_tool_call_end_keeps_its_arguments_json_and_its_parsed_value_clean() -> None:
    arguments = json.dumps({"key": KEY})
    end = rt.ToolCallEnd(0, "call_1", "echo", arguments, json.loads(arguments))
    (out,) = list(masked([end], Redactor([KEY])))
    assert isinstance(out, rt.ToolCallEnd)
    assert json.loads(out.arguments or "") == out.parsed == {"key": "***"}


def test_a_client_without_a_secret_does_no_work_on_its_events() -> None:
    events = [rt.TextDelta("a"), rt.TextDelta("b"), rt.Finish("stop")]
    assert masked(iter(events), Redactor([])).__class__ is iter(events).__class__
    assert list(masked(events, Redactor([]))) == events


def test_held_text_comes_out_before_the_events_after_it() -> None:
    redactor = Redactor([KEY])
    events = [rt.TextDelta("the key is sk"), rt.ToolCallStart(0, "c", "echo"), rt.TextDelta("-te"), rt.Finish("stop")]
    out = list(masked(events, redactor))
    assert [type(e).__name__ for e in out] == ["TextDelta", "TextDelta", "ToolCallStart", "TextDelta", "Finish"]
    assert "".join(e.text for e in out if isinstance(e, rt.TextDelta)) == "the key is sk-te"


SECRET_CHARS = string.ascii_letters + string.digits + "-_./+=~"
secrets = st.text(SECRET_CHARS, min_size=9, max_size=64)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)


def _cuts(text: str, points: list[int]) -> list[str]:
    points = sorted({min(p, len(text)) for p in points})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secrets, text=texts, points=st.lists(st.integers(0, 120), max_size=6))
def test_masking_never_changes_a_text_without_the_key(secret: str, text: str, points: list[int]) -> None:
    # Without 8 characters in a row of any spelling of the key, there is nothing to mask.
    assume(leaks(text, secret, run=8, whole=True) == [])
    redactor = Redactor([secret])
    assert redactor.text(text) == text
    assert redactor.value({"t": [text]}) == {"t": [text]}
    # Streamed in pieces, it comes out as it went in: all of it, once, in order.
    events = [rt.TextDelta(piece) for piece in _cuts(text, points)]
    assert "".join(e.text for e in masked(events, redactor)) == text  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secret=secrets,
    before=texts,
    after=texts,
    spelling=st.sampled_from(sorted(spellings(KEY))),
    points=st.lists(st.integers(0, 400), max_size=6),
)
def test_masking_always_removes_the_key(secret: str, before: str, after: str, spelling: str, points: list[int]) -> None:
    redactor = Redactor([secret])
    text = f"{before} {spellings(secret)[spelling]} {after}"
    assert leaks(redactor.text(text), secret, run=9) == []
    # Cut anywhere into deltas, the key is masked from its second character on.
    events = [rt.TextDelta(piece) for piece in _cuts(text, points)]
    streamed = "".join(e.text for e in masked(events, redactor))  # type: ignore[attr-defined]
    assert leaks(streamed, secret, run=9) == []


# ---- bodies inflated to a cap ----

GIB = 2**30


def _gzip(data_size: int, wbits: int = 31) -> bytes:
    """`data_size` zero bytes compressed: about a thousandth of that."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(16 * 2**20)
    parts = [packer.compress(block) for _ in range(data_size // len(block))]
    return b"".join(parts) + packer.flush()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    body = _gzip(GIB)
    assert len(body) < 2**21
    return body


def _peak_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _bombing(body: bytes, status: int, kind: str, encoding: str = "gzip") -> LocalServer:
    return LocalServer(lambda _: Answer(body, status, kind, {"content-encoding": encoding}))


@pytest.mark.parametrize(
    ("status", "kind", "cap"),
    [(200, "application/json", "32 MiB"), (500, "application/json", "1 MiB"), (200, SSE, "32 MiB")],
    ids=["answer", "error body", "stream"],
)
def test_a_gzip_bomb_is_a_provider_error_naming_the_cap_and_never_held(
    bomb: bytes, status: int, kind: str, cap: str
) -> None:
    server = _bombing(bomb, status, kind)
    model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
    peak = _peak_mib()
    try:
        with pytest.raises(rt.ProviderError) as raised:
            model.complete(rt.Request(messages=USER))
        events = list(model.stream(REQUEST))

        async def both() -> tuple[BaseException, list[Any]]:
            try:
                await model.acomplete(REQUEST)
            except rt.ProviderError as error:
                return error, [event async for event in model.astream(REQUEST)]
            raise AssertionError("no error")

        aerror, aevents = asyncio.run(both())
    finally:
        model.close()
        server.close()
    assert _peak_mib() - peak < 200, "the bomb was inflated"
    for error, streamed in ((raised.value, events), (aerror, aevents)):
        assert isinstance(error, rt.ProviderError)
        assert error.type == "response_too_large" and cap in error.message, error
        end = streamed[-1]
        assert isinstance(end, rt.MessageEnd) and not end.complete
        assert isinstance(end.response, rt.ProviderError) and end.response.type == "response_too_large"
        assert cap in end.response.message
        if status >= 400:
            assert error.status == status


def test_a_bomb_wrapped_twice_or_in_deflate_is_capped_too(bomb: bytes) -> None:
    twice = zlib.compress(bomb, 9)  # zlib-wrapped deflate of the gzip bomb: `gzip, deflate`
    raw = _gzip(GIB // 4, wbits=-15)
    peak = _peak_mib()
    for body, encoding in ((twice, "gzip, deflate"), (raw, "deflate"), (_gzip(GIB // 4, 15), "deflate")):
        server = _bombing(body, 200, "application/json", encoding)
        model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
        try:
            with pytest.raises(rt.ProviderError, match="32 MiB cap") as raised:
                model.complete(REQUEST)
        finally:
            model.close()
            server.close()
        assert raised.value.type == "response_too_large", encoding
    assert _peak_mib() - peak < 200


def test_an_undecoded_body_past_the_cap_is_refused_too() -> None:
    body = json.dumps({"padding": "x" * 5000}).encode()
    server = LocalServer(lambda _: Answer(body))
    model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY, max_response_bytes=4096)
    try:
        with pytest.raises(rt.ProviderError, match="4 KiB cap") as raised:
            model.complete(REQUEST)
    finally:
        model.close()
        server.close()
    assert raised.value.type == "response_too_large"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_compressed_answer_within_the_cap_reads_as_ever(stream: bool) -> None:
    def answer(received: Received) -> Answer:
        body = _streamed("no key here at all", False) if stream else _whole("no key here at all", False)
        packed = zlib.compressobj(6, zlib.DEFLATED, 31)
        return Answer(
            packed.compress(body) + packed.flush(),
            content_type=SSE if stream else "application/json",
            headers={"content-encoding": "gzip"},
            chunk=50,
        )

    for server in serving(answer):
        model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
        try:
            response = list(model.stream(REQUEST))[-1].response if stream else model.complete(REQUEST)
        finally:
            model.close()
        assert isinstance(response, rt.Response)
        assert _text_of(response).startswith("Your key, as is: no key here at all")
        assert server.seen[0].headers["accept-encoding"] == accept_encoding()


def _optional(*names: str) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    pytest.skip(f"needs {' or '.join(names)}")


@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_br_and_zstd_bombs_are_capped_where_they_can_be_read(encoding: str) -> None:
    if encoding == "br":
        module = _optional("brotli")
        if "br" not in accept_encoding():
            pytest.skip("brotli older than 1.2 cannot give its output a bit at a time")
        body = module.compress(bytes(GIB // 4), quality=5)
    else:
        module = _optional("compression.zstd", "backports.zstd")
        body = module.compress(bytes(GIB // 4))
    server = _bombing(body, 200, "application/json", encoding)
    model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
    peak = _peak_mib()
    try:
        with pytest.raises(rt.ProviderError, match="32 MiB cap"):
            model.complete(REQUEST)
        assert server.seen[0].headers["accept-encoding"] == accept_encoding()
        assert encoding in accept_encoding()
    finally:
        model.close()
        server.close()
    assert _peak_mib() - peak < 200


def test_an_encoding_that_cannot_be_bounded_here_is_refused_by_name() -> None:
    if "br" in accept_encoding():
        pytest.skip("brotli 1.2 is installed: br is read, with a bound")
    server = _bombing(b"\x0b\x02\x80hi\x03", 200, "application/json", "br")
    model = rt.HTTPModel(server.base, "m", api_key=KEY, retry=NO_RETRY)
    try:
        with pytest.raises(rt.ProviderError, match="br-encoded") as raised:
            model.complete(REQUEST)
    finally:
        model.close()
        server.close()
    assert raised.value.type == "invalid_response"
    assert "br" not in server.seen[0].headers["accept-encoding"]
