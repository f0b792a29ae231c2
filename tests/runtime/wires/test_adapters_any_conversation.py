"""Any canonical conversation survives every wire; the wire modules import only the standard library."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_adapters_conversion import strip

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.gemini import codec as _wire_gemini
from toolgen.runtime.wires.helpers import args_text
from toolgen.runtime.wires.openai_chat import codec as _wire_openai_chat
from toolgen.runtime.wires.table import WIRES

# ---- canonical conversations survive every wire ----

names = st.sampled_from(["get_weather", "lookup", "send_mail"])
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
arguments = st.dictionaries(
    st.sampled_from(["city", "n", "ok"]), st.one_of(st.integers(-5, 5), texts, st.booleans()), max_size=3
)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    for turn in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(texts)})
        count = draw(st.integers(0, 3))
        calls = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": draw(names), "arguments": args_text(draw(arguments))},
            }
            for i in range(count)
        ]
        text = draw(st.one_of(st.none(), texts)) if calls else draw(texts)
        assistant: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls)
    return messages


def comparable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Only Gemini and Ollama results carry the tool's name; the rest of the message is what is compared.
    return [
        {key: value for key, value in strip(m).items() if not (m["role"] == "tool" and key == "name")} for m in messages
    ]


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations())
def test_canonical_conversations_survive_every_wire(wire: str, messages: list[dict[str, Any]]) -> None:
    conversions = codec(wire)
    back = conversions.decode_request(conversions.encode_request(Request(messages, model="m")))
    assert comparable(back.messages) == comparable(messages)


def test_the_wire_modules_import_only_the_standard_library_and_each_other() -> None:
    import ast
    import sys
    from pathlib import Path

    runtime = Path(_wire_openai_chat.__file__).parent
    for path in sorted(runtime.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module and node.module.split(".")[0] in sys.stdlib_module_names | {"__future__"}, path
            elif isinstance(node, ast.Import):
                assert all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names), path
    assert _wire_gemini.WIRE == "gemini"
