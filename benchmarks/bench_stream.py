"""Streaming benchmark: every wire's stream through toolgen's decoder, next to its JSON-parse floor, in CPU time and instructions.

    python benchmarks/bench_stream.py                  # 25 rounds and callgrind counts (about 2 minutes on 2 cores);
                                                       # rewrites its section of benchmarks/README.md
    python benchmarks/bench_stream.py --quick          # 3 rounds, no callgrind; prints only
    python benchmarks/bench_stream.py --generator DIR  # the runtime of another checkout (its generator/ folder)

Each wire's stream (`stream_shapes.py`, and the OpenAI chat stream below) goes through `stream_events(reads, wire)`,
consumed to its end: framing, JSON, a canonical event per chunk, and the final canonical message. The floors run
over the same events' JSON: `pydantic_core.from_json` of each payload (the parser toolgen uses), and that plus one
frozen-dataclass event object appended to a list per payload, the least any API that hands out an event per chunk
costs. The aim is each wire's stream within 2x its floor plus one event object, in CPU time.

CPU time (`time.process_time`) is taken round by round with every case interleaved, medians over rounds, ratios
within one run. Instructions are callgrind's: one child process runs every case once as a warm-up, then each case
twice inside `functools.reduce`, the only code counted (see `instructions.py`).

The OpenAI chat stream is synthetic but shaped like OpenAI's: every chunk carries id, created, model,
system_fingerprint, service_tier, usage:null and an obfuscation pad (a new one of 4-13 characters on every chunk, as
OpenAI sends it); a few text deltas, then parallel tool calls streamed one after the other, each in hundreds of
argument fragments, a finish chunk, a usage-only chunk and `[DONE]`, once a read per event, once in 4 KiB reads.
Next to it, what a user would otherwise run: the openai SDK's `ChatCompletionStreamState` (as
`client.chat.completions.stream()` does per chunk) and LiteLLM's `stream_chunk_builder` (when installed).
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import instructions
from readme_markers import replace_between
from stream_shapes import SHAPES, WORDS, arguments_of, pieces

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
README = HERE / "README.md"
START = "<!-- stream-results:start (written by benchmarks/bench_stream.py; do not edit by hand) -->"
END = "<!-- stream-results:end -->"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
AIM = 2.0
# Runs of each case inside the counted reduce.
COUNTED_RUNS = 2


def toolgen(generator: Path) -> SimpleNamespace:
    """The runtime's streaming entry points, imported from `generator` (a folder holding the toolgen package)."""
    sys.path.insert(0, str(generator))
    from toolgen.runtime import MessageEnd, Response, ToolCallDelta, stream_events

    return SimpleNamespace(
        MessageEnd=MessageEnd, Response=Response, ToolCallDelta=ToolCallDelta, stream_events=stream_events
    )


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


def synthetic_stream(calls: int = 8, fragments: int = 180, text_chunks: int = 40) -> list[bytes]:
    """The OpenAI chat SSE body as the list of network reads (one event each)."""
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
            for piece in pieces(json.dumps(arguments_of(call, fragments)), fragments)
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


@dataclass(frozen=True)
class Wire:
    """One wire's stream as the benchmark runs it: its reads, the JSON of each event, and the calls it must make."""

    name: str
    wire: str
    reads: list[bytes]
    payloads: list[bytes]
    calls: list[tuple[str, Any]]


def wires() -> list[Wire]:
    chunks = synthetic_stream()
    body = b"".join(chunks)
    calls = [(f"tool_{call}", arguments_of(call, 180)) for call in range(8)]
    found = [
        Wire("openai-chat (one event a read)", "openai-chat", chunks, data_of(chunks), calls),
        # The same body as a fast server's stream reaches the client: several events per read, split anywhere.
        Wire(
            "openai-chat (4 KiB reads)",
            "openai-chat",
            [body[i : i + 4096] for i in range(0, len(body), 4096)],
            data_of(chunks),
            calls,
        ),
    ]
    for name, (build, text) in SHAPES.items():
        shape = build(8, 180, text)
        found.append(Wire(name, shape.wire, shape.reads, shape.payloads, shape.calls))
    return found


# ---- contenders ----


def run_floor(payloads: list[bytes], loads: Callable[[bytes], Any]) -> None:
    for payload in payloads:
        loads(payload)


def run_floor_with_events(payloads: list[bytes], loads: Callable[[bytes], Any], event: type) -> list[Any]:
    """The floor plus the least any per-chunk event API must do: one event object per chunk, kept in a list."""
    events: list[Any] = []
    for payload in payloads:
        loads(payload)
        events.append(event(0, ""))
    return events


def run_toolgen(api: SimpleNamespace, reads: list[bytes], wire: str) -> Any:
    result = None
    for event in api.stream_events(reads, wire):
        if isinstance(event, api.MessageEnd):
            result = event.response
    assert isinstance(result, api.Response)
    return result


def check_wire(api: SimpleNamespace, wire: Wire) -> None:
    """The stream must aggregate to its calls, complete, before it is timed."""
    result = run_toolgen(api, wire.reads, wire.wire)
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.message["tool_calls"]]
    assert calls == wire.calls, f"{wire.name}: built different calls"
    assert "stream" not in result.extras, f"{wire.name}: {result.extras['stream']}"


SHORT_RUNS = 200


def cases(api: SimpleNamespace, found: list[Wire]) -> dict[str, Callable[[], Any]]:
    """Every counted case, by name: per wire its floor, its floor plus one event object, and toolgen; and the
    fixed cost, SHORT_RUNS short streams."""
    from pydantic_core import from_json

    made: dict[str, Callable[[], Any]] = {}
    for wire in found:
        made[f"{wire.name} / floor"] = partial(run_floor, wire.payloads, from_json)
        made[f"{wire.name} / floor + event"] = partial(
            run_floor_with_events, wire.payloads, from_json, api.ToolCallDelta
        )
        made[f"{wire.name} / toolgen"] = partial(run_toolgen, api, wire.reads, wire.wire)
    short = [
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}\n\n',
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ]
    made["short stream"] = lambda: [run_toolgen(api, short, "openai-chat") for _ in range(SHORT_RUNS)]
    return made


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


def others(api: SimpleNamespace, wire: Wire) -> dict[str, Callable[[], Any]]:
    """The openai SDK and LiteLLM over the OpenAI chat stream, each checked to build toolgen's calls first."""
    ours = run_toolgen(api, wire.reads, wire.wire)
    expected = [(c["function"]["name"], c["function"]["arguments"]) for c in ours.message["tool_calls"]]
    found: dict[str, Callable[[], Any]] = {}
    sdk, lite = openai_runner(), litellm_runner()
    if sdk is not None:
        found["openai SDK"] = partial(sdk, wire.reads)
    if lite is not None:
        found["LiteLLM"] = partial(lite, wire.payloads)
    for name, run in found.items():
        completion = run()
        calls = [(c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls or []]
        assert calls == expected, f"{name} built different calls"
    return found


# ---- measuring ----


def cpu_seconds(run: Callable[[], Any]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def measure(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median CPU seconds of each contender, all run round by round in turn."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    gc.collect()
    for _ in range(rounds):
        for name, run in contenders.items():
            times[name].append(cpu_seconds(run))
    return {name: statistics.median(samples) for name, samples in times.items()}


def flatness(api: SimpleNamespace, rounds: int) -> list[tuple[int, float]]:
    """toolgen's CPU cost per chunk for one call streamed in ever more fragments: flat means no quadratic joins."""
    rows = []
    for fragments in (250, 1_000, 4_000, 16_000):
        chunks = synthetic_stream(calls=1, fragments=fragments, text_chunks=0)
        best = min(cpu_seconds(partial(run_toolgen, api, chunks, "openai-chat")) for _ in range(rounds))
        rows.append((len(chunks), best / len(chunks) * 1e6))
    return rows


def counted(generator: Path, names: list[str]) -> dict[str, float]:
    """Instructions a run of each case, from one callgrind process of this script's --count mode."""
    command = [str(Path(__file__).resolve()), "--count", "--generator", str(generator)]
    return instructions.count(command, names, COUNTED_RUNS)


# ---- the report ----


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def report(
    found: list[Wire],
    cpu: dict[str, float],
    counts: dict[str, float] | None,
    compared: dict[str, float],
    flat: list[tuple[int, float]],
    head: list[str],
) -> str:
    lines = [*head, ""]
    counted_head = " | M instructions | x floor | x floor + event" if counts is not None else ""
    lines.append(
        "| wire (framing) | events | CPU ms | µs per event | x floor | x floor + event (aim 2x)" + counted_head + " |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if counts is not None else ""))
    for wire in found:
        ours, floor, bound = (cpu[f"{wire.name} / {case}"] for case in ("toolgen", "floor", "floor + event"))
        row = (
            f"| {wire.name} | {len(wire.payloads)} | {ours * 1e3:.2f} | {ours / len(wire.payloads) * 1e6:.2f}"
            f" | {ours / floor:.2f} | {ours / bound:.2f}{'' if ours / bound <= AIM else ' (over)'}"
        )
        if counts is not None:
            mine, low, with_event = (counts[f"{wire.name} / {case}"] for case in ("toolgen", "floor", "floor + event"))
            row += f" | {mine / 1e6:.1f} | {mine / low:.2f} | {mine / with_event:.2f}"
        lines.append(row + " |")
    lines.append("")
    short = cpu["short stream"] / SHORT_RUNS * 1e6
    fixed = f"{short:.1f} µs CPU"
    if counts is not None:
        fixed += f", {counts['short stream'] / SHORT_RUNS / 1e3:.1f} thousand instructions"
    lines.append(f"Fixed cost of a stream (two OpenAI chat chunks and [DONE], whole): {fixed}.")
    chat = found[0]
    if compared:
        floor = cpu[f"{chat.name} / floor"]
        ours = cpu[f"{chat.name} / toolgen"]
        lines += [
            "",
            f"The OpenAI chat stream ({len(chat.payloads)} chunks) next to what a user would otherwise run:",
            "",
        ]
        lines += ["| contender | CPU ms | x floor |", "|---|---:|---:|"]
        lines.append(f"| toolgen stream_events | {ours * 1e3:.2f} | {ours / floor:.2f} |")
        for name, seconds in compared.items():
            lines.append(f"| {name} | {seconds * 1e3:.2f} | {seconds / floor:.2f} |")
    lines += ["", "toolgen, one call in ever more fragments (best of rounds, CPU; flat means no quadratic joins):", ""]
    lines += ["| chunks | µs per chunk |", "|---:|---:|"]
    lines += [f"| {chunks} | {per_chunk:.2f} |" for chunks, per_chunk in flat]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, no callgrind; prints only")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--no-callgrind", action="store_true", help="CPU time only")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--generator", type=Path, default=REPO / "generator", help="the folder holding toolgen")
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)  # the callgrind child
    options = parser.parse_args()
    api = toolgen(options.generator.resolve())
    found = wires()
    every = cases(api, found)
    if options.count:
        instructions.run_counted(every, COUNTED_RUNS)
        return
    rounds = options.rounds or (3 if options.quick else 25)
    for wire in found:
        check_wire(api, wire)
    compared_runs = others(api, found[0])
    load_before = _load()
    cpu = measure({**every, **compared_runs}, rounds)
    compared = {name: cpu.pop(name) for name in compared_runs}
    flat = flatness(api, max(3, rounds // 3))
    load_after = _load()
    counts = None
    if not (options.quick or options.no_callgrind) and instructions.available():
        counts = counted(options.generator.resolve(), list(every))
    revision = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    # The results are committed: name the runtime by its place in this checkout, never by a machine's path.
    generator = options.generator.resolve()
    shown = generator.relative_to(REPO) if generator.is_relative_to(REPO) else "another checkout's generator/"
    head = [
        f"Command: `python benchmarks/bench_stream.py`{' --quick' if options.quick else ''}",
        "",
        f"- {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()},"
        f" {os.cpu_count()} CPUs; Python {platform.python_version()}; the runtime of {shown}"
        f" (working tree at {revision or '?'})",
        f"- CPU time: {rounds} rounds, every case interleaved, medians; 1-minute load average {load_before}"
        f" before, {load_after} after (2 cores: above 2, other work shared them)",
        "- Instructions: "
        + (
            f"callgrind, each case run {COUNTED_RUNS} times after a warm-up, counted alone, per stream"
            if counts is not None
            else "not counted (--quick, --no-callgrind or no valgrind)"
        ),
        "- x floor: against `pydantic_core.from_json` of each event's JSON; x floor + event: against that plus one"
        " frozen-dataclass event object per event (the aim: within 2x, CPU time)",
    ]
    section = report(found, cpu, counts, compared, flat, head)
    print(section)
    if not (options.quick or options.no_readme):
        replace_between(README, START, END, section)
        print(f"wrote {README}", file=sys.stderr)


if __name__ == "__main__":
    main()
