"""The GitHub Actions job and the pre-commit config of the CI page, checked on a copy of a built project."""

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[2]  # docs/snippets/ci/ -> toolgen's repository

# The pre-commit hooks: the local hooks are the hooks of .pre-commit-hooks.yaml, every one, each as declared (its
# entry, args, files, exclude, pass_filenames), run by the toolgen installed (language: system).
declared = {hook["id"]: hook for hook in yaml.safe_load((REPOSITORY / ".pre-commit-hooks.yaml").read_text())}
assert sorted(declared) == ["toolgen-check", "toolgen-lint", "toolgen-validate"]
(local,) = yaml.safe_load((HERE / "pre-commit-config.yaml").read_text())["repos"]
assert local["repo"] == "local"
assert [hook["id"] for hook in local["hooks"]] == sorted(declared)
for hook in local["hooks"]:
    assert hook["language"] == "system", hook
    same = {key: value for key, value in declared[hook["id"]].items() if key not in ("language", "description")}
    assert {key: value for key, value in hook.items() if key != "language"} == same, hook
validate_files = re.compile(declared["toolgen-validate"]["files"])
assert validate_files.search("recordings/chat.jsonl")
assert not validate_files.search("generated/toolgen_sdk/toolgen-manifest.json")
# The hook checks recordings as the job's last step does.
assert declared["toolgen-validate"]["args"] == ["--as", "messages"]

# The job's steps after the install, run as written on a copy of this project kept in git.
steps = yaml.safe_load((HERE / "github-actions.yaml").read_text())["jobs"]["toolgen"]["steps"]
install, *checks = [step["run"] for step in steps if "run" in step]
assert install == "pip install -r requirements-toolgen.txt"
with tempfile.TemporaryDirectory() as scratch:
    project = Path(scratch) / "project"
    shutil.copytree(".", project, ignore=shutil.ignore_patterns(".toolgen-cache", "__pycache__"))

    def git(*args: str) -> None:
        identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com"]
        subprocess.run(["git", *identity, *args], cwd=project, check=True, capture_output=True)

    git("init", "--quiet")
    git("add", "-A")
    git("commit", "--quiet", "-m", "tools")
    git("update-ref", "refs/remotes/origin/main", "HEAD")  # the pull request's base branch, fetched

    def run(step: str) -> subprocess.CompletedProcess[str]:
        command = step.replace("${{ github.base_ref }}", "main")
        return subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, check=False)

    for step in checks:
        ran = run(step)
        assert ran.returncode == 0, (step, ran.stdout, ran.stderr)
    # With recordings, the last step checks them: a call without its result is an annotation and exit 1.
    (project / "recordings").mkdir()
    call = {"id": "call_1", "type": "function", "function": {"name": "get_current_weather", "arguments": "{}"}}
    conversation = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    (project / "recordings" / "chat.jsonl").write_text(json.dumps(conversation) + "\n")
    ran = run(checks[-1])
    assert ran.returncode == 1, ran.stderr
    assert ran.stdout.startswith("::error file=recordings/chat.jsonl,line=1,"), ran.stdout
print(f"{len(checks)} steps passed; {len(local['hooks'])} local hooks match .pre-commit-hooks.yaml")
