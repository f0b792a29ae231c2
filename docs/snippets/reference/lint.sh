# Provider limits at build time: a dotted name only Gemini and MCP take, and a strict tool export must rewrite.
toolgen init
cat > schemas/tools/factorial.yaml <<'YAML'
tools:
  - name: math.factorial
    description: The factorial of a whole number.
    strict: true
    inputSchema:
      type: object
      properties:
        n: {type: [integer, "null"], minimum: 0}
        note: {type: string}
      required: [n]
YAML
if toolgen lint > all.txt; then exit 1; fi                  # every provider: exit 1 on the name
cat all.txt
grep -q "^schemas/tools/factorial.yaml:2:11: error name-pattern \[anthropic, " all.txt
grep -q "warning openai-strict-required .* export rewrites this: optional note made required and nullable" all.txt

toolgen lint --provider gemini --gemini-schema openapi > gemini.txt   # warnings only: exit 0
cat gemini.txt
grep -q "warning gemini-type \[gemini\] export rewrites this: type \['integer', 'null'\] sent as nullable" gemini.txt
toolgen lint --provider mcp --fail-on warning                # MCP takes the name: nothing to say
