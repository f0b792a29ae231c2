"""The first day of a project, as a new user lives it: check before the first build, an edit that changes no
meaning, -C before the verb, a misspelled key or choice, a tool name a provider refuses, the project's .gitignore,
a tool that requires approval under dispatch(), and formatters toolgen does not run."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import REPO_ROOT, WEATHER, Project

import toolgen
from toolgen.project.manifest import MANIFEST_NAME, text_digest

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

WEATHER_JSON = {
    "tools": [
        {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location.",
            "inputSchema": {
                "type": "object",
                "properties": {"location": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
                "required": ["location"],
            },
        }
    ]
}


def toolgen_cli(cwd: Path, *args: str) -> Ran:
    """`toolgen ARGS` in `cwd`, in this process: what the commands say is the point here, not a process's start."""
    return toolgen_in(cwd, *args)


# ---- check before the first build ----


@pytest.mark.parametrize("full", [False, True], ids=["check", "check --full"])
def test_check_before_the_first_build_says_to_build_in_one_line(tmp_path: Path, full: bool) -> None:
    assert toolgen_cli(tmp_path, "init").returncode == 0
    result = toolgen_cli(tmp_path, "check", *(["--full"] if full else []))
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "toolgen: generated/toolgen_sdk/ has not been built yet; run `toolgen build` first"
    ]
    as_json = json.loads(toolgen_cli(tmp_path, "check", "--format", "json").stdout)
    assert as_json == {"changed": ["generated/toolgen_sdk/"], "diff": "", "findings": [], "built": False}
    (github,) = toolgen_cli(tmp_path, "check", "--format", "github").stdout.splitlines()
    assert github.startswith("::error file=generated/toolgen_sdk/,title=toolgen-drift::") and "not been built" in github
    assert toolgen_cli(tmp_path, "build").returncode == 0
    assert toolgen_cli(tmp_path, "check").returncode == 0


def test_check_before_the_first_build_still_refuses_invalid_input(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/broken.yaml", "name: broken\ninputSchema: {type: objekt}\n")
    result = project.cli("check")
    assert result.returncode == 3, result.stderr
    assert "schemas/broken.yaml" in result.stdout and "has not been built" not in result.stderr


# ---- what does not change a schema's meaning ----


def _manifest(project: Project) -> bytes:
    return (project.package_dir / MANIFEST_NAME).read_bytes()


def _built(project: Project, relative: str, text: str) -> bytes:
    project.write(relative, text)
    assert project.cli("build").returncode == 0
    return _manifest(project)


REWRITES: dict[str, tuple[str, Callable[[str], str]]] = {
    "a comment": ("schemas/weather.yaml", lambda text: "# the weather, for the demo\n" + text + "# the end\n"),
    "blank lines and indentation": (
        "schemas/weather.yaml",
        lambda text: "\n\n" + "".join(f"  {line}\n\n" for line in text.splitlines()),
    ),
    "quoting": ("schemas/weather.yaml", lambda text: text.replace("type: string}", 'type: "string"}')),
}


@pytest.mark.parametrize("change", REWRITES)
def test_an_edit_that_changes_no_meaning_leaves_check_at_0_and_the_manifest_as_it_was(
    project: Project, change: str
) -> None:
    # `project`: a copy of schemas/weather.yaml holding WEATHER, built once for the module.
    relative, rewrite = REWRITES[change]
    assert (project.root / relative).read_text(encoding="utf-8") == WEATHER
    before = _manifest(project)
    project.write(relative, rewrite(WEATHER))
    assert (project.root / relative).read_text(encoding="utf-8") != WEATHER
    for args in (("check",), ("check", "--full")):
        result = project.cli(*args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    built = project.cli("build")
    assert built.returncode == 0 and "is up to date" in built.stderr, built.stderr
    assert project.cli("build", "--force").returncode == 0
    assert (project.package_dir / MANIFEST_NAME).read_bytes() == before


def test_a_json_schema_reformatted_leaves_check_at_0(make_project: Callable[..., Project]) -> None:
    project = make_project()
    before = _built(project, "schemas/weather.json", json.dumps(WEATHER_JSON))
    project.write("schemas/weather.json", json.dumps(WEATHER_JSON, indent=4) + "\n")
    assert project.cli("check").returncode == 0
    assert project.cli("build", "--force").returncode == 0
    assert (project.package_dir / MANIFEST_NAME).read_bytes() == before


def test_key_order_counts_since_it_orders_the_models_fields(project: Project) -> None:
    assert project.cli("check").returncode == 0
    reordered = WEATHER.replace(
        "        location: {type: string}\n        unit: {type: string, enum: [celsius, fahrenheit]}\n",
        "        unit: {type: string, enum: [celsius, fahrenheit]}\n        location: {type: string}\n",
    )
    assert reordered != WEATHER
    project.write("schemas/weather.yaml", reordered)
    result = project.cli("check")
    assert result.returncode == 1 and "_tool_models" in result.stdout, result.stdout


def test_the_manifest_records_a_schema_with_a_warning_by_its_text(make_project: Callable[..., Project]) -> None:
    """A warning's line:col is in the manifest: the file that holds it is recorded by its text, the others by
    what they say."""
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    project.write(
        "schemas/bfcl.json", '{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}'
    )
    (project.root / "toolgen.yaml").write_text((project.root / "toolgen.yaml").read_text() + "normalize: [types]\n")
    assert project.cli("build").returncode == 0
    inputs = json.loads((project.package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))["inputs"]
    assert inputs["schemas/weather.yaml"].startswith("data:")
    assert not inputs["schemas/bfcl.json"].startswith("data:")
    # Moving the warning moves what the manifest says of it: that is a change.
    project.write(
        "schemas/bfcl.json", '\n{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}'
    )
    assert project.cli("check").returncode == 1


def test_a_manifest_that_hashed_its_inputs_texts_is_still_up_to_date(project: Project) -> None:
    """Manifests before this toolgen recorded each input's text: an unchanged file hashed so is no drift, so
    checking a package built by an older toolgen does not fail on how it hashed."""
    path = project.package_dir / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["inputs"]["schemas/weather.yaml"] = text_digest(WEATHER)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for args in (("check",), ("check", "--full")):
        result = project.cli(*args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    project.write("schemas/weather.yaml", WEATHER.replace("location.", "place."))
    assert project.cli("check").returncode == 1


# ---- -C before the verb ----


def test_the_project_option_works_before_the_verb_and_after_it(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    assert toolgen_cli(tmp_path, "-C", "shop", "init").returncode == 0
    assert (project / "toolgen.yaml").is_file()
    assert toolgen_cli(tmp_path, "-C", "shop", "build").returncode == 0
    for args in (("-C", "shop", "check"), ("check", "-C", "shop"), ("-C", ".", "check", "-C", "shop")):
        result = toolgen_cli(tmp_path, *args)
        assert result.returncode == 0, (args, result.stderr)
    # Both given: the verb's -C is inside the first, as with `git -C`.
    nested = toolgen_cli(tmp_path.parent, "-C", tmp_path.name, "lint", "-C", "shop")
    assert nested.returncode == 0, nested.stderr
    elsewhere = toolgen_cli(tmp_path, "-C", "nowhere", "check")
    assert elsewhere.returncode == 3 and "nowhere" in elsewhere.stderr


# ---- did you mean ----


def test_a_misspelled_config_key_names_the_key_it_misspells(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    config = project.root / "toolgen.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("output:", "outptu:")
        + "input: [x]\nlint:\n  provders: [openai]\ncolour: blue\n",
        encoding="utf-8",
    )
    result = project.cli("build")
    assert result.returncode == 3
    lines = result.stdout.splitlines()
    assert any("/outptu:" in line and line.endswith("did you mean 'output'?") for line in lines), lines
    assert any("/input:" in line and line.endswith("did you mean 'inputs'?") for line in lines), lines
    assert any("/lint/provders:" in line and line.endswith("did you mean 'providers'?") for line in lines), lines
    # A key near no known one gets no guess.
    assert [line for line in lines if "/colour:" in line and "did you mean" not in line], lines


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (("check", "--format", "jsn"), "json"),
        (("lint", "--provider", "opnai"), "openai"),
        (("validate", "x.json", "--as", "mesage"), "message"),
        (("check", "--fail-on", "warnings"), "warning"),
    ],
)
def test_a_choice_out_of_its_list_names_the_nearest(tmp_path: Path, args: tuple[str, ...], meant: str) -> None:
    result = toolgen_cli(tmp_path, *args)
    assert result.returncode == 2
    assert f"(did you mean {meant!r}?)" in result.stderr, result.stderr


# ---- build lints the providers the project targets ----

DOTTED = """\
tools:
  - name: weather.current
    description: Get the current weather.
    inputSchema: {type: object, properties: {city: {type: string}}}
"""
UNDESCRIBED = """\
tools:
  - name: current_weather
    inputSchema: {type: object, properties: {city: {type: string}}}
"""


def test_build_refuses_a_tool_name_a_targeted_provider_refuses(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/dotted.yaml", DOTTED)
    result = project.cli("build")
    assert result.returncode == 1, result.stderr
    assert "schemas/dotted.yaml:2:11: error name-pattern [" in result.stdout
    assert "lint error" in result.stderr and "nothing was written" in result.stderr
    assert not (project.root / "generated").exists()
    # `check` finds the same, whatever is on disk.
    assert project.cli("check").returncode == 1
    # Gemini takes dots in a name: a package that carries only Gemini builds.
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "wires: [gemini]\n", encoding="utf-8")
    assert project.cli("build").returncode == 0
    assert project.cli("check").returncode == 0
    # lint.providers names the targets when it is set.
    config.write_text(config.read_text(encoding="utf-8") + "lint: {providers: [openai]}\n", encoding="utf-8")
    refused = project.cli("build")
    assert refused.returncode == 1 and "from lint.providers" in refused.stderr
    # `providers: []`: a project whose tools no provider reads builds without any provider's rules.
    config.write_text(
        config.read_text(encoding="utf-8").replace("lint: {providers: [openai]}", "lint: {providers: []}"),
        encoding="utf-8",
    )
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    assert "name-pattern" not in built.stdout


def test_build_prints_the_lint_warnings_and_builds(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/undescribed.yaml", UNDESCRIBED)
    result = project.cli("build")
    assert result.returncode == 0, result.stderr
    assert "warning description-missing tool has no description" in result.stdout
    manifest = json.loads((project.package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["warnings"] == []  # printed by build, not recorded: check's answer is unchanged by lint
    again = project.cli("build")
    assert "description-missing" in again.stdout and "is up to date" in again.stderr


# ---- init writes a .gitignore ----

IGNORED = [".toolgen-state/", ".toolgen-cache/", "*.egg-info/", "__pycache__/"]


def test_init_writes_a_gitignore_for_state_and_caches(tmp_path: Path) -> None:
    toolgen.init_project(tmp_path)
    lines = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if not line.startswith("#")] == IGNORED


def test_init_adds_only_what_an_existing_gitignore_lacks(tmp_path: Path) -> None:
    mine = "# mine\nnode_modules/\n/__pycache__\n.toolgen-cache"  # no newline at the end
    (tmp_path / ".gitignore").write_text(mine, encoding="utf-8")
    result = toolgen.init_project(tmp_path)
    text = (tmp_path / ".gitignore").read_text(encoding="utf-8")
    assert text.startswith(mine + "\n")
    added = [line for line in text[len(mine) :].splitlines() if line and not line.startswith("#")]
    assert added == [".toolgen-state/", "*.egg-info/"]
    assert tmp_path / ".gitignore" in result.updated


def test_a_served_package_leaves_git_nothing_to_add(tmp_path: Path) -> None:
    """What the project's own commands leave behind is ignored: git status shows the sources only."""
    if subprocess.run(["git", "--version"], capture_output=True, check=False).returncode:
        pytest.skip("git is not installed")
    git = ["git", "-c", "init.defaultBranch=main"]
    assert subprocess.run([*git, "init", "-q", str(tmp_path)], check=False).returncode == 0
    toolgen.init_project(tmp_path)
    toolgen.build(tmp_path)
    for leftover in (".toolgen-state/toolgen_sdk/runs.sqlite", "shop.egg-info/PKG-INFO", "app/__pycache__/x.pyc"):
        (tmp_path / leftover).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / leftover).write_text("x", encoding="utf-8")
    status = subprocess.run(
        ["git", "status", "--porcelain", "-uall"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    shown = {line[3:].split("/")[0] for line in status.splitlines()}
    assert shown == {
        ".gitignore",
        "generated",
        "pyproject.toml",
        "requirements-toolgen.txt",
        "schemas",
        "toolgen.yaml",
    }, status


# ---- dispatch and requiresApproval ----

RUN_COMMAND = {"id": "c1", "type": "function", "function": {"name": "run_command", "arguments": '{"program": "ls"}'}}


def _bound(source_package: ModuleType, ran: list[str], **options: Any) -> Any:
    tools = source_package.Tools(**options)

    @tools.run_command.handler
    def run_command(args: Any, ctx: Any) -> Any:
        ran.append(args.program)
        return {"exit_code": 0, "stdout": "", "stderr": "", "truncated": False}

    return tools


def test_dispatch_never_runs_a_tool_that_requires_approval_unasked(source_package: ModuleType) -> None:
    assert source_package.TOOLS["run_command"].requires_approval
    ran: list[str] = []
    tools = _bound(source_package, ran)
    refused = tools.dispatch(RUN_COMMAND)
    assert refused.error.kind == "approval_required" and ran == []
    assert refused.content.startswith("Error: the tool 'run_command' requires approval and this call was not approved")
    assert refused.to_message()["is_error"] is True
    elsewhere = tools.dispatch(RUN_COMMAND, source_package.ToolContext(conversation_id="c", values={"a": 1}))
    assert elsewhere.error.kind == "approval_required" and ran == []
    again = __import__("asyncio").run(tools.adispatch(RUN_COMMAND))
    assert again.error.kind == "approval_required" and ran == []
    approved = tools.dispatch(RUN_COMMAND, source_package.ToolContext(approved=True))
    assert approved.error is None and ran == ["ls"]


def test_require_approval_false_runs_it_as_dispatch_did_before(source_package: ModuleType) -> None:
    ran: list[str] = []
    tools = _bound(source_package, ran, require_approval=False)
    assert tools.dispatch(RUN_COMMAND).error is None and ran == ["ls"]


def test_the_loop_asks_then_dispatches_the_approved_call(source_package: ModuleType) -> None:
    from source_sdk._runtime import Approval, ScriptedModel, assistant_turn, run, tool_call

    asked: list[str] = []

    def approve(request: Any) -> Any:
        asked.append(request.name)
        return Approval.approve()

    for approver, expected in ((approve, ["ls"]), (None, [])):
        ran: list[str] = []
        tools = _bound(source_package, ran)
        model = ScriptedModel(
            [assistant_turn(None, tool_call("run_command", {"program": "ls"})), assistant_turn("done")]
        )
        result = run([{"role": "user", "content": "list"}], model, tools, approve=approver)
        assert result.stop_reason == "finished" and ran == expected
    assert asked == ["run_command"]


# ---- formatters ----


def test_the_ruff_requirement_is_a_range_and_black_and_isort_are_never_run(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    requirements = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    (ruff,) = [r for r in requirements if r.startswith("ruff")]
    assert ">=" in ruff and "<" in ruff and "==" not in ruff, ruff
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NotInstalled:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('black', 'isort'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _NotInstalled())\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(hook)}
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    built = project.cli("build", "--force", env=env)
    assert built.returncode == 0, built.stderr
    assert project.cli("check", "--full", env=env).returncode == 0
