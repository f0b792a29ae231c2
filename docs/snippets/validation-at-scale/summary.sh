# A month of traffic as one report: --summary counts calls per tool instead of printing every finding.
toolgen init
toolgen build --quiet
mkdir -p logs/2026-11
# One conversation a line: a good call, a call with a wrong argument, a call to a tool the package lacks.
cat > logs/2026-11/01.jsonl <<'JSON'
[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": "{\"location\": \"Paris\"}"}}, {"id": "c2", "type": "function", "function": {"name": "get_current_weather", "arguments": "{\"city\": \"Paris\"}"}}, {"id": "c3", "type": "function", "function": {"name": "book_flight", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "18 C"}, {"role": "tool", "tool_call_id": "c2", "content": "18 C"}]
JSON
cp logs/2026-11/01.jsonl logs/2026-11/02.jsonl
cp logs/2026-11/01.jsonl logs/2026-11/03.jsonl

# The exit code is the one without --summary: 1, since records are invalid.
toolgen validate --summary logs/2026-11/ --as messages > report.md || test $? = 1
cat report.md
grep -q "^| get_current_weather | 6 | 3 | 50.0% | arguments-invalid 3 | 0 |$" report.md
grep -q "^| book_flight (unknown) | 3 | 3 | 100.0% | pairing-invalid 3, unknown-tool 3 | 3 |$" report.md

# The same report as one JSON object.
toolgen validate --summary --format json logs/2026-11/ --as messages > report.json || test $? = 1
grep -q '"results_missing": 3' report.json
