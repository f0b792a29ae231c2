# A warning is printed and the build goes on; YAML is read as JSON would read it (YAML 1.2 core scalars).
toolgen init
cat > schemas/tools/set_flag.yaml <<'YAML'
tools:
  - name: set_flag
    description: Set a feature flag.
    inputSchema:
      type: object
      properties:
        answer: {type: string, enum: [yes, no]}   # yes and no stay strings
        code: {type: string, default: 010}        # 010 is the number ten: not a string
      required: [answer]
YAML
toolgen build > findings.txt                        # exit 0: warnings do not stop the build
cat findings.txt
grep -q "^schemas/tools/set_flag.yaml:8:39: warning default-invalid default 10 does not fit its own schema" findings.txt

# The same finding as JSON, with the JSON pointer of the value.
toolgen build --force --quiet --format json > findings.json
cat findings.json
grep -q '"pointer": "/tools/0/inputSchema/properties/code/default"' findings.json
grep -q 'answer: Literal\["yes", "no"\]' generated/toolgen_sdk/_tool_models/set_flag.py
