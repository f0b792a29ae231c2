# What the job's steps print on a pull request: GitHub annotations, one per finding.
toolgen init
toolgen build --quiet
toolgen check --format github                       # up to date: no annotation, exit 0

# A schema edited without a rebuild: each drifted file is an error annotation, and the step fails.
sed -i 's/Get the current weather in a given location./Get the weather now./' schemas/tools/get_current_weather.yaml
if toolgen check --format github --quiet > annotations.txt; then exit 1; fi
cat annotations.txt
grep -q "^::error file=generated/toolgen_sdk/tools.py,title=toolgen-drift::" annotations.txt

# Without git history, keep a snapshot as the baseline instead of a branch.
mkdir -p .ci
toolgen breaking --export .ci/tools-api.json        # when a change is meant to break
toolgen breaking --against .ci/tools-api.json --format github   # in CI: exit 0, nothing breaks callers

# Making an optional argument required breaks every call that leaves it out: an error annotation, exit 1.
sed -i 's/required: \[location\]/required: [location, unit]/' schemas/tools/get_current_weather.yaml
if toolgen breaking --against .ci/tools-api.json --format github > breaking.txt; then exit 1; fi
cat breaking.txt
grep -q "title=argument-made-required::" breaking.txt
