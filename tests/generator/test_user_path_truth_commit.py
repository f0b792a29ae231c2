"""A build's commit never leaves old and new files mixed in silence: a folder it cannot write stops it before the
commit point, with nothing written; a write that fails past it names the files that are new and those still old."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.projects import Project

import toolgen.output.write as write_module
from toolgen.output.writable import refuse_unwritable

KELVIN = (
    "tools:\n  - name: get_current_weather\n    description: Get the current weather in a given location.\n"
    "    inputSchema:\n      type: object\n      properties:\n        location: {type: string}\n"
    "        unit: {type: string, enum: [celsius, fahrenheit, kelvin]}\n      required: [location]\n"
)
TOOLGEN = f"{sys.executable} -m toolgen"


def _namespaced(script: str) -> subprocess.CompletedProcess[str]:
    """`script` in a mount namespace of its own, where a folder can be mounted read-only (chmod stops no write of
    root's, and CI runs as root)."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a read-only folder")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True, check=False)
    if probe.returncode:
        pytest.skip(f"mount namespaces are not allowed here: {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, check=False)


def test_a_read_only_package_folder_with_a_writable_subfolder_stops_the_build_before_its_commit(
    project: Project, tmp_path: Path
) -> None:
    # The edit changes _tool_models/get_current_weather.py (writable) and tools.py (in the read-only folder): the
    # commit had moved the first, failed on the second and left the package half old, half new.
    before = project.snapshot()
    project.write("schemas/weather.yaml", KELVIN)
    package, spare = project.package_dir, tmp_path / "models"
    spare.mkdir()
    result = _namespaced(
        f"mount --bind {package}/_tool_models {spare} && mount --bind {package} {package} && "
        f"mount -o remount,bind,ro {package} && mount --bind {spare} {package}/_tool_models && "
        f"cd {project.root} && {TOOLGEN} build -q; echo exit=$?"
    )
    assert result.stdout == "exit=4\n", result.stderr
    assert result.stderr == (
        "toolgen: cannot write generated/sdk: Read-only file system; the file system is read-only: build in a "
        "writable checkout, or set `output:` to a writable folder; nothing was written\n"
    )
    assert project.snapshot() == before, "no file of the package changed"
    work = project.root / ".toolgen-cache" / "write"
    assert not work.exists() or not any(work.rglob("staging-*")), "nothing staged either"
    assert project.cli("build", "-q").returncode == 0
    assert project.cli("check", "-q").returncode == 0


def test_a_folder_still_to_be_made_is_checked_where_it_would_be_made(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "out" / "pkg"
    package.mkdir(parents=True)
    denied = str(package)
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: path != denied and real(path, mode, **kw))
    with pytest.raises(PermissionError) as refused:
        refuse_unwritable(package, ["new_folder/deeper/module.py"])
    assert refused.value.errno == errno.EACCES and refused.value.filename == denied
    refuse_unwritable(package, [], ["beside.toml"])  # the output folder itself is writable


def test_a_write_failing_past_the_commit_point_names_the_new_files_and_the_old(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = write_module.moved

    def refusing(source: str, target: str) -> None:
        if str(target).endswith("/tools.py"):
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        real(source, target)

    project.write("schemas/weather.yaml", KELVIN)
    monkeypatch.setattr(write_module, "moved", refusing)
    result = project.cli("build", "-q")
    assert result.returncode == 4, result.stderr
    assert result.stderr == (
        "toolgen: cannot write generated/sdk/tools.py: Permission denied; permission denied: make it writable for "
        "the user who builds, or build as its owner; the new package is committed but not all in place (now new: "
        "1 file(s), generated/sdk/_tool_models/get_current_weather.py; still old: 2 file(s), "
        "generated/sdk/toolgen-manifest.json, generated/sdk/tools.py): `toolgen build` finishes it once this is "
        "fixed\n"
    )
    assert "kelvin" in (project.package_dir / "_tool_models" / "get_current_weather.py").read_text(encoding="utf-8")
    assert "kelvin" not in (project.package_dir / "tools.py").read_text(encoding="utf-8")
    monkeypatch.setattr(write_module, "moved", real)
    assert project.cli("check", "-q").returncode == 1, "check reports the pending commit"
    assert project.cli("build", "-q").returncode == 0
    assert project.cli("check", "-q").returncode == 0
