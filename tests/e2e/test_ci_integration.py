"""The pre-commit hooks and the README's CI job name real toolgen commands, and the repository passes them."""

from __future__ import annotations

import re
import shlex

import yaml
from support.projects import REPO_ROOT

from toolgen.cli.main import main


def test_pre_commit_hooks_run_real_commands() -> None:
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} == {"toolgen-check", "toolgen-lint", "toolgen-validate"}
    for hook in hooks:
        program, command, *_ = shlex.split(hook["entry"])
        assert program == "toolgen" and command in main.commands, hook
        assert hook["language"] == "python"
        re.compile(hook["files"])


def test_readme_ci_job_uses_existing_commands_and_options() -> None:
    job = (REPO_ROOT / "docs" / "snippets" / "ci" / "github-actions.yaml").read_text(encoding="utf-8")
    # A step's toolgen command, alone or under the `if` that runs it only where its input exists.
    commands = re.findall(r"- run: (?:if .*?; then )?toolgen (\w+)([^;\n]*)", job)
    assert [name for name, _ in commands] == ["check", "lint", "breaking", "validate"]
    for name, rest in commands:
        options = {word.split("=")[0] for word in rest.split() if word.startswith("--")}
        known = {opt for param in main.commands[name].params for opt in getattr(param, "opts", [])}
        assert options <= known, (name, options - known)
