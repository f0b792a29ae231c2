"""A run setting is sent as the wire documents it, or named by a problem; never sent raw, guessed or half-written.

Pure request building: each case plans the settings for a wire (settings.plan_settings, as a run does), encodes
the request the run would send with the wire's codec, and asserts the exact body and the exact problems (the
note under on_unsupported="note", UnsupportedSettings under "error").
"""

from __future__ import annotations

from typing import Any

import pytest

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import encode_request
from toolgen.runtime.wires.settings import SettingProblem, UnsupportedSettings, checked_plan, plan_settings
from toolgen.runtime.wires.settings_table import EXPECTED

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather",
        "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    }
]


def body(settings: dict[str, Any], wire: str, tools: list[dict[str, Any]] = TOOLS) -> tuple[dict[str, Any], list[Any]]:
    """The body a run with `settings` sends under on_unsupported="note", and its problems."""
    plan = checked_plan(settings, wire, tools, "note")
    sent = encode_request(Request(USER, [dict(tool) for tool in tools], "m", plan.extras()), wire)
    return sent, list(plan.problems)


def bare(wire: str, tools: list[dict[str, Any]] = TOOLS, **fields: Any) -> dict[str, Any]:
    """The body with no settings, with `fields` put over it."""
    sent = encode_request(Request(USER, [dict(tool) for tool in tools], "m", {}), wire)
    return {**sent, **fields}


def refused(settings: dict[str, Any], wire: str, tools: list[dict[str, Any]] = TOOLS) -> list[SettingProblem]:
    with pytest.raises(UnsupportedSettings) as raised:
        checked_plan(settings, wire, tools, "error")
    return list(raised.value.problems)


WRONG_FORMS = [
    *(
        (wire, "temperature", value)
        for wire in ("openai-chat", "openai-responses", "gemini", "mistral", "cohere", "google-interactions")
        for value in (True, None, "0.5")
    ),
    *(
        (wire, "max_tokens", value)
        for wire in ("openai-chat", "anthropic", "mistral", "cohere")
        for value in (True, -5, 1.5, None)
    ),
    *((wire, "top_p", "0.9") for wire in ("openai-chat", "gemini")),
    ("gemini", "top_k", 4.5),
    ("openai-chat", "seed", True),
    ("openai-chat", "reasoning_effort", "turbo"),
    ("openai-chat", "metadata", {"team": 1}),
    ("openai-chat", "stop", ["END", 3]),
    ("openai-chat", "parallel_tool_calls", "no"),
    # Anthropic's, Mistral's and Gemini's word for "required", and Anthropic's needs an object.
    *((wire, "tool_choice", "any") for wire in ("openai-chat", "openai-responses", "anthropic", "cohere")),
    # OpenAI chat's own form, which no other wire takes.
    *(
        (wire, "tool_choice", {"type": "function", "function": {"name": "get_weather"}})
        for wire in ("openai-responses", "anthropic", "cohere", "google-interactions")
    ),
    ("anthropic", "tool_choice", {"type": "none", "disable_parallel_tool_use": True}),
    ("openai-responses", "tool_choice", {"type": "any"}),
    ("openai-chat", "response_format", {"type": "json_schema", "json_schema": {"schema": {}}}),
]


@pytest.mark.parametrize(("wire", "setting", "value"), WRONG_FORMS)
def test_a_value_in_neither_the_portable_nor_the_wires_form_is_refused_never_sent_raw(
    wire: str, setting: str, value: Any
) -> None:
    problem = SettingProblem(setting, wire, f"expected {EXPECTED[setting]}, got {value!r}")
    assert refused({setting: value}, wire) == [problem]
    sent, problems = body({setting: value}, wire)
    assert problems == [problem]
    assert sent == bare(wire)


OWN_FORMS = [
    ("openai-chat", "tool_choice", {"type": "function", "function": {"name": "get_weather"}}, "tool_choice"),
    ("openai-chat", "tool_choice", {"type": "custom", "custom": {"name": "get_weather"}}, "tool_choice"),
    ("mistral", "tool_choice", "any", "tool_choice"),
    ("mistral", "tool_choice", {"type": "function", "function": {"name": "get_weather"}}, "tool_choice"),
    ("openai-responses", "tool_choice", {"type": "function", "name": "get_weather"}, "tool_choice"),
    ("openai-responses", "tool_choice", {"type": "web_search_preview"}, "tool_choice"),
    ("anthropic", "tool_choice", {"type": "any", "disable_parallel_tool_use": True}, "tool_choice"),
    ("anthropic", "tool_choice", {"type": "tool", "name": "get_weather"}, "tool_choice"),
    ("anthropic", "tool_choice", {"type": "none"}, "tool_choice"),
    ("cohere", "tool_choice", "REQUIRED", "tool_choice"),
    ("anthropic", "metadata", {"user_id": "user-1"}, "metadata"),
    (
        "openai-chat",
        "response_format",
        {"type": "json_schema", "json_schema": {"name": "place", "schema": {"type": "object"}}},
        "response_format",
    ),
]


@pytest.mark.parametrize(("wire", "setting", "value", "field"), OWN_FORMS)
def test_a_portable_name_in_the_wires_own_documented_form_is_sent_as_given(
    wire: str, setting: str, value: Any, field: str
) -> None:
    sent, problems = body({setting: value}, wire)
    assert problems == []
    assert sent == bare(wire, **{field: value})


def test_interactions_takes_its_own_tool_choice_words_and_a_raw_schema_as_given() -> None:
    sent, problems = body({"tool_choice": "validated", "response_format": {"type": "object"}}, "google-interactions")
    assert problems == []
    config = {**bare("google-interactions").get("generation_config", {}), "tool_choice": "validated"}
    assert sent == bare("google-interactions", generation_config=config, response_format={"type": "object"})


def test_a_setting_a_clash_names_writes_nothing_of_itself() -> None:
    clash = "{}'s thinking.type is set by {} too; set it once"
    for wire, field in (("anthropic", "budget_tokens"), ("cohere", "token_budget")):
        sent, problems = body({"reasoning_effort": "none", "reasoning_budget": 2048}, wire)
        assert problems == [SettingProblem("reasoning_budget", wire, clash.format(wire, "reasoning_effort"))]
        assert sent == bare(wire, thinking={"type": "disabled"})
        # The other order: the budget is sent whole, the level is named.
        sent, problems = body({"reasoning_budget": 2048, "reasoning_effort": "none"}, wire)
        assert problems == [SettingProblem("reasoning_effort", wire, clash.format(wire, "reasoning_budget"))]
        assert sent == bare(wire, thinking={"type": "enabled", field: 2048})


def test_anthropics_thinking_budget_at_or_above_max_tokens_is_not_sent() -> None:
    reason = "anthropic's thinking budget (5000) must be below max_tokens (1000): raise max_tokens"
    sent, problems = body({"max_tokens": 1000, "reasoning_budget": 5000}, "anthropic")
    assert problems == [SettingProblem("reasoning_budget", "anthropic", reason)]
    assert sent == bare("anthropic", max_tokens=1000)
    # With Anthropic's required max_tokens left to its default (4096).
    reason = "anthropic's thinking budget (5000) must be below max_tokens (4096): raise max_tokens"
    sent, problems = body({"reasoning_budget": 5000, "service_tier": "auto"}, "anthropic")
    assert problems == [SettingProblem("reasoning_budget", "anthropic", reason)]
    assert sent == bare("anthropic", service_tier="auto")


def test_anthropic_metadata_holds_only_user_id() -> None:
    why = "anthropic cannot carry it: Anthropic's metadata holds only user_id: set `user`, or metadata={'user_id': ...}"
    for value in ({"a": "b"}, {"user_id": "user-1", "team": "blue"}):
        assert refused({"metadata": value}, "anthropic") == [SettingProblem("metadata", "anthropic", why)]
        sent, _ = body({"metadata": value}, "anthropic")
        assert sent == bare("anthropic")
    sent, problems = body({"user": "user-1"}, "anthropic")
    assert problems == [] and sent == bare("anthropic", metadata={"user_id": "user-1"})


def test_anthropic_tool_choice_none_takes_no_parallel_setting() -> None:
    reason = (
        "anthropic's tool_choice {'type': 'none'} has no disable_parallel_tool_use (no tool is called); "
        "leave parallel_tool_calls out"
    )
    for choice in ("none", {"type": "none"}):
        for parallel in (False, True):
            settings = {"tool_choice": choice, "parallel_tool_calls": parallel}
            assert refused(settings, "anthropic") == [SettingProblem("parallel_tool_calls", "anthropic", reason)]
            sent, problems = body(settings, "anthropic")
            assert problems == [SettingProblem("parallel_tool_calls", "anthropic", reason)]
            assert sent == bare("anthropic", tool_choice={"type": "none"})
    # Any other choice carries it.
    sent, problems = body({"tool_choice": "required", "parallel_tool_calls": False}, "anthropic")
    assert problems == []
    assert sent == bare("anthropic", tool_choice={"type": "any", "disable_parallel_tool_use": True})


def test_gemini_takes_a_thinking_level_or_a_thinking_budget_not_both() -> None:
    path = "generationConfig.thinkingConfig"
    why = "Gemini refuses a request with both (thinkingLevel is for Gemini 3 models, thinkingBudget for earlier ones)"
    reason = f"gemini's {path}.thinkingBudget cannot be set beside {path}.thinkingLevel, set by {{}}: {why}"
    sent, problems = body({"reasoning_effort": "low", "reasoning_budget": 2048}, "gemini")
    assert problems == [SettingProblem("reasoning_budget", "gemini", reason.format("reasoning_effort"))]
    assert sent == bare("gemini", generationConfig={"thinkingConfig": {"thinkingLevel": "low"}})
    assert refused({"reasoning_effort": "low", "reasoning_budget": 2048}, "gemini") == problems
    # Set by the wire's own thinkingConfig, then the portable budget.
    own = {"thinking_config": {"thinkingLevel": "high"}, "reasoning_budget": 100}
    sent, problems = body(own, "gemini")
    assert problems == [SettingProblem("reasoning_budget", "gemini", reason.format("thinking_config"))]
    assert sent == bare("gemini", generationConfig={"thinkingConfig": {"thinkingLevel": "high"}})
    # The other way round: the level is the one named.
    other = f"gemini's {path}.thinkingLevel cannot be set beside {path}.thinkingBudget, set by reasoning_budget: {why}"
    sent, problems = body({"reasoning_budget": 2048, "reasoning_effort": "low"}, "gemini")
    assert problems == [SettingProblem("reasoning_effort", "gemini", other)]
    assert sent == bare("gemini", generationConfig={"thinkingConfig": {"thinkingBudget": 2048}})
    # Either alone is sent.
    sent, problems = body({"reasoning_budget": 2048}, "gemini")
    assert problems == [] and sent == bare("gemini", generationConfig={"thinkingConfig": {"thinkingBudget": 2048}})


def test_a_tool_choice_the_wire_has_no_word_for_says_why_with_or_without_tools() -> None:
    none = "bedrock-converse cannot carry 'none': Converse's toolChoice takes auto, any or tool; it has no 'none'"
    for tools in (TOOLS, []):
        assert refused({"tool_choice": "none"}, "bedrock-converse", tools) == [
            SettingProblem("tool_choice", "bedrock-converse", none)
        ]
        sent, _ = body({"tool_choice": "none"}, "bedrock-converse", tools)
        assert sent == bare("bedrock-converse", tools)
    # What needs tools says so only when there are none.
    needs = "bedrock-converse cannot carry 'required' (it needs tools to choose from)"
    assert refused({"tool_choice": "required"}, "bedrock-converse", []) == [
        SettingProblem("tool_choice", "bedrock-converse", needs)
    ]
    sent, problems = body({"tool_choice": "required"}, "bedrock-converse")
    assert problems == []
    config = bare("bedrock-converse")["toolConfig"]
    assert sent == bare("bedrock-converse", toolConfig={**config, "toolChoice": {"any": {}}})


def test_a_portable_value_the_wire_carries_is_unchanged_by_these_checks() -> None:
    settings = {"max_tokens": 100, "temperature": 0.5, "tool_choice": "required", "reasoning_effort": "high"}
    sent, problems = body(settings, "openai-chat")
    assert problems == []
    wanted = {"max_completion_tokens": 100, "temperature": 0.5, "tool_choice": "required", "reasoning_effort": "high"}
    assert sent == bare("openai-chat", **wanted)
    assert plan_settings({"tool_choice": {"name": "get_weather"}}, "anthropic", TOOLS).problems == ()
