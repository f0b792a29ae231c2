"""Canonical <-> Anthropic translation side by side: the generated SDK's adapters vs LiteLLM vs hand-written dicts,
and the import time of the generated SDK next to pydantic, openai, anthropic and litellm.

    python benchmarks/bench_adapters.py            # medians of many runs; prints markdown tables
    python benchmarks/bench_adapters.py --quick    # 3 rounds of 200 calls, a smoke test

The conversation is the issue's: 7 messages (system, user, assistant with two parallel tool calls, two tool
results, assistant answer, user follow-up) and 5 tools, to Anthropic and back, then the same on every wire the
SDK carries. Import times are fresh interpreters, medians of 7.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# LiteLLM fetches a price list from the network at import unless told to use its bundled copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def tool_definitions() -> list[dict[str, Any]]:
    """The 5 tools, made once per run and handed to every measurement."""
    return [
        {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()}.",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                "required": ["city"],
            },
        }
        for name in ("get_weather", "get_time", "get_forecast", "get_air_quality", "get_sunrise")
    ]


def conversation() -> list[dict[str, Any]]:
    """The 7 messages, made once per run and handed to every measurement."""
    return [
        {"role": "system", "content": "You are a concise weather assistant."},
        {"role": "user", "content": "What's the weather and the time in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"city": "Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 21, "conditions": "sunny"}'},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"time": "14:05"}'},
        {"role": "assistant", "content": "It is 21 °C and sunny in Paris, and 14:05."},
        {"role": "user", "content": "And tomorrow?"},
    ]


def hand_to_anthropic(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """What a developer writes by hand: no validation, no pairing checks, no extras."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            for c in m["tool_calls"]:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": c["id"],
                        "name": c["function"]["name"],
                        "input": json.loads(c["function"]["arguments"]),
                    }
                )
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return {
        "model": "claude",
        "max_tokens": 1024,
        "system": "\n".join(system),
        "messages": out,
        "tools": [
            {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]} for t in tools
        ],
    }


def hand_from_anthropic(body: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    for m in body["messages"]:
        if isinstance(m["content"], str):
            out.append({"role": m["role"], "content": m["content"]})
            continue
        calls = [b for b in m["content"] if b["type"] == "tool_use"]
        results = [b for b in m["content"] if b["type"] == "tool_result"]
        text = "".join(b["text"] for b in m["content"] if b["type"] == "text") or None
        if calls:
            out.append(
                {
                    "role": "assistant",
                    "content": text,
                    "tool_calls": [
                        {
                            "id": b["id"],
                            "type": "function",
                            "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
                        }
                        for b in calls
                    ],
                }
            )
        out.extend({"role": "tool", "tool_call_id": b["tool_use_id"], "content": b["content"]} for b in results)
        if not calls and not results:
            out.append({"role": m["role"], "content": text})
    return out


def median_us(function: Callable[[], Any], quick: bool) -> Callable[[], float]:
    """A measurement to take later, interleaved with the others (see `interleaved`): µs per call."""
    number = 200 if quick else 2000
    return lambda: timeit.timeit(function, number=number) / number * 1e6


def interleaved(rows: list[tuple[str, Any, Any]], quick: bool) -> list[tuple[str, float, float]]:
    """Each row's measurements taken round by round in turn, medians: load that comes and goes hits every row alike."""
    samples: dict[tuple[int, int], list[float]] = {}
    for _ in range(3 if quick else 9):
        for i, (_, *measures) in enumerate(rows):
            for j, measure in enumerate(measures):
                if callable(measure):
                    samples.setdefault((i, j), []).append(measure())
    return [
        (name, *(statistics.median(samples[i, j]) if callable(m) else m for j, m in enumerate(measures)))
        for i, (name, *measures) in enumerate(rows)
    ]


def translation_rows(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], quick: bool
) -> list[tuple[str, float, float]]:
    sys.path.insert(0, str(REPO / "generated"))
    from toolgen_sdk import adapters

    anthropic_body = hand_to_anthropic(messages, tools)
    ours_body = adapters.encode_request(messages, "anthropic", tools=tools, model="claude", max_tokens=1024)
    # What an application that sends the same tools with every request keeps: their export is made once per wire.
    tool_set = adapters.ToolSet(tools)
    assert adapters.encode_request(messages, "anthropic", tools=tool_set, model="claude", max_tokens=1024) == ours_body
    assert [m["role"] for m in ours_body["messages"]] == [m["role"] for m in anthropic_body["messages"]]
    rows = [
        (
            "hand-written dicts (no validation)",
            median_us(lambda: hand_to_anthropic(messages, tools), quick),
            median_us(lambda: hand_from_anthropic(anthropic_body), quick),
        ),
        (
            "toolgen adapters, with validation (encode_request / parse_request)",
            median_us(
                lambda: adapters.encode_request(messages, "anthropic", tools=tools, model="claude", max_tokens=1024),
                quick,
            ),
            median_us(lambda: adapters.parse_request(ours_body, "anthropic"), quick),
        ),
        (
            "toolgen adapters, with validation, tools as a ToolSet (exported once per wire)",
            median_us(
                lambda: adapters.encode_request(messages, "anthropic", tools=tool_set, model="claude", max_tokens=1024),
                quick,
            ),
            median_us(lambda: adapters.parse_request(ours_body, "anthropic"), quick),
        ),
        (
            "toolgen adapters, data only (_adapters.encode_request / decode)",
            median_us(
                lambda: adapters._encode_request(
                    adapters.Request(messages, tools, "claude", {"settings": {"max_tokens": 1024}}), "anthropic"
                ),
                quick,
            ),
            median_us(lambda: adapters.decode(ours_body, "anthropic", "request"), quick),
        ),
    ]
    rows.extend(_litellm_rows(messages, tools, anthropic_body, quick))
    return interleaved(rows, quick)


def wire_rows(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], quick: bool
) -> list[tuple[str, float, float]]:
    """encode_request (tools as a ToolSet) and parse_request of the same conversation on every wire the SDK carries,
    interleaved with the hand-written Anthropic translation they are compared with."""
    from toolgen_sdk import adapters

    tool_set = adapters.ToolSet(tools)
    anthropic_body = hand_to_anthropic(messages, tools)
    rows: list[tuple[str, Any, Any]] = [
        (
            "hand-written dicts, Anthropic (no validation)",
            median_us(lambda: hand_to_anthropic(messages, tools), quick),
            median_us(lambda: hand_from_anthropic(anthropic_body), quick),
        )
    ]
    for wire in adapters.WIRES:
        body = adapters.encode_request(messages, wire, tools=tool_set, model="claude", max_tokens=1024)

        def there(wire: str = wire) -> Any:
            return adapters.encode_request(messages, wire, tools=tool_set, model="claude", max_tokens=1024)

        def back(wire: str = wire, body: Any = body) -> Any:
            return adapters.parse_request(body, wire)

        rows.append((wire, median_us(there, quick), median_us(back, quick)))
    return interleaved(rows, quick)


def _litellm_rows(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], anthropic_body: dict[str, Any], quick: bool
) -> list[tuple[str, Any, Any]]:
    try:
        from litellm.litellm_core_utils.prompt_templates.factory import anthropic_messages_pt
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig
        from litellm.llms.anthropic.messages.adapters.transformation import LiteLLMAnthropicMessagesAdapter
    except ImportError:
        print("litellm not installed: its rows are skipped", file=sys.stderr)
        return []
    import litellm

    litellm.suppress_debug_info = True  # it prints a provider list per call otherwise, which would be timed too
    openai_tools = [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]},
        }
        for t in tools
    ]
    config = AnthropicConfig()
    adapter = LiteLLMAnthropicMessagesAdapter()
    request = {
        "model": "claude",
        "messages": anthropic_body["messages"],
        "system": anthropic_body["system"],
        "tools": anthropic_body["tools"],
        "max_tokens": 1024,
    }

    def transform() -> Any:
        return config.transform_request(
            "claude-sonnet-4-5", [dict(m) for m in messages], {"tools": openai_tools, "max_tokens": 1024}, {}, {}
        )

    def back() -> Any:
        return adapter.translate_anthropic_to_openai(request)  # type: ignore[arg-type]

    back()
    return [
        (
            "LiteLLM anthropic_messages_pt (messages only)",
            median_us(lambda: anthropic_messages_pt([dict(m) for m in messages], "claude", "anthropic"), quick),
            float("nan"),
        ),
        (
            "LiteLLM AnthropicConfig.transform_request / translate_anthropic_to_openai",
            median_us(transform, quick),
            median_us(back, quick),
        ),
    ]


def import_ms(statement: str, cwd: Path, runs: int) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print((time.perf_counter() - t) * 1000)"
    times = [
        float(subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    ]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    messages, tools = conversation(), tool_definitions()
    rows = translation_rows(messages, tools, options.quick)
    hand = rows[0]
    print("7 messages + 5 tools; microseconds per call, median\n")
    print("| translation | canonical -> Anthropic (us) | Anthropic -> canonical (us) | x hand-written |")
    print("| --- | --- | --- | --- |")
    for name, there, back in rows:
        ratio = f"{there / hand[1]:.1f}x / {back / hand[2]:.1f}x" if back == back else f"{there / hand[1]:.1f}x / -"
        print(f"| {name} | {there:.1f} | {'-' if back != back else f'{back:.1f}'} | {ratio} |")
    wires = wire_rows(messages, tools, options.quick)
    print("\nEvery wire, with validation: encode_request (tools as a ToolSet) / parse_request; microseconds per call\n")
    print("| wire | canonical -> wire (us) | wire -> canonical (us) | x hand-written Anthropic |")
    print("| --- | --- | --- | --- |")
    for name, there, back in wires:
        print(f"| {name} | {there:.1f} | {back:.1f} | {there / wires[0][1]:.1f}x / {back / wires[0][2]:.1f}x |")
    runs = 3 if options.quick else 7
    statements = {
        "pydantic with one model": "import pydantic\nclass M(pydantic.BaseModel):\n    a: int",
        "toolgen_sdk (generated)": "import toolgen_sdk",
        "toolgen_sdk + adapters": "import toolgen_sdk.adapters",
        "openai": "import openai",
        "anthropic": "import anthropic",
        "litellm": "import litellm",
    }
    print(f"\nImport in a fresh interpreter, ms, median of {runs}\n")
    print("| import | ms |")
    print("| --- | --- |")
    for name, statement in statements.items():
        try:
            print(
                f"| {name} | {import_ms(statement.replace(chr(10), '; ') if 'class' not in statement else 'exec(' + repr(statement) + ')', REPO / 'generated', runs):.0f} |"
            )
        except subprocess.CalledProcessError:
            print(f"| {name} | not installed |")


if __name__ == "__main__":
    main()
