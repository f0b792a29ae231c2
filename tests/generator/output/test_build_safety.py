"""A build never commits a broken or half-written package: the import-and-validate check before the commit point,
depth through $ref, a work folder a kill leaves nothing of under `output`, and the disk's refusals by name."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import WEATHER, Project, default_sigint
from support.shared_builds import weather_checked_with

import toolgen
import toolgen.api
import toolgen.codegen.render
from toolgen.core.errors import BrokenPackageError, ExitCode, InvalidInputError

MakeProject = Callable[..., Project]
SECOND_TOOL = (
    "tools:\n  - name: get_time\n    description: The time in a zone.\n"
    "    inputSchema: {type: object, properties: {zone: {type: string}}}\n"
)


def chain(levels: int) -> dict[str, object]:
    """A tool whose arguments nest `levels` objects deep, one $ref a level."""
    defs: dict[str, object] = {
        f"d{i}": {"type": "object", "properties": {"c": {"$ref": f"#/$defs/d{i + 1}"}}, "required": ["c"]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"name": "deep", "description": "d", "inputSchema": {"$ref": "#/$defs/d0", "$defs": defs}}


def files_of(package_dir: Path) -> dict[str, bytes]:
    return {
        p.relative_to(package_dir).as_posix(): p.read_bytes()
        for p in sorted(package_dir.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


# The import-and-validate check


def _rendering(monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, str]], None]) -> None:
    """Let the build render as always, then `change` its files: a stand-in for a generator bug."""
    real = toolgen.codegen.render.render

    def broken(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        change(files)
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", broken)


def test_a_package_that_does_not_import_fails_the_build_and_nothing_is_written(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = project.snapshot()
    project.write("schemas/time.yaml", SECOND_TOOL)

    crash = "\nraise RuntimeError('no')\n"
    _rendering(monkeypatch, lambda files: files.__setitem__("models.py", files["models.py"] + crash))
    with pytest.raises(BrokenPackageError, match=r"does not import: RuntimeError: no \(at sdk/models.py:\d+: raise"):
        toolgen.build(project.root)
    assert BrokenPackageError.exit_code == ExitCode.INTERNAL
    assert project.snapshot() == before
    assert not list((project.root / ".toolgen-cache").rglob("staging-*"))


def test_a_tool_whose_validators_raise_fails_the_build_at_the_tool(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = project.snapshot()
    project.write("schemas/time.yaml", SECOND_TOOL)
    crash = textwrap.dedent(
        """
        _checked = validate_tool_arguments


        def validate_tool_arguments(name: str, data: Any) -> Any:
            if name == "get_time":
                raise RecursionError("maximum recursion depth exceeded")
            return _checked(name, data)
        """
    )
    _rendering(monkeypatch, lambda files: files.__setitem__("validators.py", files["validators.py"] + crash))
    with pytest.raises(InvalidInputError) as raised:
        toolgen.build(project.root)
    [finding] = raised.value.diagnostics
    assert (finding.path, finding.line, finding.col, finding.rule) == ("schemas/time.yaml", 2, 5, "sdk-check")
    assert "tool 'get_time' raise on its example arguments instead of accepting or refusing it" in finding.message
    assert "RecursionError: maximum recursion depth exceeded" in finding.message
    assert project.snapshot() == before


def test_every_tool_of_the_example_project_passes_the_check(make_project: MakeProject) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    project.write("schemas/time.yaml", SECOND_TOOL)
    checked = toolgen.build(project.root)
    assert checked.written


def _bytecode(project: Project) -> dict[str, bytes]:
    """The check's compiled modules, kept between builds, by their names (hashes of the source bytes)."""
    return {path.name: path.read_bytes() for path in (project.root / ".toolgen-cache" / "bytecode").iterdir()}


def test_the_check_keeps_what_it_compiled_for_the_next_build_and_drops_what_no_module_is_now(
    make_project: MakeProject,
) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    toolgen.build(project.root)
    first = _bytecode(project)
    assert len(first) > 10 and not [name for name in first if name.endswith(".partial")]
    assert toolgen.build(project.root, force=True).written
    assert _bytecode(project) == first, "the same sources are imported from the same code"
    project.write("schemas/time.yaml", SECOND_TOOL)
    toolgen.build(project.root)
    second = _bytecode(project)
    assert set(second) - set(first), "a module whose bytes changed is compiled anew"
    assert set(first) - set(second), "the code of the modules the new package no longer has is gone"
    assert set(first) & set(second), "the runtime, byte for byte the same, is not compiled again"


def test_unreadable_compiled_modules_are_compiled_again_and_a_broken_module_still_fails_at_its_line(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The project's copy holds the compiled modules of the build it was copied from.
    assert _bytecode(project), "the copied project has no compiled modules to spoil"
    for name in _bytecode(project):
        (project.root / ".toolgen-cache" / "bytecode" / name).write_bytes(b"\x00 not marshal data")
    project.write("schemas/time.yaml", SECOND_TOOL)  # a package not checked before: the check runs
    assert toolgen.build(project.root, force=True).written
    assert all(data != b"\x00 not marshal data" for data in _bytecode(project).values())
    before = project.snapshot()
    crash = "\nraise RuntimeError('no')\n"
    _rendering(monkeypatch, lambda files: files.__setitem__("models.py", files["models.py"] + crash))
    with pytest.raises(BrokenPackageError, match=r"does not import: RuntimeError: no \(at sdk/models.py:\d+: raise"):
        toolgen.build(project.root, force=True)
    assert project.snapshot() == before


def test_a_large_package_is_checked_in_two_interpreters_and_a_fault_in_either_half_fails_the_build(
    make_project: MakeProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolgen.output.sdk_check
    from toolgen.output.sdk_check import SHARD_FROM

    monkeypatch.setattr(toolgen.output.sdk_check, "_idle_cores", lambda: 2)  # as on an idle 2-core machine
    real_render = toolgen.codegen.render.render
    project = make_project()
    names = [f"tool_{index:03d}" for index in range(SHARD_FROM + 1)]
    tools = [
        {"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}} for name in names
    ]
    project.write("schemas/many.json", json.dumps({"tools": tools}))
    assert sum(name.startswith("_tool_models/") for name in toolgen.build(project.root).files) > SHARD_FROM
    before = project.snapshot()
    # Shard 0 takes the even per-tool modules and tools, shard 1 the odd ones.
    crash = "\nraise RuntimeError('odd')\n"
    odd = f"_tool_models/{names[1]}.py"
    _rendering(monkeypatch, lambda files: files.__setitem__(odd, files[odd] + crash))
    with pytest.raises(BrokenPackageError, match=rf"does not import: RuntimeError: odd \(at sdk/{odd}:\d+: raise"):
        toolgen.build(project.root, force=True)
    assert project.snapshot() == before
    monkeypatch.setattr(toolgen.codegen.render, "render", real_render)
    raising = textwrap.dedent(
        """
        _checked = validate_tool_arguments


        def validate_tool_arguments(name: str, data: Any) -> Any:
            if name in ("tool_002", "tool_003"):
                raise RecursionError("maximum recursion depth exceeded")
            return _checked(name, data)
        """
    )
    _rendering(monkeypatch, lambda files: files.__setitem__("validators.py", files["validators.py"] + raising))
    with pytest.raises(InvalidInputError) as raised:
        toolgen.build(project.root, force=True)
    assert [finding.message.split("'")[1] for finding in raised.value.diagnostics] == ["tool_002", "tool_003"]
    assert project.snapshot() == before


# Nesting through $ref


def test_a_chain_of_refs_at_the_limit_builds_an_sdk_whose_validators_work(make_project: MakeProject) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(chain(32)))
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    value: object = "x"
    for _ in range(32):
        value = {"c": value}
    script = (
        f"from sdk import validate_tool_arguments\nprint(type(validate_tool_arguments('deep', {value!r})).__name__)"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "DeepArgs\n"


@pytest.mark.parametrize("levels", [33, 150, 3_000])
def test_a_chain_of_refs_past_the_limit_is_exit_3_at_the_tool(make_project: MakeProject, levels: int) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(chain(levels)))
    result = project.cli("build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("schemas/deep.json:1:53: error too-deep nested deeper than 64 levels"), (
        result.stdout
    )
    assert "once its $ref are followed" in result.stdout
    assert not (project.root / "generated").exists()


def test_a_recursive_schema_is_not_too_deep(make_project: MakeProject) -> None:
    tree = {
        "name": "tree",
        "inputSchema": {
            "$ref": "#/$defs/node",
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    },
                }
            },
        },
    }
    project = make_project()
    project.write("schemas/tree.json", json.dumps(tree))
    assert (built := project.cli("build")).returncode == 0, built.stdout + built.stderr


# Kills leave nothing under the output folder; check says when a commit is pending


@pytest.fixture(scope="module")
def prechecked_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return weather_checked_with(tmp_path_factory.mktemp("checked"), "schemas/time.yaml", SECOND_TOOL)


@pytest.fixture
def prechecked(prechecked_root: Path, tmp_path: Path) -> Project:
    """A copy of the weather project whose cache knows the package with SECOND_TOOL passed the check."""
    return Project.copy_of(prechecked_root, tmp_path / "project")


KILLED_AT = """\
import os, signal, sys
import toolgen, toolgen.output.write as write
step, root = sys.argv[1], sys.argv[2]
def reached(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)
write._reached = reached
toolgen.build(root)
"""


@pytest.mark.parametrize("step", ["staged", "committed", "wrote models.py", "applied"])
def test_a_build_killed_at_a_step_leaves_nothing_beside_the_package_and_check_tells(
    prechecked: Project, step: str
) -> None:
    project = prechecked
    old = files_of(project.package_dir)
    project.write("schemas/time.yaml", SECOND_TOOL)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AT, step, str(project.root)], capture_output=True, text=True, check=False
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [p.name for p in (project.root / "generated").iterdir()] == ["sdk"]
    checked = project.cli("check")
    assert checked.returncode == 1
    pending = "interrupted-build an interrupted build left this behind" in checked.stdout
    assert pending == (step != "staged"), checked.stdout
    if step == "staged":
        assert files_of(project.package_dir) == old, "before the commit point the package is untouched"
    rebuilt = project.cli("build")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "GetTimeArgs" in (project.package_dir / "models.py").read_text(encoding="utf-8")
    assert project.cli("check").returncode == 0
    assert not list((project.root / ".toolgen-cache" / "write").rglob("*"))


INTERRUPTED_AT = """\
import os, signal, sys
import toolgen.cli.main, toolgen.output.write as write
step = sys.argv[1]
def reached(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGINT)
write._reached = reached
sys.argv = ["toolgen", "build", "-C", sys.argv[2]]
toolgen.cli.main.main()
"""


@pytest.mark.parametrize(
    ("step", "said", "new"),
    [
        ("staged", "interrupted; nothing was written", False),
        ("committed", "interrupted once the new package was committed; it is written in full", True),
        ("wrote models.py", "interrupted once the new package was committed; it is written in full", True),
        ("applied", "interrupted once the new package was committed; it is written in full", True),
    ],
)
def test_ctrl_c_at_a_step_of_the_write_says_what_was_written(
    prechecked: Project, step: str, said: str, new: bool
) -> None:
    project = prechecked
    # Ctrl-C past the commit point had said that nothing was written (or, in the middle of removing the commit,
    # failed as an internal error): the package is finished first, and the message says so.
    old = files_of(project.package_dir)
    project.write("schemas/time.yaml", SECOND_TOOL)
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT, step, str(project.root)],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=default_sigint,
    )
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines()[-1] == f"toolgen: {said}"
    assert ("GetTimeArgs" in (project.package_dir / "models.py").read_text(encoding="utf-8")) == new
    if not new:
        assert files_of(project.package_dir) == old
    assert project.cli("check").returncode == (0 if new else 1)
    assert not list((project.root / ".toolgen-cache" / "write").rglob("*"))


def test_check_reports_what_an_older_toolgen_left_beside_the_package(project: Project) -> None:
    for name in (".sdk.staging-abc123", ".sdk.previous"):
        shutil.copytree(project.package_dir, project.root / "generated" / name)
    checked = project.cli("check")
    assert checked.returncode == 1
    assert "generated/.sdk.previous:1:1: error interrupted-build" in checked.stdout
    assert "generated/.sdk.staging-abc123:1:1: error interrupted-build" in checked.stdout
    assert project.cli("build").returncode == 0
    assert [p.name for p in (project.root / "generated").iterdir()] == ["sdk"]
    assert project.cli("check").returncode == 0


# The disk's refusals, by name


def test_a_file_where_the_scratch_folder_goes_is_named_not_an_internal_error(project: Project) -> None:
    shutil.rmtree(project.root / ".toolgen-cache")
    (project.root / ".toolgen-cache").write_text("mine\n", encoding="utf-8")
    result = project.cli("build")
    assert result.returncode == 4, result.stderr
    assert result.stderr.startswith("toolgen: cannot write .toolgen-cache: File exists; a file stands where toolgen")
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_file_where_the_package_goes_is_exit_3(project: Project) -> None:
    shutil.rmtree(project.package_dir)
    project.package_dir.write_text("mine\n", encoding="utf-8")
    result = project.cli("build")
    assert result.returncode == 3, result.stderr
    assert "is a file, not a package directory" in result.stderr


def _namespaced(script: str) -> subprocess.CompletedProcess[str]:
    """Run `script` in a shell in a mount namespace of its own (as root or with user namespaces), where folders can
    be mounted read-only or small: chmod alone stops no write of root's, and CI runs as root."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a read-only or full file system")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True, check=False)
    if probe.returncode:
        pytest.skip(f"mount namespaces are not allowed here: {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, check=False)


TOOLGEN = f"{sys.executable} -m toolgen"


def _read_only(root: Path, commands: str) -> subprocess.CompletedProcess[str]:
    return _namespaced(f"mount --bind {root} {root} && mount -o remount,bind,ro {root} && cd {root} && {commands}")


@pytest.mark.parametrize("cache", [True, False], ids=["after-a-build", "fresh-clone"])
def test_a_no_op_build_of_a_read_only_checkout_is_up_to_date(project: Project, cache: bool) -> None:
    if not cache:
        shutil.rmtree(project.root / ".toolgen-cache")
    result = _read_only(project.root, f"{TOOLGEN} build -q; echo exit=$?; {TOOLGEN} check -q; echo exit=$?")
    assert result.stdout.splitlines() == ["exit=0", "exit=0"], result.stderr
    assert "toolgen: generated/sdk/ is up to date" in result.stderr


def test_a_build_with_changes_on_a_read_only_checkout_names_the_path(project: Project) -> None:
    before = project.snapshot()
    project.write("schemas/time.yaml", SECOND_TOOL)
    result = _read_only(project.root, f"{TOOLGEN} build -q; echo exit=$?")
    assert result.stdout == "exit=4\n", result.stderr
    assert result.stderr == (
        "toolgen: cannot write .toolgen-cache/build.lock: Read-only file system; the file system is read-only: "
        "build in a writable checkout, or set `output:` to a writable folder; nothing was written\n"
    )
    assert project.snapshot() == before


def test_a_build_into_an_output_folder_that_is_a_bind_mount_writes_the_package(project: Project) -> None:
    # The same device on both sides, so the work folder stays in the cache, but a rename across two mounts fails
    # with EXDEV: it had stopped every such build past its commit point (a Docker volume, a bind mount).
    project.write("schemas/time.yaml", SECOND_TOOL)
    output = project.root / "generated"
    result = _namespaced(
        f"mount --bind {output} {output} && cd {project.root} && {TOOLGEN} build -q; echo exit=$?; "
        f"{TOOLGEN} check -q; echo exit=$?; find {output} -name '*toolgen-copy*'"
    )
    assert result.stdout.splitlines() == ["exit=0", "exit=0"], result.stderr
    assert "get_time" in (project.package_dir / "tools.py").read_text(encoding="utf-8")
    assert project.cli("check").returncode == 0


def test_a_full_disk_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    project = Project(disk)
    project.write("schemas/weather.yaml", WEATHER)
    result = _namespaced(
        f"cp -r {disk} {tmp_path}/copy && mount -t tmpfs -o size=300k tmpfs {disk} && cp -r {tmp_path}/copy/. {disk} "
        f"&& cd {disk} && {TOOLGEN} build -q; echo exit=$?; ls -A {disk} {disk}/.toolgen-cache/write"
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "exit=4", result.stderr
    assert "generated" not in lines, "nothing under the output folder"
    assert result.stderr.startswith("toolgen: cannot write .toolgen-cache/write/generated%2Fsdk/staging-"), (
        result.stderr
    )
    assert result.stderr.endswith(
        ": No space left on device; the disk is full: free some space and build again; nothing was written\n"
    )
    assert lines[-1].endswith("/.toolgen-cache/write:"), "the staging tree is gone"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a chmod'd folder; the mount tests above cover it")
def test_a_read_only_package_folder_is_named(project: Project) -> None:
    project.write("schemas/time.yaml", SECOND_TOOL)
    project.package_dir.chmod(0o555)
    try:
        result = project.cli("build")
    finally:
        project.package_dir.chmod(0o755)
    assert result.returncode == 4, result.stderr
    assert "Permission denied; permission denied: make it writable" in result.stderr
    assert "`toolgen build` finishes it once this is fixed" in result.stderr
    assert [p.name for p in (project.root / "generated").iterdir()] == ["sdk"]
    assert project.cli("build").returncode == 0
    assert project.cli("check").returncode == 0
