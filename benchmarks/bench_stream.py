"""Streaming benchmark: one long OpenAI chat stream through the JSON-parse floor, toolgen, the openai SDK and LiteLLM.

    python benchmarks/bench_stream.py            # full run (about a minute on 2 cores)
    python benchmarks/bench_stream.py --quick    # a few rounds, for a smoke test

The stream is synthetic but shaped like OpenAI's: every chunk carries id, created, model, system_fingerprint,
service_tier, usage:null and an obfuscation pad (random-looking, 4-13 characters, a new one on every chunk, as
OpenAI sends it); a few text deltas, then parallel tool calls streamed one after the other (slot 0, 1, ...), each
in hundreds of argument fragments, a finish chunk, a usage-only chunk and `[DONE]`. Each network read is one SSE event, as a server flushing per token sends it.

Contenders, all in the same process and interleaved round by round (medians over rounds; ratios within one run):
- floor: orjson.loads (if installed, else pydantic_core.from_json) of every chunk's JSON, nothing else; and, for
  reference, the floor plus one (frozen dataclass) event object per chunk, the least a per-chunk event API costs;
- toolgen: `stream_events(chunks, "openai-chat")`: SSE framing, JSON, canonical events per chunk, and the final
  canonical message at the end; once with one event per read, once with the body in 4 KiB reads (events split
  across reads, several per read), as a fast server's stream arrives;
- openai SDK: what `client.chat.completions.stream()` does per chunk: the SDK's SSEDecoder, `sse.json()`,
  `construct_type(ChatCompletionChunk)` and `ChatCompletionStreamState.handle_chunk`, then `get_final_completion()`;
- LiteLLM (when installed): json.loads, a `ModelResponseStream` per chunk, then `stream_chunk_builder(chunks)`.

Then every other wire the same way, each framed as its provider frames it (`stream_shapes.py`: `event:` lines,
CRLF, AWS eventstream, NDJSON), against the floors over its own payloads; and the fixed cost of one short stream.
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from stream_shapes import SHAPES, WORDS, Shape, arguments_of, pieces  # noqa: E402

from toolgen.runtime import MessageEnd, Response, ToolCallDelta, stream_events  # noqa: E402


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-C1KMEUDb1vVwsROQUCZTgG6A6vtWo",
        "object": "chat.completion.chunk",
        "created": 1754432618,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_ff25b2783a",
        "usage": None,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "obfuscation": "",
    }


def _pad(seq: int) -> str:
    """An obfuscation pad as OpenAI sends it: 4-13 random-looking characters, a different one on every chunk."""
    digest = base64.urlsafe_b64encode(hashlib.blake2b(seq.to_bytes(4, "big"), digest_size=12).digest())
    return digest.decode()[: 4 + seq % 10]


def _arguments(call: int, fragments: int) -> list[str]:
    """A JSON object written in `fragments` pieces of a few characters each, like model tokens."""
    return pieces(json.dumps(arguments_of(call, fragments)), fragments)


def synthetic_stream(calls: int = 8, fragments: int = 180, text_chunks: int = 40) -> list[bytes]:
    """The SSE body as the list of network reads (one event each)."""
    payloads: list[dict[str, Any]] = [_chunk({"role": "assistant", "content": "", "refusal": None})]
    payloads += [_chunk({"content": " " + WORDS[i % len(WORDS)]}) for i in range(text_chunks)]
    for call in range(calls):
        head = {
            "index": call,
            "id": f"call_{call:024d}",
            "type": "function",
            "function": {"name": f"tool_{call}", "arguments": ""},
        }
        payloads.append(_chunk({"tool_calls": [head]}))
        payloads += [
            _chunk({"tool_calls": [{"index": call, "function": {"arguments": piece}}]})
            for piece in _arguments(call, fragments)
        ]
    payloads.append(_chunk({}, "tool_calls"))
    usage = _chunk({})
    usage["choices"], usage["usage"] = [], {"prompt_tokens": 900, "completion_tokens": 4000, "total_tokens": 4900}
    payloads.append(usage)
    for seq, payload in enumerate(payloads):
        payload["obfuscation"] = _pad(seq)
    events = [b"data: " + json.dumps(p, separators=(",", ":")).encode() + b"\n\n" for p in payloads]
    return [*events, b"data: [DONE]\n\n"]


def data_of(chunks: list[bytes]) -> list[bytes]:
    return [chunk[6:-2] for chunk in chunks if chunk != b"data: [DONE]\n\n"]


# ---- contenders ----


def floor_parsers() -> dict[str, Callable[[bytes], Any]]:
    """The JSON parsers a floor is measured with: orjson.loads when installed, and pydantic_core.from_json (what
    toolgen's streams parse with)."""
    from pydantic_core import from_json

    parsers: dict[str, Callable[[bytes], Any]] = {}
    try:
        import orjson

        parsers["orjson.loads"] = orjson.loads
    except ImportError:
        print("orjson is not installed (`pip install orjson`): its floor is left out", file=sys.stderr)
    parsers["pydantic_core.from_json"] = from_json
    return parsers


def run_floor(payloads: list[bytes], loads: Callable[[bytes], Any]) -> None:
    for payload in payloads:
        loads(payload)


def run_floor_with_events(payloads: list[bytes], loads: Callable[[bytes], Any]) -> list[Any]:
    """The floor plus the least any per-chunk event API must do: one event object per chunk, kept in a list."""
    events: list[Any] = []
    for payload in payloads:
        loads(payload)
        events.append(ToolCallDelta(0, ""))
    return events


def run_toolgen(chunks: list[bytes]) -> Response:
    result = None
    for event in stream_events(chunks, "openai-chat"):
        if isinstance(event, MessageEnd):
            result = event.response
    assert isinstance(result, Response)
    return result


def openai_runner() -> Callable[[list[bytes]], Any] | None:
    try:
        from openai._models import construct_type
        from openai._streaming import SSEDecoder
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletionChunk
    except ImportError:
        return None

    def run(chunks: list[bytes]) -> Any:
        state: Any = ChatCompletionStreamState()
        for sse in SSEDecoder().iter_bytes(iter(chunks)):
            if sse.data.startswith("[DONE]"):
                break
            state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=sse.json()))
        return state.get_final_completion()

    return run


def litellm_runner() -> Callable[[list[bytes]], Any] | None:
    try:
        import litellm
        from litellm.types.utils import ModelResponseStream
    except ImportError:
        return None

    def run(payloads: list[bytes]) -> Any:
        chunks = [ModelResponseStream(**json.loads(payload)) for payload in payloads]
        return litellm.stream_chunk_builder(chunks)

    return run


def _calls_of(completion: Any) -> list[tuple[str, str]]:
    calls = completion.choices[0].message.tool_calls or []
    return [(call.function.name, call.function.arguments) for call in calls]


def check_agreement(chunks: list[bytes], contenders: dict[str, Callable[[], Any]]) -> None:
    """Every contender must build the same calls before any of them is timed."""
    ours = run_toolgen(chunks)
    expected = [(c["function"]["name"], c["function"]["arguments"]) for c in ours.message["tool_calls"]]
    for name, run in contenders.items():
        if name in ("openai SDK", "LiteLLM"):
            got = _calls_of(run())
            assert got == expected, f"{name} built different calls"


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in contenders}
    gc.collect()
    for _ in range(rounds):
        for name, run in contenders.items():
            times[name].append(timed(run))
    return times


def flatness(rounds: int) -> list[tuple[int, float]]:
    """toolgen's cost per chunk for one call streamed in ever more fragments: flat means no quadratic joins."""
    rows = []
    for fragments in (250, 1_000, 4_000, 16_000):
        chunks = synthetic_stream(calls=1, fragments=fragments, text_chunks=0)
        best = min(timed(partial(run_toolgen, chunks)) for _ in range(rounds))
        rows.append((len(chunks), best / len(chunks) * 1e6))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test, not a measurement")
    options = parser.parse_args()
    rounds = 3 if options.quick else 25

    chunks = synthetic_stream()
    payloads = data_of(chunks)
    body = b"".join(chunks)
    # The same body as a fast server's stream reaches the client: several events per read, split anywhere.
    reads = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    parsers = floor_parsers()
    loads = next(iter(parsers.values()))
    contenders: dict[str, Callable[[], Any]] = {
        **{f"floor ({name})": partial(run_floor, payloads, parser) for name, parser in parsers.items()},
        "floor + one event object per chunk": lambda: run_floor_with_events(payloads, loads),
        "toolgen stream_events": lambda: run_toolgen(chunks),
        "toolgen, 4 KiB reads": lambda: run_toolgen(reads),
    }
    sdk = openai_runner()
    if sdk is not None:
        contenders["openai SDK"] = lambda: sdk(chunks)
    lite = litellm_runner()
    if lite is not None:
        contenders["LiteLLM"] = lambda: lite(payloads)
    check_agreement(chunks, contenders)

    n_fragments = sum(1 for chunk in chunks if b'"arguments":"' in chunk) - 8
    size = sum(map(len, chunks))
    print(f"stream: {len(chunks)} chunks, {size / 1024:.0f} KiB, 8 parallel calls, {n_fragments} argument fragments")
    print(f"python {sys.version.split()[0]}, {rounds} rounds, medians; ratios against the floor of the same run\n")
    times = measure(contenders, rounds)
    floor = statistics.median(next(iter(times.values())))
    print("| contender | median ms | µs per chunk | x floor |\n|---|---:|---:|---:|")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"| {name} | {median * 1e3:.2f} | {median / len(chunks) * 1e6:.2f} | {median / floor:.2f} |")
    if lite is None:
        print("\nLiteLLM is not installed: `pip install litellm` to add it.")
    print("\ntoolgen, one call in ever more fragments (best of rounds):\n\n| chunks | µs per chunk |\n|---:|---:|")
    for count, per_chunk in flatness(max(3, rounds // 3)):
        print(f"| {count} | {per_chunk:.2f} |")
    print_wires(parsers, rounds)
    print_fixed_cost(rounds)


def print_wires(parsers: dict[str, Callable[[bytes], Any]], rounds: int) -> None:
    """Every other wire with its own framing: the floors over its payloads, then toolgen over its reads."""
    shapes = {name: build(8, 180, text) for name, (build, text) in SHAPES.items()}
    contenders: dict[tuple[str, str], Callable[[], Any]] = {}
    first_name, first = next(iter(parsers.items()))
    for name, shape in shapes.items():
        check_wire(shape)
        for parser_name, parser in parsers.items():
            contenders[name, parser_name] = partial(run_floor, shape.payloads, parser)
        contenders[name, "floor + events"] = partial(run_floor_with_events, shape.payloads, first)
        contenders[name, "toolgen"] = partial(run_wire, shape)
    times = measure({f"{a} / {b}": run for (a, b), run in contenders.items()}, rounds)
    floors = " | ".join(f"x {parser_name}" for parser_name in parsers)
    print(f"\nEvery wire with its real framing, medians of {rounds} interleaved rounds:\n")
    # The floor plus one event object per wire event, against the first floor: what any per-event API pays at least,
    # so the part of a wire's ratio that no decoder handing out events can remove.
    bound = f"floor + one event object, x {first_name}"
    print(f"| wire (framing) | events | toolgen ms | µs per event | {floors} | {bound} | x floor + one event object |")
    print("|---|---:|---:|---:|" + "---:|" * (len(parsers) + 2))
    for name, shape in shapes.items():
        ours = statistics.median(times[f"{name} / toolgen"])
        with_events = statistics.median(times[f"{name} / floor + events"])
        first_floor = statistics.median(times[f"{name} / {first_name}"])
        ratios = " | ".join(
            f"{ours / statistics.median(times[f'{name} / {parser_name}']):.2f}" for parser_name in parsers
        )
        print(
            f"| {name} | {len(shape.reads)} | {ours * 1e3:.2f} | {ours / len(shape.reads) * 1e6:.2f} | {ratios}"
            f" | {with_events / first_floor:.2f} | {ours / with_events:.2f} |"
        )


def run_wire(shape: Shape) -> Response:
    result = None
    for event in stream_events(shape.reads, shape.wire):
        if isinstance(event, MessageEnd):
            result = event.response
    assert isinstance(result, Response)
    return result


def check_wire(shape: Shape) -> None:
    """The stream must aggregate to its calls, complete, before it is timed."""
    result = run_wire(shape)
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.message["tool_calls"]]
    assert calls == shape.calls, f"{shape.wire} built different calls"
    assert "stream" not in result.extras, f"{shape.wire}: {result.extras['stream']}"


def print_fixed_cost(rounds: int) -> None:
    """What one short stream costs whole: a text delta and a finish, framing sniffed, final message decoded."""
    chunks = [
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}\n\n',
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ]
    number = 200
    best = min(timed(lambda: [run_toolgen(chunks) for _ in range(number)]) for _ in range(max(3, rounds // 3)))
    print(
        f"\nFixed cost of a stream (two chunks and [DONE], OpenAI chat, best of rounds): {best / number * 1e6:.1f} µs"
    )


if __name__ == "__main__":
    main()
