"""toolgen from Python: the functions the command line calls, without printing or exiting."""

import json
import shutil
import tempfile
from pathlib import Path

import toolgen

with tempfile.TemporaryDirectory() as folder:
    root = Path(folder, "project")
    shutil.copytree(".", root)  # a copy of the built project, so nothing here changes
    (root / "logs").mkdir()
    (root / "logs" / "chat.jsonl").write_text(
        json.dumps({"role": "user", "content": "hi"}) + "\n" + json.dumps({"role": "tool", "content": "18 C"}) + "\n"
    )
    # --8<-- [start:api]
    report = toolgen.check(root)  # CheckResult(changed, diff, ...); report.ok
    findings = toolgen.lint(root, providers=("openai", "gemini"))  # Diagnostics
    exported, notes = toolgen.export(root, provider="anthropic")  # Export(provider, tools, notes)
    tally = toolgen.Tally()
    invalid = list(toolgen.validate([root / "logs"], kind="message", root=root, tally=tally))
    (root / "schemas" / "tools" / "broken.yaml").write_text("tools:\n  - name: 5\n")
    try:
        toolgen.build(root)
    except toolgen.InvalidInputError as error:  # every error carries its command's exit code
        for found in error.diagnostics:
            print(found.path, found.line, found.col, found.rule, found.message, error.exit_code)
    # --8<-- [end:api]
    print(report.ok, len(exported.tools) >= 3, tally.records, tally.invalid)
    print(invalid[0].rule, invalid[0].message)
    assert report.ok and tally.invalid == 1
