"""The README's Python examples, run as written in the docs' project, and their stated output checked."""

import contextlib
import io
import re
from pathlib import Path

readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
examples = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
assert len(examples) == 2, len(examples)
for example in examples:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, "README.md", "exec"), {})
    # Every line a comment of the example shows as output is a line it printed.
    stated = [line[2:] for line in example.splitlines() if line.startswith("# ")]
    for line in stated:
        assert line in printed.getvalue().splitlines(), (line, printed.getvalue())
print(len(examples), "README examples ran")
