"""`toolgen init` on a user's project: toolgen pinned by the commit it was installed at (a branch moves on), a kept
requirements-toolgen.txt that pins another toolgen said in one line, and a CRLF project's files kept CRLF."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest
from support.cli_in_process import toolgen_in

import toolgen.project.scaffold as scaffold
from toolgen import api
from toolgen.project.own_pin import Pin, pin_from

SHA = "ec3ff5c72b8c200ba63b3f984cc980b57f976ae0"
URL = "https://github.com/example/toolgen.git"


def _record(revision: str | None) -> str:
    vcs: dict[str, str] = {"vcs": "git", "commit_id": SHA}
    if revision is not None:
        vcs["requested_revision"] = revision
    return json.dumps({"url": URL, "vcs_info": vcs})


@pytest.mark.parametrize("revision", ["main", "v0.1.0"], ids=["branch", "tag"])
def test_a_git_install_is_pinned_at_its_commit_not_the_revision_asked_for(revision: str) -> None:
    pin = pin_from(_record(revision), "0.1.0", Path("/p"))
    assert pin == Pin(f"toolgen @ git+{URL}@{SHA}", None, revision)


def test_a_git_install_by_its_commit_names_no_other_revision() -> None:
    assert pin_from(_record(SHA), "0.1.0", Path("/p")) == Pin(f"toolgen @ git+{URL}@{SHA}")
    assert pin_from(_record(None), "0.1.0", Path("/p")) == Pin(f"toolgen @ git+{URL}@{SHA}")


def test_the_requirements_file_says_what_the_commit_was_installed_by_and_the_pre_commit_rev(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scaffold, "own_pin", lambda project: pin_from(_record("main"), "0.1.0", project))
    scaffold.init_project(tmp_path, "toolgen_sdk")
    assert (tmp_path / "requirements-toolgen.txt").read_text(encoding="utf-8").splitlines()[2:] == [
        "# Installed by `main`, pinned at its commit then: `main` may move on, this does not.",
        f"# pre-commit hooks from toolgen's repository take the same commit: `rev: {SHA}`.",
        f"toolgen @ git+{URL}@{SHA}",
    ]


def test_a_kept_requirements_file_pinning_another_toolgen_is_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scaffold, "own_pin", lambda project: Pin(f"toolgen @ git+{URL}@{SHA}"))
    (tmp_path / "requirements-toolgen.txt").write_text("toolgen==0.0.1\n", encoding="utf-8")
    result = toolgen_in(tmp_path, "init")
    assert result.returncode == 0, result.stderr
    version = metadata.version("toolgen")
    assert result.stderr.splitlines() == [
        f"toolgen: kept requirements-toolgen.txt, which pins `toolgen==0.0.1`, not the toolgen {version} that ran "
        f"init (`toolgen @ git+{URL}@{SHA}`): CI builds with the pinned one, so `toolgen check` there may differ; "
        "change the pin or install that one",
        "next: toolgen build",
    ]
    assert (tmp_path / "requirements-toolgen.txt").read_text(encoding="utf-8") == "toolgen==0.0.1\n"


@pytest.mark.parametrize(
    "kept",
    [f"toolgen @ git+{URL}@{SHA}\n", "# ours\ntoolgen=={version}  # the release\n"],
    ids=["the-same-pin", "the-same-version"],
)
def test_a_kept_requirements_file_pinning_this_toolgen_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: str
) -> None:
    monkeypatch.setattr(scaffold, "own_pin", lambda project: Pin(f"toolgen @ git+{URL}@{SHA}"))
    (tmp_path / "requirements-toolgen.txt").write_text(kept.format(version=metadata.version("toolgen")), "utf-8")
    assert scaffold.init_project(tmp_path, "toolgen_sdk").notes == ()


def test_a_kept_requirements_file_without_toolgen_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scaffold, "own_pin", lambda project: Pin("toolgen==0.1.0"))
    (tmp_path / "requirements-toolgen.txt").write_text("pydantic>=2\n", encoding="utf-8")
    assert scaffold.init_project(tmp_path, "toolgen_sdk").notes == (
        "kept requirements-toolgen.txt, which pins no toolgen: CI's `pip install -r requirements-toolgen.txt` "
        "installs none; add `toolgen==0.1.0`",
    )


def test_init_keeps_the_line_endings_of_a_crlf_pyproject_and_gitignore(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\r\nname = "app"\r\n')
    (tmp_path / ".gitignore").write_bytes(b"dist/\r\n")
    assert toolgen_in(tmp_path, "init").returncode == 0
    pyproject = (tmp_path / "pyproject.toml").read_bytes()
    assert pyproject.startswith(b'[project]\r\nname = "app"\r\n\r\n[tool.ruff]\r\n')
    assert b"\n" not in pyproject.replace(b"\r\n", b""), "every line ends in CRLF"
    assert (tmp_path / ".gitignore").read_bytes() == (
        b"dist/\r\n# toolgen: the service's state, toolgen's cache, build leftovers\r\n"
        b".toolgen-state/\r\n.toolgen-cache/\r\n*.egg-info/\r\n__pycache__/\r\n"
    )


def test_init_keeps_lf_files_lf(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\nname = "app"\n')
    (tmp_path / ".gitignore").write_bytes(b"dist/\n")
    assert toolgen_in(tmp_path, "init").returncode == 0
    assert b"\r" not in (tmp_path / "pyproject.toml").read_bytes() + (tmp_path / ".gitignore").read_bytes()


def test_inits_inputs_read_tool_files_of_every_extension_beside_the_example(tmp_path: Path) -> None:
    # A .json or .yml tool beside init's .yaml example was read by no input, and nothing said so.
    scaffold.init_project(tmp_path, "toolgen_sdk")
    tools = tmp_path / "schemas" / "tools"
    (tools / "ping.json").write_text(
        '{"tools": [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}]}', encoding="utf-8"
    )
    (tools / "pong.yml").write_text("name: pong\ndescription: Pong.\ninputSchema: {type: object}\n", "utf-8")
    built = api.build(tmp_path)
    tools_module = (built.package_dir / "tools.py").read_text(encoding="utf-8")
    assert all(f"def {name}(" in tools_module for name in ("get_current_weather", "ping", "pong"))
    assert built.warnings == (), "a pattern of an extension no file has, in the tools' folder, is no typo"
