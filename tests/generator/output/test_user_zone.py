"""The user zone (`ext/`, `keep:`), foreign files, package renames, the manifest's makers, and kill-safe writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from support.projects import WEATHER, Project
from support.shared_builds import weather_checked_with

import toolgen
import toolgen.output.write
from toolgen.core.errors import ForeignFilesError, InvalidInputError
from toolgen.project.manifest import MAKERS, MANIFEST_NAME, render_manifest, text_digest

MakeProject = Callable[..., Project]
MINE = "from ..models import GetCurrentWeatherArgs\n\nDEFAULT = GetCurrentWeatherArgs(location='Oslo')\n"
SECOND_TOOL = """\
tools:
  - name: get_time
    description: The time in a zone.
    inputSchema: {type: object, properties: {zone: {type: string}}, required: [zone]}
"""


def configured(project: Project, extra_config: str) -> Project:
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + textwrap.dedent(extra_config), encoding="utf-8")
    return project


def fresh(make_project: MakeProject, extra_config: str = "") -> Project:
    """A project with the weather tool, not built yet."""
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    return configured(project, extra_config)


def put(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")


def everything(root: Path) -> dict[str, bytes]:
    """Every file under root, dot-folders and bytecode included: what a build must not lose or leave behind."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def set_config(project: Project, old: str, new: str) -> None:
    config = project.root / "toolgen.yaml"
    text = config.read_text(encoding="utf-8")
    assert old in text
    config.write_text(text.replace(old, new), encoding="utf-8")


def _edit_manifest(project: Project, change: Callable[[dict[str, Any]], object]) -> None:
    path = project.package_dir / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# The user zone


def test_a_file_in_ext_survives_build_force_and_check_stays_clean(project: Project) -> None:
    assert not (project.package_dir / "ext").exists(), "build never creates ext/"
    zone = {"ext/mine.py": MINE, "ext/data/prompt.txt": "hello\n"}
    put(project.package_dir, zone)
    project.write("schemas/time.yaml", SECOND_TOOL)  # the forced build also changes generated files
    result = project.cli("build", "--force")
    assert result.returncode == 0, result.stderr
    assert "GetTimeArgs" in (project.package_dir / "models.py").read_text(encoding="utf-8")
    for name, text in zone.items():
        assert (project.package_dir / name).read_text(encoding="utf-8") == text
    checked = project.cli("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == ""
    manifest = json.loads((project.package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert not [name for name in manifest["files"] if name.startswith("ext/")]


def test_ext_modules_import_from_the_generated_package(project: Project) -> None:
    put(project.package_dir, {"ext/mine.py": MINE})
    code = "import sys\nsys.path.insert(0, sys.argv[1])\nfrom sdk.ext.mine import DEFAULT\nprint(DEFAULT.location)\n"
    ran = subprocess.run(
        [sys.executable, "-c", code, str(project.root / "generated")], capture_output=True, text=True, check=False
    )
    assert (ran.returncode, ran.stdout) == (0, "Oslo\n"), ran.stderr


def test_an_up_to_date_build_stays_up_to_date_with_a_zone(project: Project) -> None:
    put(project.package_dir, {"ext/mine.py": MINE})
    assert not toolgen.build(project.root).written


def test_keep_paths_belong_to_the_user(make_project: MakeProject) -> None:
    project = fresh(make_project, "keep: [NOTES.md, ./data/, _runtime/local.py]\n")
    toolgen.build(project.root)
    zone = {"NOTES.md": "mine\n", "data/a.json": "{}\n", "data/deep/b.bin": "\x00\x01", "_runtime/local.py": "X = 1\n"}
    put(project.package_dir, zone)
    assert toolgen.check(project.root).ok
    assert toolgen.build(project.root, force=True).written
    for name, text in zone.items():
        assert (project.package_dir / name).read_text(encoding="utf-8") == text
    assert toolgen.check(project.root).ok


def test_a_zone_made_before_the_first_build_is_kept(make_project: MakeProject) -> None:
    project = fresh(make_project)
    put(project.package_dir, {"ext/mine.py": MINE})
    toolgen.build(project.root)
    assert (project.package_dir / "ext/mine.py").read_text(encoding="utf-8") == MINE
    assert (project.package_dir / "models.py").is_file()


def _keep_errors(project: Project, verb: Callable[..., object]) -> list[str]:
    with pytest.raises(InvalidInputError) as raised:
        verb(project.root)
    assert raised.value.exit_code == 3
    return [d.format() for d in raised.value.diagnostics]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("../elsewhere", "leads out of the package directory"),
        ("data/../../x", "leads out of the package directory"),
        ("/etc/passwd", "is absolute"),
        ("C:/Users/me", "is absolute"),
        ("data\\\\x.py", "backslash"),
        ("./", "names the package directory itself"),
    ],
)
def test_keep_paths_outside_the_package_are_refused_at_their_line(project: Project, entry: str, message: str) -> None:
    before = everything(project.root / "generated")
    configured(project, f'keep:\n  - notes.md\n  - "{entry}"\n')
    for verb in (toolgen.build, toolgen.check):
        [error] = _keep_errors(project, verb)
        assert error.startswith("toolgen.yaml:9:5: error config-keep ") and message in error
    assert everything(project.root / "generated") == before


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("models.py", "is a file toolgen generates"),
        ("toolgen-manifest.json", "is a file toolgen generates"),
        ("_runtime", "holds files toolgen generates (_runtime/__init__.py"),
        ("models.py/notes", "lies inside a file toolgen generates"),
    ],
)
def test_keep_paths_that_toolgen_writes_are_refused_at_their_line(project: Project, entry: str, message: str) -> None:
    before = everything(project.root / "generated")
    configured(project, f"keep: [notes.md, {entry}]\n")
    for verb in (toolgen.build, toolgen.check):
        [error] = _keep_errors(project, verb)
        assert error.startswith(f"toolgen.yaml:7:18: error config-keep '{entry}' {message}")
    assert everything(project.root / "generated") == before


def test_a_bad_keep_path_exits_3_through_the_cli(project: Project) -> None:
    configured(project, "keep: [../x]\n")
    result = project.cli("build")
    assert result.returncode == 3
    assert result.stdout.startswith("toolgen.yaml:7:8: error config-keep '../x' leads out of the package directory")


@pytest.mark.parametrize("keep", ["keep: notes.md", 'keep: [""]', "keep: [a, a]", "keep: [3]"])
def test_keep_must_be_a_list_of_distinct_paths(project: Project, keep: str) -> None:
    configured(project, keep + "\n")
    errors = _keep_errors(project, toolgen.build)
    assert errors and all(error.startswith("toolgen.yaml:7:") for error in errors)


# Foreign files


def test_a_stray_file_stops_the_build_naming_it_and_nothing_changes(project: Project) -> None:
    put(project.package_dir, {"stray.py": "X = 1\n", "_runtime/wires/mine.py": "Y = 2\n", "ext/ok.py": "Z = 3\n"})
    project.write("schemas/time.yaml", SECOND_TOOL)
    before = everything(project.root)
    result = project.cli("build")
    assert result.returncode == 3, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["generated/sdk/_runtime/wires/mine.py", "generated/sdk/stray.py"]
    assert all("error foreign-file" in line and "move it into generated/sdk/ext/" in line for line in lines)
    assert "list it under `keep:` in toolgen.yaml" in lines[0]
    assert "2 files in the package that toolgen did not write; nothing was written" in result.stderr
    assert everything(project.root) == before
    with pytest.raises(ForeignFilesError):
        toolgen.build(project.root, force=True)
    assert everything(project.root) == before


def test_check_reports_stray_files_as_findings_not_as_diff(project: Project) -> None:
    put(project.package_dir, {"stray.py": "X = 1\n"})
    result = project.cli("check", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert (report["changed"], report["diff"]) == ([], "")
    [finding] = report["findings"]
    assert (finding["path"], finding["severity"], finding["rule"]) == (
        "generated/sdk/stray.py",
        "error",
        "foreign-file",
    )
    assert finding["message"].startswith("toolgen did not write this file; move it into generated/sdk/ext/")
    checked = toolgen.check(project.root)
    assert not checked.ok and checked.changed == ()


def test_the_library_raises_foreign_files_error_with_one_diagnostic_each(project: Project) -> None:
    put(project.package_dir, {"a.txt": "a\n", "b/c.txt": "c\n"})
    with pytest.raises(ForeignFilesError) as raised:
        toolgen.build(project.root, force=True)
    assert isinstance(raised.value, InvalidInputError) and raised.value.exit_code == 3
    assert [d.path for d in raised.value.diagnostics] == ["generated/sdk/a.txt", "generated/sdk/b/c.txt"]


def test_bytecode_is_not_foreign(project: Project) -> None:
    put(project.package_dir, {"__pycache__/x.cpython-312.pyc": "x", "_runtime/__pycache__/y.pyc": "y"})
    assert toolgen.build(project.root, force=True).written
    assert toolgen.check(project.root).ok


def test_a_folder_where_a_generated_file_goes_is_foreign(project: Project) -> None:
    (project.package_dir / "tools.py").unlink()
    (project.package_dir / "tools.py").mkdir()
    with pytest.raises(ForeignFilesError) as raised:
        toolgen.build(project.root)
    assert [d.format() for d in raised.value.diagnostics] == [
        "generated/sdk/tools.py/:1:1: error foreign-file a folder where toolgen writes a file; move it into "
        "generated/sdk/ext/ or list it under `keep:` in toolgen.yaml"
    ]
    assert (project.package_dir / "tools.py").is_dir()


def test_a_package_without_a_manifest_rebuilds_only_when_nothing_in_it_was_edited(project: Project) -> None:
    (project.package_dir / MANIFEST_NAME).unlink()
    models = project.package_dir / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    with pytest.raises(ForeignFilesError) as raised:
        toolgen.build(project.root)
    assert [d.path for d in raised.value.diagnostics] == ["generated/sdk/models.py"]
    assert models.read_text(encoding="utf-8").endswith("# mine\n")
    models.write_text(models.read_text(encoding="utf-8").removesuffix("# mine\n"), encoding="utf-8")
    assert toolgen.build(project.root).written, "files exactly as toolgen writes them are not foreign"
    assert toolgen.check(project.root).ok


def test_a_file_the_manifest_no_longer_lists_is_deleted_with_the_folder_it_empties(project: Project) -> None:
    put(project.package_dir, {"_runtime/retired/old.py": "OLD = 1\n", "_runtime/retired/__pycache__/x.pyc": "x"})
    put(project.package_dir, {"ext/mine.py": MINE})
    _edit_manifest(
        project, lambda manifest: manifest["files"].update({"_runtime/retired/old.py": text_digest("OLD = 1\n")})
    )
    assert toolgen.build(project.root).written
    assert not (project.package_dir / "_runtime/retired").exists()
    assert (project.package_dir / "ext/mine.py").read_text(encoding="utf-8") == MINE
    assert toolgen.check(project.root).ok


# Renamed packages


def test_a_renamed_package_leaves_no_orphan(project: Project) -> None:
    set_config(project, "package: sdk", "package: sdk2")
    checked = project.cli("check")
    assert checked.returncode == 1
    assert (
        "generated/sdk/toolgen-manifest.json:1:1: error stale-package generated/sdk/ is the package an earlier "
        "build of toolgen.yaml wrote; it now builds generated/sdk2/" in checked.stdout
    )
    assert toolgen.build(project.root).written
    assert sorted(p.name for p in (project.root / "generated").iterdir()) == ["sdk2"]
    assert toolgen.check(project.root).ok


def test_a_moved_output_leaves_no_orphan(project: Project) -> None:
    set_config(project, "output: generated", "output: src")
    assert toolgen.build(project.root).written
    assert not (project.root / "generated" / "sdk").exists()
    assert (project.root / "src" / "sdk" / MANIFEST_NAME).is_file()


@pytest.mark.parametrize("kind", ["zone", "edited", "stray"])
def test_an_old_package_holding_what_toolgen_did_not_write_stops_the_build(project: Project, kind: str) -> None:
    name = {"zone": "ext/mine.py", "edited": "tools.py", "stray": "notes.txt"}[kind]
    target = project.package_dir / name
    put(project.package_dir, {name: (target.read_text(encoding="utf-8") if target.exists() else "") + "# mine\n"})
    set_config(project, "package: sdk", "package: sdk2")
    before = everything(project.root)
    with pytest.raises(ForeignFilesError) as raised:
        toolgen.build(project.root)
    [error] = [d.format() for d in raised.value.diagnostics]
    assert error.startswith(f"generated/sdk/{name}:1:1: error foreign-file the old package generated/sdk/")
    assert "move it (into generated/sdk2/ext/ if it is yours)" in error
    assert everything(project.root) == before
    moved = project.root / "generated/sdk2/ext" / Path(name).name
    put(moved.parent, {moved.name: target.read_text(encoding="utf-8")})
    target.unlink()
    assert toolgen.build(project.root).written
    assert not (project.root / "generated/sdk").exists()
    assert moved.read_text(encoding="utf-8").endswith("# mine\n")


def test_an_old_package_without_a_manifest_is_left_alone(project: Project) -> None:
    (project.package_dir / MANIFEST_NAME).unlink()
    set_config(project, "package: sdk", "package: sdk2")
    assert "stale-package" not in [d.rule for d in toolgen.check(project.root).warnings]
    assert toolgen.build(project.root).written
    assert (project.root / "generated/sdk/models.py").is_file()


def test_two_configs_of_one_project_keep_each_others_packages(project: Project) -> None:
    other = (project.root / "toolgen.yaml").read_text(encoding="utf-8").replace("package: sdk", "package: other")
    (project.root / "other.yaml").write_text(other, encoding="utf-8")
    toolgen.build(project.root, config_path=project.root / "other.yaml")
    toolgen.build(project.root, force=True)
    assert toolgen.check(project.root, config_path=project.root / "other.yaml").ok
    assert sorted(p.name for p in (project.root / "generated").iterdir()) == ["other", "sdk"]


# What made the package


def test_the_manifest_records_the_runtime_hash_and_the_makers(project: Project) -> None:
    manifest = json.loads((project.package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    runtime = sorted(p for p in (project.package_dir / "_runtime").rglob("*") if p.is_file())
    hasher = hashlib.sha256()
    for path in runtime:
        name = path.relative_to(project.package_dir).as_posix()
        hasher.update(f"{name}\0{text_digest(path.read_text(encoding='utf-8'))}\n".encode())
    assert manifest["runtime"] == hasher.hexdigest()
    assert manifest["versions"] == {name: metadata.version(name) for name in MAKERS}
    text = (project.package_dir / MANIFEST_NAME).read_text(encoding="utf-8")
    assert str(project.root) not in text and "generated/" not in text


def _older_ruff(manifest: dict[str, Any]) -> None:
    manifest["versions"]["ruff"] = "0.0.1"


def test_other_versions_alone_are_a_warning_not_drift(project: Project) -> None:
    _edit_manifest(project, _older_ruff)
    result = project.cli("check")
    assert result.returncode == 0, result.stdout
    running = metadata.version("ruff")
    assert result.stdout == (
        "generated/sdk/toolgen-manifest.json:1:1: warning generator-versions generated/sdk/ was made by ruff 0.0.1 "
        f"(running {running}); every file still matches; `toolgen build` records the running versions\n"
    )
    assert toolgen.build(project.root).written
    assert toolgen.check(project.root).warnings == ()


def test_other_versions_are_named_as_the_likely_cause_of_drift(project: Project) -> None:
    _edit_manifest(project, _older_ruff)
    tools = project.package_dir / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "# formatted otherwise\n", encoding="utf-8")
    checked = toolgen.check(project.root)
    assert checked.changed == ("generated/sdk/tools.py",), "the versions themselves are not drift"
    [warning] = checked.warnings
    assert warning.rule == "generator-versions" and "was made by ruff 0.0.1" in warning.message
    assert warning.message.endswith("the version difference is a likely cause of the 1 differing file(s)")


def test_a_runtime_hash_that_differs_is_drift(project: Project) -> None:
    _edit_manifest(project, lambda manifest: manifest.update(runtime="0" * 64))
    checked = toolgen.check(project.root)
    assert checked.changed == ("generated/sdk/toolgen-manifest.json",)
    assert '+  "runtime": "' in checked.diff


def test_the_manifest_is_deterministic() -> None:
    files = {"b.py": "B\n", "_runtime/x.py": "X\r\n", "a.py": "A\n"}
    first = render_manifest(files, {"schemas/t.yaml": "h"})
    assert first == render_manifest(dict(reversed(list(files.items()))), {"schemas/t.yaml": "h"})
    assert json.loads(first)["runtime"] == json.loads(render_manifest({"_runtime/x.py": "X\n"}, {}))["runtime"]


# Kill safety: a kill at any step leaves the old package or (after recovery) the new one, and the zone whole


OLD = {"a.py": "A = 1\n", "sub/b.py": "B = 1\n", "gone.py": "G = 1\n", "layout": "file\n", "pkg/y.py": "Y = 1\n"}
NEW = {"a.py": "A = 2\n", "sub/b.py": "B = 2\n", "sub/c.py": "C = 2\n", "layout/x.py": "X = 2\n", "pkg": "file\n"}
ZONE = ("ext", "notes.txt", "sub/local.py")
ZONE_FILES = {"ext/mine.py": MINE, "ext/deep/data.txt": "d\n", "notes.txt": "n\n", "sub/local.py": "L = 1\n"}


class Killed(BaseException):
    """Stands for SIGKILL: no handler in the write catches it."""


def _package(files: dict[str, str]) -> dict[str, bytes]:
    return {name: text.encode() for name, text in {**files, MANIFEST_NAME: render_manifest(files, {})}.items()}


def _tree(package_dir: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(generated files, zone files) on disk."""
    found = everything(package_dir) if package_dir.exists() else {}
    zone = {k: v for k, v in found.items() if toolgen.output.write.in_zone(k, ZONE)}
    return {k: v for k, v in found.items() if k not in zone}, zone


def _work(package_dir: Path) -> Path:
    """The package's work folder: beside the output folder, as a project's `.toolgen-cache/write/` would be."""
    return package_dir.parent.parent / "work" / package_dir.name


def _write(package_dir: Path, files: dict[str, str]) -> None:
    toolgen.output.write.write_package(
        package_dir, files, MANIFEST_NAME, render_manifest(files, {}), ZONE, _work(package_dir)
    )


def _recover(package_dir: Path) -> None:
    toolgen.output.write.recover(package_dir, _work(package_dir))


@pytest.fixture
def old_package(tmp_path: Path) -> Iterator[Path]:
    package_dir = tmp_path / "out" / "pkg"
    _write(package_dir, OLD)
    put(package_dir, ZONE_FILES)
    yield package_dir


def _steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    package_dir = tmp_path / "probe" / "pkg"
    _write(package_dir, OLD)
    seen: list[str] = []
    monkeypatch.setattr(toolgen.output.write, "_reached", seen.append)
    _write(package_dir, NEW)
    monkeypatch.undo()
    return seen


def _kill_at(monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    count = iter(range(10_000))

    def reached(step: str) -> None:
        if next(count) == index:
            raise Killed(step)

    monkeypatch.setattr(toolgen.output.write, "_reached", reached)


def test_the_write_steps_cover_every_delete_and_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = _steps(tmp_path, monkeypatch)
    assert steps[:2] == ["staged", "committed"] and steps[-1] == "applied"
    assert [s for s in steps if s.startswith("deleted")] == ["deleted gone.py", "deleted layout", "deleted pkg/y.py"]
    assert [s.removeprefix("wrote ") for s in steps if s.startswith("wrote")] == [*sorted(NEW), MANIFEST_NAME]


def test_a_kill_at_any_write_step_recovers_to_old_or_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_package: Path
) -> None:
    steps = _steps(tmp_path, monkeypatch)
    old_tree = _tree(old_package)
    assert old_tree == (_package(OLD), {k: v.encode() for k, v in ZONE_FILES.items()})
    for index, step in enumerate(steps):
        package_dir = tmp_path / f"kill{index}" / "pkg"
        _write(package_dir, OLD)
        put(package_dir, ZONE_FILES)
        _kill_at(monkeypatch, index)
        with pytest.raises(Killed):
            _write(package_dir, NEW)
        monkeypatch.undo()
        generated, zone = _tree(package_dir)
        assert zone == old_tree[1], step
        if step == "staged":
            assert generated == old_tree[0], "before the commit point the old package is untouched"
        assert sorted(p.name for p in package_dir.parent.iterdir()) == ["pkg"], "a kill leaves nothing beside it"
        _recover(package_dir)
        expected = old_tree[0] if step == "staged" else _package(NEW)
        assert _tree(package_dir) == (expected, old_tree[1]), step
        assert sorted(p.name for p in package_dir.parent.iterdir()) == ["pkg"], step
        assert not _work(package_dir).exists(), step


def test_a_kill_during_recovery_is_recovered_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = _steps(tmp_path, monkeypatch)
    commit = steps.index("committed")
    for first in (commit, commit + 3, len(steps) - 2):
        for second in range(len(steps) - commit - 1):
            package_dir = tmp_path / f"kill{first}-{second}" / "pkg"
            _write(package_dir, OLD)
            put(package_dir, ZONE_FILES)
            _kill_at(monkeypatch, first)
            with pytest.raises(Killed):
                _write(package_dir, NEW)
            _kill_at(monkeypatch, second)
            with contextlib.suppress(Killed):
                _recover(package_dir)
            monkeypatch.undo()
            _recover(package_dir)
            assert _tree(package_dir) == (_package(NEW), {k: v.encode() for k, v in ZONE_FILES.items()})


def test_an_interrupt_past_the_commit_point_finishes_the_new_package(
    monkeypatch: pytest.MonkeyPatch, old_package: Path
) -> None:
    def interrupt(step: str) -> None:
        if step == "wrote sub/b.py":
            monkeypatch.undo()
            raise KeyboardInterrupt

    monkeypatch.setattr(toolgen.output.write, "_reached", interrupt)
    with pytest.raises(KeyboardInterrupt):
        _write(old_package, NEW)
    assert _tree(old_package) == (_package(NEW), {k: v.encode() for k, v in ZONE_FILES.items()})
    assert sorted(p.name for p in old_package.parent.iterdir()) == ["pkg"]


KILLED_BUILD = """\
import os, signal, sys
import toolgen, toolgen.output.write as write
step, root = sys.argv[1], sys.argv[2]
def reached(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)
write._reached = reached
toolgen.build(root, force=True)
"""


def _killed_build(project: Project, step: str) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, step, str(project.root)], capture_output=True, text=True, check=False
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr


@pytest.fixture(scope="module")
def prechecked_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return weather_checked_with(tmp_path_factory.mktemp("checked"), "schemas/time.yaml", SECOND_TOOL)


@pytest.fixture
def prechecked(prechecked_root: Path, tmp_path: Path) -> Project:
    """A copy of the weather project whose cache knows the package with SECOND_TOOL passed the check."""
    return Project.copy_of(prechecked_root, tmp_path / "project")


@pytest.mark.parametrize("step", ["staged", "committed", "wrote models.py", "applied"])
def test_a_build_killed_at_a_step_keeps_the_zone_and_the_next_build_finishes(prechecked: Project, step: str) -> None:
    project = prechecked
    put(project.package_dir, {"ext/mine.py": MINE})
    old_models = (project.package_dir / "models.py").read_text(encoding="utf-8")
    project.write("schemas/time.yaml", SECOND_TOOL)
    _killed_build(project, step)
    assert [p for p in (project.root / "generated").rglob("mine.py")] == [project.package_dir / "ext/mine.py"]
    models = (project.package_dir / "models.py").read_text(encoding="utf-8")
    if step in ("staged", "committed"):
        assert models == old_models, "nothing is applied before a commit is"
    else:
        assert "GetTimeArgs" in models
    toolgen.build(project.root)
    assert sorted(p.name for p in (project.root / "generated").iterdir()) == ["sdk"]
    assert (project.package_dir / "ext/mine.py").read_text(encoding="utf-8") == MINE
    assert "GetTimeArgs" in (project.package_dir / "models.py").read_text(encoding="utf-8")
    assert toolgen.check(project.root).ok


def test_a_build_killed_while_removing_the_old_package_finishes_next_time(project: Project) -> None:
    set_config(project, "package: sdk", "package: sdk2")
    _killed_build(project, "renamed old package aside")
    assert sorted(p.name for p in (project.root / "generated").iterdir()) == ["sdk2"], "nothing left in output"
    removing = project.root / ".toolgen-cache/write/generated%2Fsdk/removing"
    assert removing.is_dir(), "the old package's remains wait in its work folder"
    assert toolgen.check(project.root).ok, "the new package is whole and nothing is left under the output folder"
    toolgen.build(project.root)
    assert sorted(p.name for p in (project.root / "generated").iterdir()) == ["sdk2"]
    assert not removing.parent.exists()
    assert toolgen.check(project.root).ok
