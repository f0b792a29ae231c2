"""toolgen.yaml read without a YAML parser, attacked: a config the file does not hold is never believed.

The kept config (config_cache.cached_config) and the plain read (read_plain) are believed only where the
package's manifest records the very config. These tests make the kept config name another text's settings, the
way a file saved while a quick verb reads it does, and give the plain reader a text nested deeper than it can
follow: each must fall back to reading the file, never use what it does not hold nor fail where PyYAML answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.projects import Project

from toolgen.core.errors import InvalidInputError
from toolgen.project.config import load_config
from toolgen.project.config_cache import cached_config, plain_config, read_plain, remember_config
from toolgen.project.recorded import recorded_config

RECORD = {"role": "user", "content": "What is the weather in Paris?"}


def test_a_config_saved_while_a_verb_reads_it_is_not_kept_under_the_new_text(project: Project) -> None:
    before = load_config(project.root)
    config = (project.root / "toolgen.yaml").read_text(encoding="utf-8")
    # The verb read the old text and the manifest vouched for it; the file is saved before it keeps what it read.
    (project.root / "toolgen.yaml").write_text(config.replace("package: sdk", "package: other_sdk"), encoding="utf-8")
    remember_config(before, None)
    kept = cached_config(project.root, None)
    assert kept is None or kept == load_config(project.root), "the new text found the old text's settings"
    assert recorded_config(project.root, None) is None, "the manifest records the old text, not this one"
    path = project.root / "record.json"
    path.write_text(json.dumps(RECORD), encoding="utf-8")
    done = project.cli("validate", "--as", "message", str(path))
    assert done.returncode == 3 and "other_sdk" in done.stderr, done.stderr  # not built under that name yet
    assert project.cli("check").returncode == 1, "a package built under another config is not up to date"


def test_a_hand_written_cache_naming_another_texts_settings_is_not_believed(project: Project) -> None:
    path = project.root / "record.json"
    path.write_text(json.dumps(RECORD), encoding="utf-8")
    assert project.cli("validate", "--as", "message", str(path)).returncode == 0
    kept = project.root / ".toolgen-cache" / "config.json"
    stored = json.loads(kept.read_text(encoding="utf-8"))
    config = (project.root / "toolgen.yaml").read_text(encoding="utf-8")
    edited = config.replace("package: sdk", "package: other_sdk")
    (project.root / "toolgen.yaml").write_text(edited, encoding="utf-8")
    from toolgen.core.digests import text_digest

    # The key of the new text, the settings (text digest included) of the one the manifest records.
    stored["key"] = stored["key"].replace(text_digest(config), text_digest(edited))
    kept.write_text(json.dumps(stored), encoding="utf-8")
    assert cached_config(project.root, None) is None
    done = project.cli("validate", "--as", "message", str(path))
    assert done.returncode == 3 and "other_sdk" in done.stderr, done.stderr


def _nested(depth: int) -> str:
    return "".join(" " * level + "k:\n" for level in range(depth)) + " " * depth + "k: v\n"


@pytest.mark.parametrize("depth", [2_000, 10_000])
def test_mappings_nested_past_the_stack_are_left_to_pyyaml(tmp_path: Path, depth: int) -> None:
    text = _nested(depth)
    assert read_plain(text, "toolgen.yaml") is None
    (tmp_path / "toolgen.yaml").write_text(text, encoding="utf-8")
    assert plain_config(tmp_path, None) is None
    with pytest.raises(InvalidInputError):  # PyYAML's reading says how deep it goes
        load_config(tmp_path, None)
