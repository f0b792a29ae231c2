"""A portable setting whose value is what the wire does when its field is absent is left out, not refused.

Cohere v2 chat documents tool_choice as "REQUIRED" or "NONE", and without it "the model is free to choose whether
to use the specified tools or not": the portable "auto". Ollama's /api/chat has no tool choice at all, and the
model always chooses. Both leave "auto" out of the body and say why in the plan; the values they cannot state
are still refused by name.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import encode_request
from toolgen.runtime.wires.settings import SettingProblem, UnsupportedSettings, checked_plan
from toolgen.runtime.wires.settings_table import wire_default

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather",
        "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    }
]
COHERE_WHY = (
    "'auto' is cohere's default, left out of the body: without tool_choice (which takes only REQUIRED or NONE) "
    "the model chooses whether to call a tool"
)
OLLAMA_WHY = (
    "'auto' is ollama's default, left out of the body: Ollama has no tool choice; the model always chooses "
    "whether to call a tool"
)


def sent(settings: dict[str, Any], wire: str, tools: list[dict[str, Any]] = TOOLS) -> tuple[dict[str, Any], Any]:
    plan = checked_plan(settings, wire, tools, "error")
    return encode_request(Request(USER, [dict(tool) for tool in tools], "m", plan.extras()), wire), plan


def bare(wire: str, tools: list[dict[str, Any]] = TOOLS, **fields: Any) -> dict[str, Any]:
    return {**encode_request(Request(USER, [dict(tool) for tool in tools], "m", {}), wire), **fields}


@pytest.mark.parametrize(("wire", "why"), [("cohere", COHERE_WHY), ("ollama", OLLAMA_WHY)])
def test_tool_choice_auto_is_left_out_as_the_wires_default_not_refused(wire: str, why: str) -> None:
    for tools in (TOOLS, []):
        body, plan = sent({"tool_choice": "auto", "max_tokens": 50}, wire, tools)
        assert plan.problems == ()
        assert dict(plan.left_out) == {"tool_choice": why}
        assert dict(plan.portable) == {"max_tokens": 50}
        assert "tool_choice" not in body
        assert body == sent({"max_tokens": 50}, wire, tools)[0]


def test_the_values_cohere_states_are_still_sent_and_left_out_says_nothing() -> None:
    for portable, spelled in (("required", "REQUIRED"), ("none", "NONE")):
        body, plan = sent({"tool_choice": portable}, "cohere")
        assert plan.problems == () and dict(plan.left_out) == {}
        assert body == bare("cohere", tool_choice=spelled)


def test_what_cohere_and_ollama_cannot_state_is_still_refused_by_name() -> None:
    with pytest.raises(UnsupportedSettings) as raised:
        checked_plan({"tool_choice": {"name": "get_weather"}}, "cohere", TOOLS)
    assert raised.value.problems == (
        SettingProblem(
            "tool_choice", "cohere", "cohere cannot state {'name': 'get_weather'}; it would send 'required'"
        ),
    )
    why = "ollama cannot carry it: Ollama has no tool choice (the model always chooses, as with 'auto')"
    for value in ("none", "required", {"name": "get_weather"}):
        with pytest.raises(UnsupportedSettings) as raised:
            checked_plan({"tool_choice": value}, "ollama", TOOLS)
        assert raised.value.problems == (SettingProblem("tool_choice", "ollama", why),)


def test_wires_with_a_word_for_auto_send_it() -> None:
    assert sent({"tool_choice": "auto"}, "gemini")[0]["toolConfig"]["functionCallingConfig"] == {"mode": "AUTO"}
    assert sent({"tool_choice": "auto"}, "bedrock-converse")[0]["toolConfig"]["toolChoice"] == {"auto": {}}
    for wire in ("openai-chat", "mistral", "openai-responses", "anthropic", "google-interactions", "gemini"):
        assert wire_default(wire, "tool_choice", "auto") is None
        assert dict(sent({"tool_choice": "auto"}, wire)[1].left_out) == {}


def test_a_refused_setting_beside_the_default_keeps_the_default_reason() -> None:
    plan = checked_plan({"tool_choice": "auto", "user": "u-1"}, "cohere", TOOLS, "note")
    assert [problem.setting for problem in plan.problems] == ["user"]
    assert dict(plan.left_out) == {"tool_choice": COHERE_WHY}
    # Planned again without a setting the probe found clashing: the reason stays.
    settings = {"tool_choice": "auto", "max_tokens": 10, "extra_body": {"max_tokens": 20}}
    plan = checked_plan(settings, "cohere", TOOLS, "note")
    assert [problem.setting for problem in plan.problems] == ["extra_body.max_tokens"]
    assert dict(plan.portable) == {"max_tokens": 10}
    assert dict(plan.left_out) == {"tool_choice": COHERE_WHY}
