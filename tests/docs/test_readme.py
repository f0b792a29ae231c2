"""The README: short, its two set-up commands first, its examples run, its links lead to files that exist."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from support.docs_commands import command_problems
from support.docs_site import PROJECT_TOOLS, Block, blocks, run_in
from support.projects import REPO_ROOT

README = REPO_ROOT / "README.md"
README_LINES = 200
TEST_COMMAND = 'python -m pytest -n 2 -m "not (slow or browser or postgres or dask)"'


def _blocks(language: str) -> list[Block]:
    return [block for block in blocks(README) if block.language == language]


def test_the_readme_is_short_and_opens_with_the_two_set_up_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md is {len(lines)} lines; the manual belongs in docs/"
    first_screen = "\n".join(lines[:12])
    assert "pip install . && toolgen build" in first_screen
    assert f"pip install '.[test]' && {TEST_COMMAND}" in first_screen
    # CI runs the same command: a test command changed in one place only is caught here.
    assert TEST_COMMAND in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_tool_is_the_one_the_docs_project_builds() -> None:
    (tool,) = _blocks("yaml")
    assert "\n".join(tool.lines) + "\n" == (PROJECT_TOOLS / "order_status.yaml").read_text(encoding="utf-8")


def test_the_readme_python_examples_run_and_print_what_they_say(docs_project: Path, tmp_path: Path) -> None:
    examples = _blocks("python")
    assert len(examples) == 2
    for number, example in enumerate(examples):
        script = tmp_path / f"readme_example_{number}.py"
        script.write_text("\n".join(example.lines) + "\n", encoding="utf-8")
        ran = run_in(docs_project, sys.executable, str(script))
        assert ran.returncode == 0, f"{example.where}\n{ran.stderr}"
        printed = ran.stdout.splitlines()
        # A comment line of an example shows output: each one is a line the example printed.
        for line in example.lines:
            stated = re.match(r"^# (.*)$", line)
            if stated:
                assert stated[1] in printed, (example.where, stated[1], printed)
            trailing = re.match(r"^print\(.*\)\s+# (.*)$", line)
            if trailing and "the request" not in trailing[1]:
                assert trailing[1] in printed, (example.where, trailing[1], printed)


def test_the_readme_command_lines_are_ones_the_programs_take(package_help: dict[str, str]) -> None:
    problems = command_problems([*_blocks("bash"), *_blocks("console")], package_help)
    assert not problems, "\n".join(problems)


def test_the_readme_links_lead_to_files_that_exist() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    missing = [target for target in targets if "://" not in target and not (REPO_ROOT / target).exists()]
    assert targets and not missing, missing
