"""`check` answered from the manifest: never "up to date" when a full render would differ.

Each test changes one kind of thing a build depends on, or the package itself, and compares the fast answer
(instant_check, what `toolgen check` runs first) with `check --full`, which renders. The fast path may
decline (None: check then renders); when it answers, its answer is the full one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.projects import WEATHER, Project

import toolgen
from toolgen.core.errors import InvalidInputError
from toolgen.output.drift import CheckResult
from toolgen.output.instant_check import instant_check
from toolgen.project.manifest import MANIFEST_NAME, SHAPING
from toolgen.project.recorded import recorded_project

UNITS = """\
$defs:
  Unit: {type: string, enum: [celsius, fahrenheit]}
"""
# The weather tool with its unit from a file outside the input globs.
REFERRING = WEATHER.replace(
    "unit: {type: string, enum: [celsius, fahrenheit]}", "unit: {$ref: '../defs/units.yaml#/$defs/Unit'}"
)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The weather project, its unit in a file outside the input globs, built once for this module."""
    root = tmp_path_factory.mktemp("instant") / "project"
    root.mkdir()
    project = Project(root)
    project.write("schemas/weather.yaml", REFERRING)
    project.write("defs/units.yaml", UNITS)
    toolgen.build(project.root)
    return project.root


@pytest.fixture
def built(built_once: Path, tmp_path: Path) -> Project:
    """A test's own copy of the built project: as a checkout of a built project is, with every file new."""
    return Project.copy_of(built_once, tmp_path / "project")


def _answers(project: Project, config: Path | None = None) -> tuple[CheckResult | None, CheckResult | None]:
    """The fast answer (None when it declines) and the full one (None for input it refuses), after asserting
    that they agree when both exist and that `check` without `full` gives the full answer."""
    fast = instant_check(project.root.resolve(), config)
    try:
        full = toolgen.check(project.root, config_path=config, full=True)
    except InvalidInputError:
        assert fast is None, "the input is refused: no answer may say it is up to date"
        with pytest.raises(InvalidInputError):
            toolgen.check(project.root, config_path=config)
        return fast, None
    if fast is not None:
        assert fast == full
    assert toolgen.check(project.root, config_path=config) == full
    return fast, full


def _edit_manifest(project: Project, change: Callable[[dict[str, Any]], None]) -> None:
    path = project.package_dir / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def test_an_up_to_date_package_is_answered_without_rendering(built: Project) -> None:
    fast, full = _answers(built)
    assert fast is not None and fast.ok and fast.warnings == ()


def test_the_answer_holds_in_a_fresh_copy_without_the_build_cache(built: Project, tmp_path: Path) -> None:
    shutil.copytree(built.root, tmp_path / "clone", ignore=shutil.ignore_patterns(".toolgen-cache"))
    clone = Project(tmp_path / "clone")
    fast, _ = _answers(clone)
    assert fast is not None and fast.ok, "the manifest names no machine path: a clone elsewhere is up to date"


def test_line_endings_do_not_matter(built: Project) -> None:
    for path in [*built.package_dir.rglob("*.py"), built.package_dir / MANIFEST_NAME, built.root / "toolgen.yaml"]:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    for path in (built.root / "schemas" / "weather.yaml", built.root / "defs" / "units.yaml"):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    fast, _ = _answers(built)
    assert fast is not None and fast.ok, "a CRLF checkout is the same package"


def _schema_edit(project: Project) -> None:
    project.write("schemas/weather.yaml", REFERRING.replace("Get the current", "Look up the current"))


def _comment_in_schema(project: Project) -> None:
    # The manifest records what a schema says, not how it is written (input_digests.py).
    project.write("schemas/weather.yaml", "# a comment changes no code, nor the manifest\n\n" + REFERRING)


def _referenced_file_edit(project: Project) -> None:
    project.write("defs/units.yaml", UNITS.replace("fahrenheit", "kelvin"))


def _new_matching_file(project: Project) -> None:
    project.write("schemas/more/echo.yaml", WEATHER.replace("get_current_weather", "echo_weather"))


def _new_matching_empty_file(project: Project) -> None:
    project.write("schemas/notes.json", "{}\n")


def _deleted_input(project: Project) -> None:
    project.write("schemas/other.yaml", WEATHER.replace("get_current_weather", "other_weather"))
    toolgen.build(project.root)
    (project.root / "schemas" / "other.yaml").unlink()


def _config_edit(project: Project) -> None:
    path = project.root / "toolgen.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "demo: true\n", encoding="utf-8")


def _config_comment(project: Project) -> None:
    path = project.root / "toolgen.yaml"
    path.write_text("# a comment\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


def _config_unknown_key(project: Project) -> None:
    path = project.root / "toolgen.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "colour: blue\n", encoding="utf-8")


def _hand_edit(project: Project) -> None:
    tools = project.package_dir / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "HAND_EDIT = 1\n", encoding="utf-8")


def _runtime_edit(project: Project) -> None:
    runtime = project.package_dir / "_runtime" / "wires" / "table.py"
    runtime.write_text(runtime.read_text(encoding="utf-8") + "# patched\n", encoding="utf-8")


def _deleted_output(project: Project) -> None:
    (project.package_dir / "py.typed").unlink()


def _foreign_file(project: Project) -> None:
    (project.package_dir / "notes.py").write_text("MINE = 1\n", encoding="utf-8")


def _manifest_reformatted(project: Project) -> None:
    path = project.package_dir / MANIFEST_NAME
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))) + "\n", encoding="utf-8")


def _manifest_file_hash(project: Project) -> None:
    _edit_manifest(project, lambda m: m["files"].update({"tools.py": "0" * 64}))


def _manifest_input_hash(project: Project) -> None:
    _edit_manifest(project, lambda m: m["inputs"].update({"defs/units.yaml": "0" * 64}))


def _stale_package(project: Project) -> None:
    """The package moved (`package:` changed), and the build cache still names the old place, which holds one."""
    path = project.root / "toolgen.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("package: sdk", "package: moved"), encoding="utf-8")
    toolgen.build(project.root)
    shutil.copytree(project.root / "generated" / "moved", project.root / "generated" / "sdk")
    cache = project.root / ".toolgen-cache" / "build.json"
    entries = json.loads(cache.read_text(encoding="utf-8"))
    entries["toolgen.yaml"]["package_dir"] = "generated/sdk"
    cache.write_text(json.dumps(entries), encoding="utf-8")


# Each change a full check finds: drift, or a finding to fix first.
CHANGES: dict[str, Callable[[Project], None]] = {
    "schema edited": _schema_edit,
    "$ref'd file outside the globs edited": _referenced_file_edit,
    "new file matching a glob": _new_matching_file,
    "new file matching a glob, without tools": _new_matching_empty_file,
    "input file deleted": _deleted_input,
    "config setting": _config_edit,
    "config comment": _config_comment,
    "generated file hand-edited": _hand_edit,
    "runtime file edited": _runtime_edit,
    "generated file deleted": _deleted_output,
    "foreign file in the package": _foreign_file,
    "manifest reformatted": _manifest_reformatted,
    "manifest file hash": _manifest_file_hash,
    "manifest input hash": _manifest_input_hash,
}


def test_a_comment_in_a_schema_is_up_to_date_both_ways(built: Project) -> None:
    _comment_in_schema(built)
    fast, full = _answers(built)
    assert fast is not None and full is not None and full.ok


@pytest.mark.parametrize("name", CHANGES)
def test_a_change_is_never_answered_up_to_date(built: Project, name: str) -> None:
    CHANGES[name](built)
    fast, full = _answers(built)
    assert fast is None, f"{name}: the manifest no longer holds, so check must render"
    assert full is None or not full.ok


def test_a_config_the_meta_schema_refuses_is_rendered_and_refused(built: Project) -> None:
    _config_unknown_key(built)
    assert instant_check(built.root.resolve(), None) is None
    result = built.cli("check")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "colour" in result.stdout


def test_an_unparseable_config_is_rendered_and_refused(built: Project) -> None:
    (built.root / "toolgen.yaml").write_text("inputs: [\n", encoding="utf-8")
    assert instant_check(built.root.resolve(), None) is None
    assert built.cli("check").returncode == 3


@pytest.mark.parametrize(
    ("maker", "value"),
    [
        ("source", "0" * 64),
        ("shaping", dict.fromkeys(SHAPING, "0.0.1")),
        ("versions", {"toolgen": "0.0.1", "datamodel-code-generator": "0.0.1", "pydantic": "0.0.1", "ruff": "0.0.1"}),
    ],
)
def test_a_package_made_by_another_generator_is_rendered_not_trusted(built: Project, maker: str, value: Any) -> None:
    _edit_manifest(built, lambda m: m.update({maker: value}))
    fast, full = _answers(built)
    assert fast is None, f"another {maker}: only a render can say whether the files still match"
    assert full is not None and full.changed == (), "what made the package is not drift by itself"


def test_a_package_left_where_an_earlier_build_wrote_is_rendered(built: Project) -> None:
    _stale_package(built)
    fast, full = _answers(built)
    assert fast is None
    assert full is not None and not full.ok
    assert any(d.rule == "stale-package" for d in full.warnings), full.warnings


def test_the_build_warnings_are_repeated(built: Project) -> None:
    built.write("schemas/weather.yaml", REFERRING.replace("    description:", "    colour: blue\n    description:"))
    toolgen.build(built.root)
    fast, full = _answers(built)
    assert fast is not None and [d.rule for d in fast.warnings] == ["unknown-key"]


def test_a_warning_about_a_missing_folder_is_rendered(built: Project) -> None:
    path = built.root / "toolgen.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "  - elsewhere/*.yaml\n", encoding="utf-8")
    toolgen.build(built.root)
    assert [d.rule for d in toolgen.check(built.root, full=True).warnings] == ["input-unmatched"]
    (built.root / "elsewhere").mkdir()  # the pattern's folder now exists: the warning goes, no hash changes
    fast, full = _answers(built)
    assert fast is None and full is not None and full.warnings == ()


def test_another_config_file_is_its_own_record(built: Project) -> None:
    other = built.root / "other.yaml"
    other.write_text((built.root / "toolgen.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    fast, full = _answers(built, other)
    assert fast is None and full is not None and not full.ok, "the manifest records toolgen.yaml, not other.yaml"
    toolgen.build(built.root, config_path=other)
    fast, full = _answers(built, other)
    assert fast is not None and fast.ok


def test_the_cli_answers_alike_with_and_without_full(built: Project) -> None:
    for _ in range(2):
        # --quiet: a rendering check names its stages on stderr, which is all the two may differ in
        quick, full = built.cli("check", "--quiet"), built.cli("check", "--full", "--quiet")
        assert (quick.returncode, quick.stdout, quick.stderr) == (full.returncode, full.stdout, full.stderr)
        _hand_edit(built)


def test_lint_and_export_of_a_recorded_project_give_what_checking_everything_gives(
    built: Project, tmp_path: Path
) -> None:
    assert recorded_project(built.root.resolve(), None) is not None, "lint and export leave the shape checks out"
    unbuilt = tmp_path / "unbuilt"
    shutil.copytree(built.root, unbuilt, ignore=shutil.ignore_patterns("generated", ".toolgen-cache"))
    assert recorded_project(unbuilt, None) is None, "nothing records this copy: everything is checked"
    assert toolgen.lint(built.root) == toolgen.lint(unbuilt)
    assert toolgen.export(built.root, provider="openai") == toolgen.export(unbuilt, provider="openai")


def test_a_tool_changed_since_the_build_is_checked_again(built: Project) -> None:
    built.write("schemas/weather.yaml", REFERRING.replace("type: object", "type: 5", 1))
    assert recorded_project(built.root.resolve(), None) is None
    for verb in (toolgen.lint, lambda root: toolgen.export(root, provider="openai")):
        with pytest.raises(InvalidInputError) as raised:
            verb(built.root)
        assert raised.value.diagnostics, "the shape check runs and reports the changed tool"


def test_versions_read_from_folder_names_are_importlib_metadatas() -> None:
    from importlib import metadata

    from toolgen.core.versions import installed_versions
    from toolgen.project.manifest import MAKERS

    names = (*MAKERS, *SHAPING, "click")
    assert installed_versions(names) == {name: metadata.version(name) for name in names}
    assert installed_versions(["no-such-distribution-here"]) == {"no-such-distribution-here": None}
