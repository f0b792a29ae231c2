"""A tool's result on its way back, to the model and over MCP: what JSON cannot hold is refused or made sendable."""

from __future__ import annotations

import importlib
import json
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def rt(source_package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{source_package.__name__}._runtime")


def _call(location: str) -> dict[str, object]:
    arguments = json.dumps({"location": location})
    return {"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": arguments}}


def test_a_typed_result_holding_nan_is_a_tool_error_not_null_against_its_schema(source_package: ModuleType) -> None:
    # pydantic writes NaN as null, which the output schema (a number) never allows: it went out as a success.
    tools = source_package.Tools()
    model = source_package.GetCurrentWeatherResult

    @tools.get_current_weather.handler
    def weather(args: object, ctx: object) -> object:
        return model(location="Paris", temperature=float("nan"), unit="celsius")

    outcome = tools.dispatch(_call("Paris"))
    assert outcome.is_error
    assert "Out of range float values are not JSON compliant" in str(outcome.content)


def test_a_structured_result_with_a_lone_surrogate_goes_over_mcp_as_u_fffd(
    source_package: ModuleType, rt: ModuleType
) -> None:
    # A file name that is no UTF-8, as os.listdir gives it, in a plain result: the SDK's writer had failed and
    # the stdio server exited.
    server = importlib.import_module(f"{source_package.__name__}._runtime.mcp.server")
    tools = source_package.Tools()
    result = {"location": "caf\udce9.txt", "temperature": 20.0, "unit": "celsius"}
    outcome = rt.ToolOutcome("c1", "get_current_weather", "caf\ufffd.txt", result)
    sent = server.call_result(tools, outcome)
    json.dumps(sent, ensure_ascii=False).encode("utf-8")  # what the SDK's writer does
    assert sent["structuredContent"]["location"] == "caf\ufffd.txt"
    assert result["location"] == "caf\udce9.txt", "the outcome itself is left as it was"


def test_a_typed_result_holding_a_lone_surrogate_is_a_tool_error(source_package: ModuleType) -> None:
    tools = source_package.Tools()
    model = source_package.GetCurrentWeatherResult

    @tools.get_current_weather.handler
    def weather(args: object, ctx: object) -> object:
        return model(location="caf\udce9", temperature=20.0, unit="celsius")

    outcome = tools.dispatch(_call("Paris"))
    assert outcome.is_error and "could not be sent back" in str(outcome.content)
