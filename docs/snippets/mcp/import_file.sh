# An exported or recorded tools list (here OpenAI's format) becomes schema files too.
cat > tools.json <<'JSON'
[{"type": "function", "function": {"name": "get_forecast", "description": "The forecast for the next days.",
  "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}]
JSON
toolgen import tools.json --from openai
grep "name: get_forecast" schemas/tools/get_forecast.yaml
