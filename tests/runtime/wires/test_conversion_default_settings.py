"""Converting a request whose setting is the target wire's default says it was left out as that default."""

from __future__ import annotations

import pytest

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.losses import encode_request_noted


@pytest.mark.parametrize("target", ["cohere", "ollama"])
def test_tool_choice_auto_is_left_out_as_the_wires_default_not_dropped(target: str) -> None:
    request = Request([{"role": "user", "content": "hi"}], extras={"settings": {"tool_choice": "auto"}})
    encoded = encode_request_noted(request, target)
    assert "tool_choice" not in encoded.body
    (note,) = [each for each in encoded.notes if each.startswith("tool_choice:")]
    assert note.startswith(f"tool_choice: 'auto' is {target}'s default, left out of the body: "), note
    assert "dropped" not in note


def test_a_setting_with_no_equivalent_is_still_said_dropped() -> None:
    request = Request([{"role": "user", "content": "hi"}], extras={"settings": {"tool_choice": "required"}})
    encoded = encode_request_noted(request, "ollama")
    assert "tool_choice: ollama has no equivalent setting; dropped" in encoded.notes
