"""An up-to-date `check`'s answer kept with the stamps of what it depends on: never believed once one changed.

Each test keeps an answer (a check whose files were all written before it began, the stamps' margin set to zero
so that the test need not wait), changes one thing, and compares what `check` answers with `check --full`.
The same for toolgen's source hash, kept beside its bytecode: believed while no source file changed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.projects import WEATHER, Project
from test_instant_check import CHANGES, REFERRING, UNITS, _answers

import toolgen
import toolgen.project.manifest
from toolgen.core import stamps
from toolgen.output.instant_check import instant_check
from toolgen.output.kept_check import kept_warnings
from toolgen.project.config import load_config
from toolgen.project.config_cache import cached_config
from toolgen.project.input_digests import inputs_as_recorded
from toolgen.project.manifest import MANIFEST_NAME, read_manifest
from toolgen.project.manifest_json import manifest_json
from toolgen.project.recorded import recorded_inputs


@pytest.fixture(autouse=True)
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written before a check began may be trusted by its stamp at once (the margin covers coarse clocks)."""
    monkeypatch.setattr(stamps, "MARGIN_NS", 0)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The weather project (with a key the build warns about), built once for this module."""
    root = tmp_path_factory.mktemp("kept") / "project"
    root.mkdir()
    project = Project(root)
    project.write("schemas/weather.yaml", REFERRING.replace("    description:", "    colour: blue\n    description:"))
    project.write("defs/units.yaml", UNITS)
    toolgen.build(project.root)
    return root


@pytest.fixture
def kept(built_once: Path, tmp_path: Path) -> Project:
    """A test's own copy of the built project, whose last check kept its answer: the copy's files are new to the
    answer the build kept, so the check that finds them up to date keeps its own."""
    project = Project.copy_of(built_once, tmp_path / "project")
    _settle()
    assert instant_check(project.root.resolve(), None) is not None
    assert _kept(project) is not None, "an up-to-date check of settled files keeps its answer"
    return project


def _settle() -> None:
    """Let the clock move past every file written so far (stamps hold nanoseconds; some file systems less)."""
    time.sleep(0.05)


def _kept(project: Project, config_path: Path | None = None) -> tuple[object, ...] | None:
    """What `check` answers from the kept answer (None for a config the config cache does not know, as it does)."""
    config = cached_config(project.root.resolve(), config_path)
    return None if config is None else kept_warnings(config)


def test_the_kept_answer_is_the_full_one(kept: Project) -> None:
    fast, full = _answers(kept)
    assert fast is not None and full is not None and fast == full
    assert [d.rule for d in fast.warnings] == ["unknown-key"], "the build's warnings are repeated"
    assert _kept(kept) == full.warnings
    result = kept.cli("check")
    assert result.returncode == 0 and "unknown-key" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("name", CHANGES)
def test_a_change_is_never_answered_from_the_kept_answer(kept: Project, name: str) -> None:
    CHANGES[name](kept)
    assert _kept(kept) is None, f"{name}: a stamp or a match changed"
    fast, full = _answers(kept)
    assert fast is None
    assert full is None or not full.ok


@pytest.mark.skipif(sys.platform == "win32", reason="st_ctime is the creation time on Windows (stamps.py)")
def test_an_edit_that_keeps_size_and_modification_time_is_seen(kept: Project) -> None:
    tools = kept.package_dir / "tools.py"
    before = tools.stat()
    text = tools.read_text(encoding="utf-8")
    tools.write_text(text.replace("Registry", "Regjstry", 1), encoding="utf-8")
    os.utime(tools, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert tools.stat().st_size == before.st_size and tools.stat().st_mtime_ns == before.st_mtime_ns
    assert _kept(kept) is None, "the change time moved: a write no program can hide"
    fast, full = _answers(kept)
    assert fast is None and full is not None and full.changed


def test_a_file_written_just_before_the_check_is_not_trusted(kept: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stamps, "MARGIN_NS", 3_600 * 10**9)
    (kept.root / ".toolgen-cache" / "check.json").unlink()
    assert instant_check(kept.root.resolve(), None) is not None
    assert _kept(kept) is None, "every file was written within the margin: nothing is kept"


def test_a_user_zone_edit_keeps_the_answer(kept: Project) -> None:
    (kept.package_dir / "ext").mkdir()
    (kept.package_dir / "ext" / "mine.py").write_text("MINE = 1\n", encoding="utf-8")
    assert _kept(kept) is not None, "files of the user zone are not the build's"


def test_each_config_keeps_its_own_answer(kept: Project) -> None:
    other = kept.root / "other.yaml"
    other.write_text((kept.root / "toolgen.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    toolgen.build(kept.root, config_path=other)
    _settle()
    assert instant_check(kept.root.resolve(), other.resolve()) is not None
    assert _kept(kept, other.resolve()) is not None
    held = json.loads((kept.root / ".toolgen-cache" / "check.json").read_text(encoding="utf-8"))
    assert sorted(held) == ["other.yaml", "toolgen.yaml"]


def test_a_hand_edited_cache_is_not_believed(kept: Project) -> None:
    path = kept.root / ".toolgen-cache" / "check.json"
    held = json.loads(path.read_text(encoding="utf-8"))
    held["toolgen.yaml"]["warnings"] = [["x", "1", 1, "warning", "r", "m", ""]]
    path.write_text(json.dumps(held), encoding="utf-8")
    assert _kept(kept) is None, "a warning in another form is no answer"
    path.write_text("{not json", encoding="utf-8")
    fast, full = _answers(kept)
    assert fast is not None and fast == full


def test_a_copy_elsewhere_keeps_nothing_of_the_original(kept: Project, tmp_path: Path) -> None:
    shutil.copytree(kept.root, tmp_path / "copy")
    copy = Project(tmp_path / "copy")
    assert _kept(copy) is None, "other files, other stamps"
    fast, full = _answers(copy)
    assert fast is not None and fast == full


def test_the_source_digest_is_kept_and_believed_only_while_no_source_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(toolgen.core.resources.templates_dir(), templates)
    monkeypatch.setattr(toolgen.core.resources, "templates_dir", lambda: templates)
    memo = tmp_path / "cache" / "toolgen-source.json"
    monkeypatch.setattr(toolgen.project.manifest, "_source_memo", lambda package: memo)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    compute = toolgen.project.manifest.source_digest.__wrapped__
    _settle()
    first = compute()
    assert json.loads(memo.read_text(encoding="utf-8"))["digest"] == first
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # nothing written from here: what is read is the memo's
    memo.write_text(json.dumps({**json.loads(memo.read_text(encoding="utf-8")), "digest": "kept"}), encoding="utf-8")
    assert compute() == "kept", "every stamp is the same: the kept digest is believed"
    template = templates / "tools.py.jinja"
    template.write_text(template.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    changed = compute()
    assert changed not in ("kept", first), "a template changed: hashed again"
    template.write_text(template.read_text(encoding="utf-8")[:-1], encoding="utf-8")
    assert compute() == first
    (templates / "new.jinja").write_text("x\n", encoding="utf-8")
    assert compute() not in ("kept", first), "a file came: hashed again"


def test_the_source_digest_is_not_kept_when_python_writes_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = tmp_path / "toolgen-source.json"
    monkeypatch.setattr(toolgen.project.manifest, "_source_memo", lambda package: memo)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert len(toolgen.project.manifest.source_digest.__wrapped__()) == 64
    assert not memo.exists()


def _linked_folder(project: Project) -> None:
    (project.root / "schemas").rename(project.root / "real")
    (project.root / "schemas").symlink_to("real", target_is_directory=True)


def _linked_file(project: Project) -> None:
    (project.root / "elsewhere").mkdir()
    (project.root / "schemas" / "weather.yaml").rename(project.root / "elsewhere" / "w.yaml")
    (project.root / "schemas" / "weather.yaml").symlink_to("../elsewhere/w.yaml")


def _dotted_pattern(project: Project) -> None:
    path = project.root / "toolgen.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("schemas/**", "schemas/../schemas/**"), encoding="utf-8")


LAYOUTS: dict[str, Callable[[Project], None]] = {
    "plain": lambda project: None,
    "linked folder": _linked_folder,
    "linked file": _linked_file,
    "pattern with ..": _dotted_pattern,
}
AFTER_BUILD: dict[str, Callable[[Project], None]] = {
    "nothing": lambda project: None,
    "new file": lambda project: project.write("schemas/new.yaml", WEATHER.replace("get_current_weather", "new_one")),
    "new own file": lambda project: project.write("schemas/mcp-lock.json", "{}\n"),
}


@pytest.mark.parametrize("after", AFTER_BUILD)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_inputs_are_named_as_the_build_names_them(
    make_project: Callable[..., Project], layout: str, after: str
) -> None:
    """Resolving a folder once for all its files names each input as resolving it alone does."""
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    LAYOUTS[layout](project)
    toolgen.build(project.root)
    AFTER_BUILD[after](project)
    config = load_config(project.root.resolve())
    recorded = (read_manifest(config.package_dir) or {}).get("inputs")
    assert isinstance(recorded, dict) and len(recorded) > 1, recorded
    found = inputs_as_recorded(config, recorded)
    assert found == recorded_inputs(config, recorded)
    assert (found is None) == (after == "new file"), found


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_the_manifest_text_is_what_json_dumps_writes(value: object) -> None:
    assert manifest_json(value) == json.dumps(value, indent=2, sort_keys=True) + "\n"


def test_a_built_manifest_is_its_own_rendering(kept: Project) -> None:
    text = (kept.package_dir / MANIFEST_NAME).read_text(encoding="utf-8")
    assert manifest_json(json.loads(text)) == text
