"""What a build keeps for the next one (the models modules, the runtime as carried, the templates compiled): a build
that reads them writes byte for byte what a build without them writes, and no entry made under other schemas,
another toolgen, or damaged since, reaches the output."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import Project

import toolgen
import toolgen.project.manifest
from toolgen.codegen.kept import KeptEntry
from toolgen.codegen.model_cache import ModelsCache, models_key
from toolgen.codegen.render import header_line
from toolgen.codegen.targets.model_modules import ModelModules
from toolgen.codegen.targets.package import runtime_files
from toolgen.ir.lower import lower
from toolgen.ir.model import Project as IR
from toolgen.project.config import load_config

SCRATCH = ".toolgen-cache"
MODELS = f"{SCRATCH}/models.json"
RUNTIME = f"{SCRATCH}/runtime.json"
TEMPLATES = f"{SCRATCH}/templates"
STALE = "\nFROM_A_STALE_ENTRY = 1\n"
NESTED = """\
tools:
  - name: book_trip
    description: Book a trip.
    inputSchema:
      type: object
      properties:
        legs:
          type: array
          items:
            type: object
            properties:
              origin: {type: string}
              stops: {type: array, items: {type: object, properties: {city: {type: string}}}}
      required: [legs]
"""


def _ir(project: Project) -> tuple[IR, str]:
    config = load_config(project.root)
    return lower(config).project, header_line(config)


def _key(project: Project) -> str:
    return models_key(*_ir(project))


def _models(project: Project) -> ModelModules:
    found = ModelsCache(project.root / MODELS).lookup(*_ir(project))
    assert found is not None
    return found


def _poison_models(project: Project, held: ModelModules) -> None:
    """A whole entry for the project's models as they are (under the toolgen that makes keys now): the modules
    `held`, its models module with a line no build writes."""
    cache = ModelsCache(project.root / MODELS)
    poisoned = ModelModules({**held.files, "models.py": held.files["models.py"] + STALE}, held.homes, held.layout)
    cache.keep(*_ir(project), poisoned)
    cache.save()


def _fresh(project: Project, root: Path) -> dict[str, bytes]:
    """What a forced build writes with nothing kept, in a copy of the project at `root`."""
    copy = Project.copy_of(project.root, root)
    shutil.rmtree(copy.root / SCRATCH)
    assert toolgen.build(copy.root, force=True).written
    return copy.snapshot()


@pytest.fixture(scope="module")
def fresh(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The module's project as a build with nothing kept writes it."""
    template = Project.copy_of(built_root, tmp_path_factory.mktemp("built") / "copy")
    return _fresh(template, tmp_path_factory.mktemp("fresh") / "project")


def _unpoisoned(snapshot: dict[str, bytes]) -> bool:
    return not any(STALE.strip().encode() in data for data in snapshot.values())


def test_a_rebuild_reads_what_was_kept_and_writes_the_same_bytes(project: Project, tmp_path: Path) -> None:
    project.write("schemas/trip.yaml", NESTED)
    assert toolgen.build(project.root, force=True).written
    first = project.snapshot()
    kept = {path: (project.root / path).read_bytes() for path in (MODELS, RUNTIME)}
    assert set(_models(project).files) >= {"models.py", "_tool_models/book_trip.py"}
    assert list((project.root / TEMPLATES).iterdir()), "the templates are kept compiled"
    assert toolgen.build(project.root, force=True).written
    assert project.snapshot() == first == _fresh(project, tmp_path / "fresh")
    assert {path: (project.root / path).read_bytes() for path in kept} == kept


def test_a_changed_schema_misses_the_entry(project: Project, tmp_path: Path) -> None:
    before = _key(project)
    _poison_models(project, _models(project))
    project.write("schemas/trip.yaml", NESTED)
    assert _key(project) != before
    assert toolgen.build(project.root).written
    assert project.snapshot() == _fresh(project, tmp_path / "fresh")
    assert _unpoisoned(project.snapshot())
    _models(project)  # the new entry replaced the old one


def test_another_toolgen_misses_the_entries(
    project: Project, fresh: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    real, held = toolgen.project.manifest.generator_fingerprint(), _models(project)
    monkeypatch.setattr(toolgen.project.manifest, "generator_fingerprint", lambda: "another toolgen")
    other = _key(project)
    # What another toolgen would have kept for the same schemas and choices.
    _poison_models(project, held)
    config = load_config(project.root)
    runtime = runtime_files(config.wires, demo=config.demo, features=config.features, scratch=project.root / SCRATCH)
    assert runtime == runtime_files(config.wires, demo=config.demo, features=config.features)
    head, body = (project.root / RUNTIME).read_bytes().split(b"\n", 1)
    body = json.dumps([{**runtime, "_runtime/__init__.py": runtime["_runtime/__init__.py"] + STALE}]).encode()
    check = hashlib.sha256(body).hexdigest()
    (project.root / RUNTIME).write_bytes(json.dumps({**json.loads(head), "check": check}).encode() + b"\n" + body)
    monkeypatch.setattr(toolgen.project.manifest, "generator_fingerprint", lambda: real)
    assert other != _key(project)
    assert toolgen.build(project.root, force=True).written
    assert project.snapshot() == fresh


def _rewritten(head: dict[str, object], body: bytes) -> bytes:
    """An entry with `head` and `body`, its hash made to match."""
    return json.dumps({**head, "check": hashlib.sha256(body).hexdigest()}).encode() + b"\n" + body


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data.replace(b"class ", b"klass ", 1),  # its hash no longer matches
        lambda data: _rewritten(json.loads(data.split(b"\n")[0]), b'[{"models.py": 1}, {}]'),
        lambda data: _rewritten({**json.loads(data.split(b"\n")[0]), "format": 0}, data.split(b"\n", 1)[1]),
        lambda data: b"[1, 2]",
    ],
    ids=["cut-short", "edited", "not-text", "another-format", "not-an-entry"],
)
def test_a_damaged_entry_is_ignored_and_written_anew(
    project: Project, fresh: dict[str, bytes], damage: Callable[[bytes], bytes]
) -> None:
    for kept in (MODELS, RUNTIME):
        path = project.root / kept
        path.write_bytes(damage(path.read_bytes()))
    assert ModelsCache(project.root / MODELS).lookup(*_ir(project)) is None
    assert toolgen.build(project.root, force=True).written
    assert project.snapshot() == fresh
    _models(project)


def test_an_entry_round_trips_and_answers_only_its_key(tmp_path: Path) -> None:
    entry = KeptEntry(tmp_path / "kept.json")
    parts = [{"a.py": "x = 'é'\n", "b.py": ""}, {}]
    entry.keep("one", parts)
    assert not entry.path.exists(), "written only when saved"
    entry.save()
    assert KeptEntry(entry.path).lookup("one") == parts
    assert KeptEntry(entry.path).lookup("two") is None
    entry.path.unlink()
    entry.path.mkdir()  # a folder where the file goes: nothing kept, nothing raised
    entry.keep("one", parts)
    entry.save()
    assert KeptEntry(entry.path).lookup("one") is None and not list(tmp_path.glob("*.partial"))


def test_damaged_compiled_templates_are_compiled_again(project: Project, fresh: dict[str, bytes]) -> None:
    compiled = list((project.root / TEMPLATES).iterdir())
    assert compiled
    for number, path in enumerate(compiled):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // (number + 2)] if number % 2 else b"junk")
    (project.root / TEMPLATES / "another-toolgen-x.cache").write_bytes(b"old")
    assert toolgen.build(project.root, force=True).written
    assert project.snapshot() == fresh
    assert not (project.root / TEMPLATES / "another-toolgen-x.cache").exists(), "another toolgen's files go"


def test_a_failed_build_keeps_the_entry_and_check_only_reads_it(project: Project) -> None:
    kept = (project.root / MODELS).read_bytes()
    project.write("schemas/broken.yaml", "tools:\n  - name: broken\n    inputSchema: {type: 12}\n")
    with pytest.raises(toolgen.InvalidInputError):
        toolgen.build(project.root, force=True)
    assert (project.root / MODELS).read_bytes() == kept
    (project.root / "schemas/broken.yaml").unlink()
    models = project.package_dir / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    cached, full = toolgen.check(project.root), toolgen.check(project.root, full=True)
    assert (cached.changed, cached.diff) == (full.changed, full.diff) and "-# mine" in cached.diff
    assert (project.root / MODELS).read_bytes() == kept
