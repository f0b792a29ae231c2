# The user zone: ext/ and keep: are yours; any other file toolgen did not write stops the build.
toolgen init > /dev/null 2>&1
toolgen build --quiet > /dev/null 2>&1

mkdir -p generated/toolgen_sdk/ext
cat > generated/toolgen_sdk/ext/mine.py <<'PY'
# --8<-- [start:ext]
"""generated/toolgen_sdk/ext/mine.py: yours, next to the SDK it extends."""

from ..models import GetCurrentWeatherArgs


def paris() -> GetCurrentWeatherArgs:
    return GetCurrentWeatherArgs(location="Paris")
# --8<-- [end:ext]
PY
toolgen check  # ext/ is ignored: still up to date
python -c 'from toolgen_sdk.ext.mine import paris; print(paris())'

echo "notes" > generated/toolgen_sdk/NOTES.md
toolgen build || echo "exit $?"
echo "keep: [NOTES.md]" >> toolgen.yaml
toolgen build --quiet && echo "built"
