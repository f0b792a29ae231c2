# `toolgen decode` of a recorded Anthropic response: wire and kind detected, canonical JSON out.
cp "$(dirname "$0")/weather.response.json" .
toolgen decode weather.response.json
