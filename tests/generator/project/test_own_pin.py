"""`toolgen init`'s requirements-toolgen.txt: toolgen pinned as it was installed (PEP 610's direct_url.json), each
source a pip records, with a note exactly when the pin names a path that only this machine has."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolgen.project.own_pin import pin_from


def record(url: str, **info: object) -> str:
    return json.dumps({"url": url, **info})


def test_from_a_git_url_at_a_tag_or_branch_the_commit_is_pinned() -> None:
    # A tag can move and a branch does: the commit pip checked out is what made the package.
    for revision in ("v0.1.0", "main"):
        vcs = {"vcs": "git", "requested_revision": revision, "commit_id": "a" * 40}
        pin = pin_from(record("https://git.example.com/toolgen.git", vcs_info=vcs), "0.1.0", Path("/p"))
        assert pin.requirement == f"toolgen @ git+https://git.example.com/toolgen.git@{'a' * 40}"


def test_from_a_git_url_without_a_revision_the_commit_is_pinned() -> None:
    vcs = {"vcs": "git", "commit_id": "b" * 40}
    pin = pin_from(record("https://git.example.com/toolgen.git", vcs_info=vcs), "0.1.0", Path("/p"))
    assert pin.requirement == f"toolgen @ git+https://git.example.com/toolgen.git@{'b' * 40}"


def test_from_a_package_index_the_version_is_pinned() -> None:
    assert pin_from(None, "0.1.0", Path("/p")).requirement == "toolgen==0.1.0"


def test_a_wheel_kept_in_the_project_is_pinned_by_its_relative_path(tmp_path: Path) -> None:
    wheel = tmp_path / "vendor" / "toolgen-0.1.0-py3-none-any.whl"
    pin = pin_from(record(wheel.as_uri(), archive_info={}), "0.1.0", tmp_path)
    assert (pin.requirement, pin.note) == ("./vendor/toolgen-0.1.0-py3-none-any.whl", None)


@pytest.mark.parametrize(
    ("info", "kind"),
    [({"archive_info": {}}, "a file"), ({"dir_info": {"editable": True}}, "a folder")],
    ids=["wheel", "folder"],
)
def test_a_path_outside_the_project_installs_here_and_says_ci_cannot(
    tmp_path: Path, info: dict[str, object], kind: str
) -> None:
    elsewhere = tmp_path / "downloads" / "toolgen-0.1.0-py3-none-any.whl"
    pin = pin_from(record(elsewhere.as_uri(), **info), "0.1.0", tmp_path / "project")
    assert pin.requirement == f"toolgen @ {elsewhere.as_uri()}"
    assert pin.note is not None and f"from {kind} on this machine ({elsewhere})" in pin.note
    assert "git+URL@<commit sha>" in pin.note


@pytest.mark.parametrize("text", ["{", "[]", '{"vcs_info": {}}'], ids=["not-json", "not-an-object", "no-url"])
def test_a_record_pip_could_not_have_written_gives_the_version_and_says_so(text: str) -> None:
    pin = pin_from(text, "0.1.0", Path("/p"))
    assert pin.requirement == "toolgen==0.1.0"
    assert pin.note is not None and "cannot say where this toolgen came from" in pin.note


def test_init_writes_the_pin_once_and_keeps_the_users(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for project in (first, second):
        project.mkdir()
    (second / "requirements-toolgen.txt").write_text("toolgen==9.9.9\n", encoding="utf-8")
    for project in (first, second):
        done = subprocess.run(
            [sys.executable, "-m", "toolgen", "init"], cwd=project, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
    written = (first / "requirements-toolgen.txt").read_text(encoding="utf-8").splitlines()
    assert written[0].startswith("# toolgen, pinned as `toolgen init` found it installed")
    assert written[-1].startswith(("toolgen", "./")), written
    assert (second / "requirements-toolgen.txt").read_text(encoding="utf-8") == "toolgen==9.9.9\n"
