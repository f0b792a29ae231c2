"""The options every verb shares (-C, --config, --format, --quiet, --fail-on), the progress lines and the summaries."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import WEATHER, Project

from toolgen.cli.main import main

# Each verb with the least it needs to get past parsing, and the shared options it takes.
VERBS: dict[str, tuple[list[str], frozenset[str]]] = {
    "init": ([], frozenset({"-C"})),
    "build": ([], frozenset({"-C", "--config", "--format"})),
    "check": ([], frozenset({"-C", "--config", "--format"})),
    "lint": ([], frozenset({"-C", "--config", "--format"})),
    "export": (["--format", "openai"], frozenset({"-C", "--config"})),
    "validate": (["payload.json", "--as", "message"], frozenset({"-C", "--config", "--format"})),
    "breaking": (["--against", "snapshot.json"], frozenset({"-C", "--config", "--format"})),
    "decode": (["payload.json"], frozenset({"-C", "--format"})),
    "encode": (["payload.json", "--wire", "anthropic"], frozenset({"-C", "--format"})),
    "convert": (["payload.json", "--to", "anthropic"], frozenset({"-C", "--format"})),
    "conformance": (["payloads"], frozenset({"-C", "--format"})),
    "import": (["payload.json", "--from", "openai"], frozenset({"-C"})),
}
SHARED = {"-C": ["-C", "."], "--config": ["--config", "toolgen.yaml"], "--format": ["--format", "json"]}


def toolgen(cwd: Path, *args: str) -> Ran:
    return toolgen_in(cwd, *args)


def test_the_table_names_every_verb() -> None:
    assert set(VERBS) == set(main.commands)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_shared_option_is_taken_or_refused_with_a_reason(verb: str, tmp_path: Path) -> None:
    (tmp_path / "payloads").mkdir()
    (tmp_path / "payload.json").write_text("{}", encoding="utf-8")
    (tmp_path / "snapshot.json").write_text("{}", encoding="utf-8")
    needed, taken = VERBS[verb]
    for option, given in SHARED.items():
        result = toolgen(tmp_path, verb, *needed, *given)
        if option in taken:
            assert result.returncode != 2, f"{verb} {option}: {result.stderr}"
        elif verb == "export":  # export's --format names the provider format, as it always has
            assert result.returncode == 2 and "Invalid value for '--format'" in result.stderr, result.stderr
        else:
            assert result.returncode == 2, f"{verb} {option}: {result.stderr}"
            assert f"Error: {option} does not apply to `toolgen {verb}`: " in result.stderr
    # The long spelling of -C too, and help for every option taken.
    assert toolgen(tmp_path, verb, *needed, "--project", ".").returncode != 2
    shown = toolgen(tmp_path, verb, "--help").stdout
    for option in taken:
        assert option in shown


@pytest.mark.parametrize("verb", ["build", "check", "lint", "validate", "breaking"])
def test_format_json_prints_invalid_input_as_json_on_every_project_verb(
    verb: str, make_project: Callable[..., Project]
) -> None:
    project = make_project()
    project.write("schemas/broken.yaml", "name: broken\ninputSchema: {type: objekt}\n")
    project.write("payload.json", '{"role": "user", "content": "hi"}')
    project.write("snapshot.json", "{}")
    needed = VERBS[verb][0]
    result = toolgen(project.root.parent, verb, "-C", project.root.name, *needed, "--format", "json")
    if verb == "validate":  # validate needs the built SDK, so the broken tool stops it as a missing build
        assert result.returncode in (3, 4), result.stderr
        return
    assert result.returncode in (1, 3), result.stderr
    findings = json.loads(result.stdout)
    assert any(f["path"] == "schemas/broken.yaml" for f in findings), findings


def test_payload_verbs_name_files_relative_to_the_project_root(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "bad.json").write_text('{"choices": []}', encoding="utf-8")
    here = toolgen(tmp_path, "decode", "data/bad.json")
    assert here.returncode == 3 and here.stdout.startswith("data/bad.json:1:1: error payload-invalid")
    inside = toolgen(tmp_path, "decode", "data/bad.json", "-C", "data", "--format", "github")
    assert inside.returncode == 3
    assert inside.stdout.startswith("::error file=bad.json,line=1,col=1,title=payload-invalid::")


def test_conformance_reports_failures_as_annotations(tmp_path: Path) -> None:
    (tmp_path / "recorded").mkdir()
    (tmp_path / "recorded" / "garbage.json").write_text("not json", encoding="utf-8")
    result = toolgen(tmp_path, "conformance", "recorded", "--format", "github")
    assert result.returncode == 1
    assert result.stdout.startswith("::error file=recorded/garbage.json,title=conformance::")


# --- lint --fail-on --------------------------------------------------------------------------------------------


def test_lint_lets_warnings_pass_unless_asked(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/t.yaml", "name: quiet_tool\ninputSchema: {type: object}\n")
    default = toolgen_in(project.root, "lint")
    assert default.returncode == 0, default.stdout + default.stderr
    assert "warning description-missing" in default.stdout
    strict = toolgen_in(project.root, "lint", "--fail-on", "warning")
    assert strict.returncode == 1 and strict.stdout == default.stdout
    project.write("schemas/u.yaml", "name: bad.name\ndescription: d\ninputSchema: {type: object}\n")
    assert toolgen_in(project.root, "lint", "--provider", "anthropic").returncode == 1
    assert toolgen_in(project.root, "lint", "--fail-on", "nothing").returncode == 2


def test_check_takes_the_same_fail_on(project: Project) -> None:
    project.write("schemas/more.yaml", "name: undescribed\ninputSchema: {type: object}\n")
    assert toolgen_in(project.root, "build").returncode == 0
    assert toolgen_in(project.root, "check").returncode == 0
    project.write("schemas/more.yaml", "name: undescribed\ninputSchema: {type: object}\nx-owner: me\n")
    assert toolgen_in(project.root, "build").returncode == 0
    warned = toolgen_in(project.root, "check", "--fail-on", "warning")
    assert warned.returncode == 1 and "warning unknown-key" in warned.stdout
    assert toolgen_in(project.root, "check").returncode == 0


# --- progress and the build summary ------------------------------------------------------------------------------


def test_progress_off_a_terminal_is_one_plain_line_per_stage(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "\033" not in result.stderr
    assert result.stderr.splitlines() == [
        "toolgen: checking schemas...",
        "toolgen: generating models for 1 tools...",
        "toolgen: checking and writing...",
        result.stderr.splitlines()[-1],
    ]
    assert re.fullmatch(
        r"toolgen: wrote generated/sdk/: \d+ files changed, 0 unchanged", result.stderr.splitlines()[-1]
    )
    checked = toolgen_in(
        project.root, "check", "--full"
    )  # a check that renders: the manifest alone answers without stages
    assert checked.stderr.splitlines()[0] == "toolgen: checking schemas..."


def test_quiet_leaves_only_the_summary(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    built = toolgen_in(project.root, "build", "--quiet")
    assert built.returncode == 0 and len(built.stderr.splitlines()) == 1, built.stderr
    checked = toolgen_in(project.root, "check", "-q")
    assert checked.stderr == "toolgen: generated code is up to date\n"
    project.write("m.json", '{"role": "user", "content": "hi"}')
    validated = toolgen_in(project.root, "validate", "m.json", "--as", "message", "-q")
    assert validated.stderr == "toolgen: 1 record(s), 0 invalid, 0 unreadable\n"
