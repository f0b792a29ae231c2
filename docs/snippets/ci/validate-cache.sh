# What validate keeps between runs: plain validators and the resolved config, both throwaway.
toolgen init
toolgen build --quiet
mkdir recordings
echo '[{"role": "user", "content": "Weather in Paris?"}]' > recordings/chat.jsonl
echo '[{"role": "tool", "content": "18 C"}]' >> recordings/chat.jsonl

first=$(toolgen validate recordings/ --as messages || true)       # checks with the models, keeps validators
ls .toolgen-cache/validate/ .toolgen-cache/config.json
again=$(toolgen validate recordings/ --as messages || true)       # accepts line 1 with the kept validators
rm -rf .toolgen-cache/                                           # delete it at any time
fresh=$(toolgen validate recordings/ --as messages || true)
echo "$again"
test "$first" = "$again" && test "$again" = "$fresh"                 # every finding is the models' own
grep -q "^recordings/chat.jsonl:2:" <<<"$again"
