"""The CI page's local pre-commit hooks are toolgen's declared hooks, all three, each as declared; and the validate
hook checks recordings/ as the page's GitHub Actions job does, so a recording passes both or neither."""

from __future__ import annotations

import json
import re
import shlex

import yaml
from support.cli_in_process import toolgen_in
from support.projects import REPO_ROOT, Project

DECLARED = {hook["id"]: hook for hook in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
SNIPPETS = REPO_ROOT / "docs" / "snippets" / "ci"


def _local_hooks() -> list[dict[str, object]]:
    (local,) = yaml.safe_load((SNIPPETS / "pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"]
    hooks: list[dict[str, object]] = local["hooks"]
    return hooks


def test_the_local_hooks_are_the_declared_hooks_each_as_declared() -> None:
    local = _local_hooks()
    assert [hook["id"] for hook in local] == ["toolgen-check", "toolgen-lint", "toolgen-validate"]
    for hook in local:
        declared = {key: value for key, value in DECLARED[str(hook["id"])].items() if key != "description"}
        assert {**hook, "language": "python"} == declared, hook["id"]


def test_the_validate_hook_takes_the_recordings_the_job_validates_and_never_a_manifest() -> None:
    hook = DECLARED["toolgen-validate"]
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])
    job = (SNIPPETS / "github-actions.yaml").read_text(encoding="utf-8")
    (step,) = re.findall(r"toolgen validate (\S+) (--as \S+)", job)
    assert step == ("recordings/", " ".join(hook["args"]))
    assert files.search("recordings/chat.jsonl") and files.search("recordings/2024/chat.json")
    assert not files.search("tests/recordings/cassette.json"), "only the folder the job validates"
    assert exclude.search("recordings/toolgen-manifest.json")


def test_a_conversation_passes_the_validate_hook_as_it_passes_the_job(project: Project) -> None:
    hook = DECLARED["toolgen-validate"]
    conversation = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Sunny."}]
    project.write("recordings/chat.json", json.dumps(conversation))
    as_hook = toolgen_in(project.root, *shlex.split(hook["entry"])[1:], *hook["args"], "recordings/chat.json")
    assert as_hook.returncode == 0, as_hook.stdout + as_hook.stderr
    as_job = toolgen_in(project.root, "validate", "recordings/", "--as", "messages", "--format", "github")
    assert as_job.returncode == 0, as_job.stdout + as_job.stderr
