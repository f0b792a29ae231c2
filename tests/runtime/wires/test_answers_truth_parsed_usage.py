"""parse_response with a usage whose count the server sent unreadable: the typed usage is None (the Usage model
requires both counts), the counts read stay on the response with a note, and nothing raises."""

from __future__ import annotations

import json
import subprocess
import sys

from support.projects import REPO_ROOT

PROBE = """
import json, sys
from toolgen_sdk.adapters import parse_response
body = json.loads(sys.argv[1])
parsed = parse_response(body, "openai-chat")
usage = None if parsed.usage is None else parsed.usage.model_dump(exclude_none=True)
print(json.dumps({"typed": usage, "read": parsed.response.usage, "notes": parsed.response.extras.get("notes")}))
"""


def _parsed(usage: dict[str, object]) -> dict[str, object]:
    body = {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": usage,
    }
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(body)],
        cwd=REPO_ROOT / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    parsed: dict[str, object] = json.loads(ran.stdout)
    return parsed


def test_an_unreadable_count_leaves_the_typed_usage_out_and_keeps_the_counts_read() -> None:
    parsed = _parsed({"prompt_tokens": "5", "completion_tokens": 3, "total_tokens": 8})
    assert parsed["typed"] is None
    assert parsed["read"] == {"output_tokens": 3, "total_tokens": 8}
    assert parsed["notes"] == [
        {
            "type": "bad_usage_count",
            "message": 'openai-chat sent usage.prompt_tokens "5", not a number: it is left out of the usage',
            "field": "usage.prompt_tokens",
        }
    ]


def test_a_whole_usage_is_typed() -> None:
    parsed = _parsed({"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8})
    assert parsed["typed"] == {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    assert parsed["notes"] is None
