"""A package whose every byte passed the staged check before, in an environment unchanged since, is not checked again;
anything else is (toolgen.output.checked_packages): a different byte, a file of the environment changed, a record lost."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import WEATHER, Project

import toolgen
import toolgen.codegen.render
from toolgen.core.errors import BrokenPackageError
from toolgen.core.stamps import stamp
from toolgen.output.build_cache import INPUTS_CHANGED, OTHER_CHANGE, last_build_difference
from toolgen.output.checked_packages import KEEP, RECORD, CheckedPackages, package_digest
from toolgen.project.config import load_config

CORRUPT = b"\x00 not marshal data"


def _bytecode(project: Project) -> Path:
    return project.root / ".toolgen-cache" / "bytecode"


def _corrupt_bytecode(project: Project) -> None:
    """Spoil every compiled module the check keeps: a check that runs compiles them again, one that does not
    leaves them as they are."""
    for path in _bytecode(project).iterdir():
        path.write_bytes(CORRUPT)


def _checked(project: Project) -> bool:
    """Whether the last build ran the check: it replaced the spoiled compiled modules it imported."""
    return all(path.read_bytes() != CORRUPT for path in _bytecode(project).iterdir())


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Project:
    project = make_project()
    project.write("schemas/weather.yaml", WEATHER)
    assert toolgen.build(project.root).written
    return project


def test_a_forced_rebuild_of_the_same_package_is_not_checked_again(built: Project) -> None:
    assert (built.root / ".toolgen-cache" / RECORD).is_file()
    _corrupt_bytecode(built)
    result = toolgen.build(built.root, force=True)
    assert result.written and not result.changed
    assert not _checked(built), "the same bytes in the same environment are not imported again"


def test_a_changed_byte_is_checked_again(built: Project) -> None:
    _corrupt_bytecode(built)
    built.write("schemas/weather.yaml", WEATHER.replace("Get the current weather", "Get the weather"))
    assert toolgen.build(built.root).written
    assert _checked(built)


def test_the_same_bytes_are_checked_again_when_a_file_they_imported_changed(built: Project) -> None:
    record = built.root / ".toolgen-cache" / RECORD
    held = json.loads(record.read_text(encoding="utf-8"))
    [entry] = held["packages"]
    assert any(path.endswith(os.path.join("pydantic", "main.py")) for path, *_ in entry["environment"])
    # As if pydantic had been upgraded in place: the files the check imported are not as they were then.
    entry["environment"] = [[path, mtime + 1, *rest] for path, mtime, *rest in entry["environment"]]
    record.write_text(json.dumps(held), encoding="utf-8")
    _corrupt_bytecode(built)
    assert toolgen.build(built.root, force=True).written
    assert _checked(built)
    assert json.loads(record.read_text(encoding="utf-8"))["packages"][0]["environment"] != entry["environment"]


@pytest.mark.parametrize("record_text", ["", "{not json", '{"version": 1, "packages": [{"digest": 3}]}'])
def test_a_lost_or_unreadable_record_means_a_check(built: Project, record_text: str) -> None:
    (built.root / ".toolgen-cache" / RECORD).write_text(record_text, encoding="utf-8")
    _corrupt_bytecode(built)
    assert toolgen.build(built.root, force=True).written
    assert _checked(built)


def test_a_package_that_failed_is_never_taken_as_checked(built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    real = toolgen.codegen.render.render

    def broken(*args: object, **kwargs: object) -> dict[str, str]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        files["models.py"] += "\nraise RuntimeError('no')\n"
        return files

    monkeypatch.setattr(toolgen.codegen.render, "render", broken)
    before = built.snapshot()
    for _ in range(2):  # the same broken bytes fail every time: a failed check leaves no record
        with pytest.raises(BrokenPackageError, match="does not import: RuntimeError: no"):
            toolgen.build(built.root, force=True)
        assert built.snapshot() == before


# The record itself


def _environment(tmp_path: Path) -> list[tuple[str, int, int, int, int]]:
    """A module file and the folder it is found in, as a check records them."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    module = folder / "module.py"
    module.write_text("x = 1\n", encoding="utf-8")
    return [(str(path), *stamp(str(path))) for path in (module, folder)]


def test_the_record_holds_a_package_while_its_environment_is_unchanged(tmp_path: Path) -> None:
    record = CheckedPackages(tmp_path / "cache" / RECORD)
    environment = _environment(tmp_path)
    digest = package_digest("sdk", {"__init__.py": "", "models.py": "x = 1\n"}, "checker")
    assert record.passed(digest) is None and not record.current()
    record.add(digest, 3, environment)
    assert record.passed(digest) == 3 and record.current()
    module = tmp_path / "site-packages" / "module.py"
    module.write_text("x = 22\n", encoding="utf-8")  # a byte more
    assert record.passed(digest) is None and not record.current()
    record.add(digest, 3, [(str(module), *stamp(str(module)))])
    assert record.passed(digest) == 3
    replacement = module.with_name("new.py")
    replacement.write_text("x = 22\n", encoding="utf-8")
    replacement.replace(module)  # the same bytes in a new file, as an installer puts them
    assert record.passed(digest) is None


def test_the_digest_tells_every_byte_name_and_package_apart() -> None:
    files = {"a.py": "x = 1\n", "b.py": ""}
    digests = {
        package_digest("sdk", files, "checker"),
        package_digest("sdk", {**files, "a.py": "x = 2\n"}, "checker"),
        package_digest("sdk", {"a.py": "x = 1\n", "c.py": ""}, "checker"),
        package_digest("sdk", {"a.py": "x = 1\n"}, "checker"),
        package_digest("other", files, "checker"),
        package_digest("sdk", files, "another checker"),
        # the boundary between two files is part of what is hashed
        package_digest("sdk", {"a.py": "x = 1\n\0b.py", "b.py": ""}, "checker"),
    }
    assert len(digests) == 7
    assert package_digest("sdk", dict(reversed(list(files.items()))), "checker") in digests


def test_the_record_keeps_the_last_few_packages(tmp_path: Path) -> None:
    record = CheckedPackages(tmp_path / RECORD)
    digests = [package_digest("sdk", {"models.py": str(index)}, "checker") for index in range(KEEP + 2)]
    for index, digest in enumerate(digests):
        record.add(digest, index, [])
    assert [record.passed(digest) for digest in digests] == [None, None, *range(2, KEEP + 2)]
    record.add(digests[2], 2, [])  # passed again: the newest, and kept once
    assert len(json.loads((tmp_path / RECORD).read_text(encoding="utf-8"))["packages"]) == KEEP


def test_what_changed_since_the_last_build_is_told_apart(built: Project) -> None:
    # An edit of the inputs starts the check's interpreter before rendering (a package no check has seen,
    # most likely); anything else leaves that to the record of packages that passed.
    text = (built.root / "toolgen.yaml").read_text(encoding="utf-8")
    assert last_build_difference(load_config(built.root), text) is None
    models = built.package_dir / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert last_build_difference(load_config(built.root), text) == OTHER_CHANGE
    assert toolgen.build(built.root).written
    built.write("schemas/weather.yaml", WEATHER.replace("Get the current weather", "Get the weather"))
    assert last_build_difference(load_config(built.root), text) == INPUTS_CHANGED
    built.write("schemas/extra.yaml", WEATHER.replace("get_current_weather", "get_extra_weather"))
    assert last_build_difference(load_config(built.root), text) == INPUTS_CHANGED


def test_an_input_edit_that_changes_no_byte_of_the_package_starts_and_stops_its_interpreter(built: Project) -> None:
    _corrupt_bytecode(built)
    built.write("schemas/weather.yaml", "# a comment changes no model\n" + WEATHER)
    result = toolgen.build(built.root)
    assert not result.changed
    assert not _checked(built), "the same bytes in the same environment are not imported again"
    with pytest.raises(ChildProcessError):  # the interpreter started early was stopped and waited for
        os.waitpid(-1, os.WNOHANG)
