"""`toolgen.validate` from Python: the findings as the command prints them, with a Tally and a Summary filled in."""

import json
import tempfile
from pathlib import Path

import toolgen

call = {"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": '{"city": "Paris"}'}}
conversation = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [call]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
]

with tempfile.TemporaryDirectory() as logs:
    (Path(logs) / "chat.jsonl").write_text(json.dumps(conversation) + "\n", encoding="utf-8")
    tally, summary = toolgen.Tally(), toolgen.Summary()
    # root is the project whose generated package checks the records; dask="local:2" would run it on a cluster.
    findings = list(toolgen.validate([logs], kind="messages", root=".", tally=tally, summary=summary))

for finding in findings:
    print(finding.rule, finding.line, finding.message)
assert [finding.rule for finding in findings] == ["arguments-invalid", "arguments-invalid"]
assert (tally.records, tally.invalid, tally.unreadable) == (1, 1, 0)
weather = summary.tools["get_current_weather"]
assert (weather.calls, weather.invalid, weather.by_rule) == (1, 1, {"arguments-invalid": 1})
assert summary.rules == {"arguments-invalid": 2}
