# Each exit code of `toolgen`, met on a fresh project.
status() { "$@" >/dev/null 2>&1 && echo 0 || echo $?; }

toolgen init
test "$(status toolgen check)" = 1              # not built yet: one line saying to run `toolgen build`
toolgen build --quiet
test "$(status toolgen check)" = 0              # up to date

# An edit to a schema is drift: check prints a unified diff and exits 1.
sed -i 's/Get the current weather in a given location./Get the weather now./' schemas/tools/get_current_weather.yaml
test "$(status toolgen check)" = 1
toolgen build --quiet

# An option a verb has no use for is a usage error (2), and says so.
test "$(status toolgen decode --config toolgen.yaml reply.json)" = 2
said=$(toolgen decode --config toolgen.yaml reply.json 2>&1 || true)
grep -q -- "--config does not apply to \`toolgen decode\`" <<<"$said"

# Invalid input (3): a misspelled keyword stops the build, nothing written.
printf 'tools:\n  - name: lookup\n    inputSchema: {type: object, propertys: {}}\n' > schemas/tools/lookup.yaml
test "$(status toolgen build)" = 3
found=$(toolgen build 2>/dev/null || true)                # findings go to stdout
grep -q "^schemas/tools/lookup.yaml:3:33: error unknown-keyword " <<<"$found"
test ! -e generated/toolgen_sdk/_tool_models/lookup.py   # the package is as it was
rm schemas/tools/lookup.yaml
test "$(status toolgen check)" = 0
