"""init, build and check through the CLI and the library, and the generated package in use."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import WEATHER, Project, run_sdk

import toolgen


def toolgen_cli(cwd: Path, *args: str) -> Ran:
    return toolgen_in(cwd, *args)


def tree(root: Path) -> dict[str, bytes]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def stats(project: Project) -> dict[str, tuple[int, int]]:
    base = project.root / "generated"
    return {
        p.relative_to(base).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(base.rglob("*"))
        if "__pycache__" not in p.parts
    }


def test_init_build_check_in_an_empty_directory(tmp_path: Path) -> None:
    init = toolgen_cli(tmp_path, "init")
    assert init.returncode == 0, init.stderr
    assert init.stdout.splitlines() == [
        "created toolgen.yaml",
        "created schemas/tools/get_current_weather.yaml",
        "created pyproject.toml",
        "created .gitignore",
        "created requirements-toolgen.txt",
    ]
    built = toolgen_cli(tmp_path, "build")
    assert built.returncode == 0, built.stderr
    assert "wrote generated/toolgen_sdk/" in built.stderr
    assert (tmp_path / "generated" / "toolgen_sdk" / "models.py").is_file()
    checked = toolgen_cli(tmp_path, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == ""
    assert "up to date" in checked.stderr


def test_init_refuses_to_overwrite_a_project(tmp_path: Path) -> None:
    assert toolgen_cli(tmp_path, "init").returncode == 0
    example = tmp_path / "schemas" / "tools" / "get_current_weather.yaml"
    example.write_text("tools: []\n", encoding="utf-8")
    before = tree(tmp_path)
    again = toolgen_cli(tmp_path, "init")
    assert again.returncode == 3
    assert "already exists" in again.stderr
    assert tree(tmp_path) == before


def test_init_refuses_when_only_the_config_exists(make_project: Callable[..., Project]) -> None:
    existing = make_project()
    before = tree(existing.root)
    result = toolgen_cli(existing.root, "init")
    assert result.returncode == 3
    assert "toolgen.yaml already exists" in result.stderr
    assert tree(existing.root) == before
    assert not (existing.root / "schemas").exists()


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


DRIFTS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "edit": ("tools.py", lambda d: append(d / "tools.py", "HAND_EDIT = 1\n")),
    "delete": ("tools.py", lambda d: (d / "tools.py").unlink()),
    "delete-empty": ("py.typed", lambda d: (d / "py.typed").unlink()),
    "edit-manifest": ("toolgen-manifest.json", lambda d: append(d / "toolgen-manifest.json", "\n")),
}


def drift(kind: str) -> Any:
    return pytest.param(kind, id=kind)


@pytest.mark.parametrize(
    "kind",
    [
        drift("delete"),
        drift("delete-empty"),
        drift("edit-manifest"),
    ],
)
def test_drift_is_reported_with_a_diff_naming_the_file(project: Project, kind: str) -> None:
    name, mutate = DRIFTS[kind]
    mutate(project.package_dir)
    damaged = project.snapshot()
    result = toolgen_in(project.root, "check")
    assert result.returncode == 1
    assert f"generated/sdk/{name}" in result.stdout
    assert result.stdout.startswith("--- ")
    assert "1 generated file(s) differ" in result.stderr
    assert project.snapshot() == damaged


def test_hand_edit_shows_a_unified_diff(project: Project) -> None:
    DRIFTS["edit"][1](project.package_dir)
    result = toolgen_in(project.root, "check")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == ["--- a/generated/sdk/tools.py", "+++ b/generated/sdk/tools.py"]
    assert lines[2].startswith("@@ ")
    assert "-HAND_EDIT = 1" in lines


@pytest.mark.parametrize(
    "kind",
    [
        drift("edit"),
        drift("delete"),
        drift("delete-empty"),
        drift("edit-manifest"),
    ],
)
def test_build_after_failed_check_restores(project: Project, kind: str) -> None:
    before = project.snapshot()
    DRIFTS[kind][1](project.package_dir)
    assert toolgen_in(project.root, "check").returncode == 1
    rebuilt = toolgen_in(project.root, "build")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert project.snapshot() == before


def test_schema_change_is_drift_until_rebuilt(project: Project) -> None:
    before = project.snapshot()
    project.write("schemas/weather.yaml", WEATHER.replace("in a given location", "somewhere else"))
    checked = toolgen_in(project.root, "check")
    assert checked.returncode == 1
    assert "+++ b/generated/sdk/tools.py" in checked.stdout
    assert "somewhere else" in checked.stdout
    assert project.snapshot() == before
    assert toolgen_in(project.root, "build").returncode == 0
    assert project.snapshot() != before
    assert toolgen_in(project.root, "check").returncode == 0


def test_check_json_format_on_drift_is_json(project: Project) -> None:
    DRIFTS["edit"][1](project.package_dir)
    result = toolgen_in(project.root, "check", "--format", "json")
    assert result.returncode == 1
    assert "generated/sdk/tools.py" in json.dumps(json.loads(result.stdout))


def test_second_build_writes_nothing(make_project: Callable[..., Project]) -> None:
    fresh = make_project()
    fresh.write("schemas/weather.yaml", WEATHER)
    first = toolgen_in(fresh.root, "build")
    assert first.returncode == 0, first.stderr
    assert re.search(r"toolgen: wrote generated/sdk/: (\d+) files changed, 0 unchanged\n", first.stderr)
    before, stamped = fresh.snapshot(), stats(fresh)
    second = toolgen_in(fresh.root, "build")
    assert second.returncode == 0, second.stderr
    assert second.stdout == ""
    assert re.search(r"toolgen: generated/sdk/ is up to date \(\d+ files\)", second.stderr)
    assert stats(fresh) == stamped
    assert fresh.snapshot() == before


def test_the_summary_counts_the_files_a_change_rewrote(make_project: Callable[..., Project]) -> None:
    fresh = make_project()
    fresh.write("schemas/weather.yaml", WEATHER)
    first = toolgen_in(fresh.root, "build")
    total = re.search(r"toolgen: wrote generated/sdk/: (\d+) files changed, 0 unchanged\n$", first.stderr)
    assert total, first.stderr
    fresh.write("schemas/weather.yaml", WEATHER.replace("Get the current weather", "Get today's weather"))
    result = toolgen_in(fresh.root, "build")
    assert result.returncode == 0, result.stderr
    changed = re.search(r"toolgen: wrote generated/sdk/: (\d+) files changed, (\d+) unchanged\n$", result.stderr)
    assert changed, result.stderr
    # The description lives in a few generated modules and the manifest; the runtime is untouched.
    assert 2 <= int(changed[1]) <= 6 and int(changed[1]) + int(changed[2]) == int(total[1])


def test_force_rebuilds_identical_bytes(project: Project) -> None:
    before, stamped = project.snapshot(), stats(project)
    result = toolgen_in(project.root, "build", "--force")
    assert result.returncode == 0, result.stderr
    # Every file is rewritten, but none differs, and the summary says so.
    assert re.search(r"toolgen: generated/sdk/ is up to date \(\d+ files\)\n$", result.stderr)
    assert stats(project)["sdk/models.py"] != stamped["sdk/models.py"]
    assert project.snapshot() == before


def test_a_build_without_force_moves_in_only_the_files_whose_bytes_differ(project: Project) -> None:
    stamped = stats(project)
    project.write("schemas/weather.yaml", WEATHER.replace("Get the current weather", "Get the weather"))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stderr
    now = stats(project)
    assert now["sdk/tools.py"] != stamped["sdk/tools.py"]
    assert "Get the weather" in (project.package_dir / "tools.py").read_text(encoding="utf-8")
    assert now["sdk/_runtime/__init__.py"] == stamped["sdk/_runtime/__init__.py"], "same bytes, left in place"
    assert toolgen.check(project.root).ok


def test_library_build_and_check_return_results(
    make_project: Callable[..., Project],
    capsys: pytest.CaptureFixture[str],
) -> None:
    fresh = make_project()
    fresh.write("schemas/weather.yaml", WEATHER)
    built = toolgen.build(fresh.root)
    assert isinstance(built, toolgen.BuildResult)
    assert built.written
    assert built.package_dir == fresh.package_dir.resolve()
    assert {"models.py", "tools.py", "validators.py", "toolgen-manifest.json"} <= set(built.files)
    assert built.warnings == ()
    assert not toolgen.build(fresh.root).written
    clean = toolgen.check(fresh.root)
    assert isinstance(clean, toolgen.CheckResult)
    assert clean.ok
    assert (clean.changed, clean.diff) == ((), "")
    DRIFTS["edit"][1](fresh.package_dir)
    dirty = toolgen.check(fresh.root)
    assert not dirty.ok
    assert dirty.changed == ("generated/sdk/tools.py",)
    assert "+++ b/generated/sdk/tools.py" in dirty.diff
    assert capsys.readouterr() == ("", "")


def test_library_raises_invalid_input_without_printing(
    project: Project,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = project.snapshot()
    project.write("schemas/bad.yaml", "tools:\n  - 42\n")
    for entry in (toolgen.build, toolgen.check):
        with pytest.raises(toolgen.InvalidInputError) as caught:
            entry(project.root)
        assert caught.value.exit_code == 3
        assert all(isinstance(d, toolgen.Diagnostic) for d in caught.value.diagnostics)
        assert [(d.path, d.line, d.col, d.rule) for d in caught.value.diagnostics] == [
            ("schemas/bad.yaml", 2, 5, "tool-shape"),
        ]
    (project.root / "toolgen.yaml").unlink()
    with pytest.raises(toolgen.ToolgenError) as missing:
        toolgen.build(project.root)
    assert missing.value.exit_code == 3
    assert project.snapshot() == before
    assert capsys.readouterr() == ("", "")


def test_generated_package_validates_tool_arguments(built_root: Path) -> None:
    out = run_sdk(
        built_root,
        """\
        import json
        import sdk

        text = '{"location": "Paris", "unit": "celsius"}'
        ok = sdk.validate_tool_arguments("get_current_weather", text)
        try:
            sdk.validate_tool_arguments("get_current_weather", '{"location": 5}')
        except sdk.ToolgenValidationError as error:
            problems = [[p.pointer, p.message] for p in error.problems]
        else:
            problems = None
        print(json.dumps({
            "tools": sorted(sdk.TOOLS),
            "ok": [type(ok).__name__, ok.location, ok.unit],
            "problems": problems,
        }))
        """,
    )
    assert out["tools"] == ["get_current_weather"]
    assert out["ok"] == ["GetCurrentWeatherArgs", "Paris", "celsius"]
    assert [pointer for pointer, _ in out["problems"]] == ["/location"]
    assert "string" in out["problems"][0][1]


def test_generated_package_accepts_both_spellings(built_root: Path) -> None:
    out = run_sdk(
        built_root,
        """\
        import json
        import sdk

        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'}}
        messages = [
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "toolCallId": "c1", "content": "sunny"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "assistant", "toolCalls": [call]},
        ]
        results = [sdk.validate_message(m) for m in messages]
        print(json.dumps([[type(r).__name__, r.model_dump(mode="json")] for r in results]))
        """,
    )
    kinds = [kind for kind, _ in out]
    assert kinds == ["ToolMessage", "ToolMessage", "AssistantMessage", "AssistantMessage"]
    assert out[0] == out[1]
    assert out[2] == out[3]
    assert out[0][1]["tool_call_id"] == "c1"
    assert out[2][1]["tool_calls"][0]["id"] == "call_1"


def test_generated_models_are_frozen(built_root: Path) -> None:
    out = run_sdk(
        built_root,
        """\
        import json
        import sdk

        message = {"role": "tool", "toolCallId": "c1", "content": "sunny"}
        targets = [
            (sdk.validate_message(message), "content"),
            (sdk.validate_tool_arguments("get_current_weather", {"location": "Paris"}), "location"),
        ]
        report = []
        for model, field in targets:
            original = getattr(model, field)
            try:
                setattr(model, field, "changed")
            except Exception as error:
                raised = type(error).__name__
            else:
                raised = None
            report.append([type(model).__name__, raised, getattr(model, field) == original])
        print(json.dumps(report))
        """,
    )
    assert out == [
        ["ToolMessage", "ValidationError", True],
        ["GetCurrentWeatherArgs", "ValidationError", True],
    ]


def test_an_up_to_date_build_repeats_the_warnings_of_the_build_it_kept(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write(
        "schemas/bfcl.json", '{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}'
    )
    (project.root / "toolgen.yaml").write_text((project.root / "toolgen.yaml").read_text() + "normalize: [types]\n")
    first = toolgen.build(project.root)
    second = toolgen.build(project.root)
    assert first.written and not second.written
    # The build's own warnings, then the lint of the providers it targets (a tool without a description).
    assert [d.rule for d in first.warnings] == ["normalized-type", "normalized-type", "description-missing"]
    assert second.warnings == first.warnings
