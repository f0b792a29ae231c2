"""The format stage's cache: a file ruff formatted before comes from the cache, and what comes out is byte for
byte what ruff makes of the files, cached or not, whichever files changed; a failed build leaves it as it was."""

from __future__ import annotations

import json
from pathlib import Path

from support.projects import Project

import toolgen
from toolgen.codegen.format import FormatCache, format_python

PACKAGE = "sdk"
FILES = {
    "models.py": "from pydantic import BaseModel\nclass A( BaseModel ):\n    x:int\n",
    "_tool_models/__init__.py": '"""Tools."""\n',
    "_tool_models/one.py": "from sdk.models import A\nimport os\nclass One(A) :\n    y : str='a'\n",
    # `models` is first-party only because models.py is there: with it, isort puts it in a section of its own.
    "helpers.py": "import pydantic\nimport models\nimport os\nprint(os, models, pydantic)\n",
    "toolgen-manifest.json": '{"not": "python"}\n',
    "_runtime/kept.py": "x=1\n",
}


def _formatted(files: dict[str, str], cache: FormatCache) -> dict[str, str]:
    """format_python with `cache`, saved afterwards as a build that commits saves it."""
    formatted = format_python(files, PACKAGE, cache)
    cache.save()
    return formatted


def test_cached_output_is_what_ruff_makes_of_each_file(tmp_path: Path) -> None:
    cache = FormatCache(tmp_path / "formatted.json")
    plain = format_python(FILES, PACKAGE)
    assert plain["helpers.py"] == "import os\n\nimport pydantic\n\nimport models\n\nprint(os, models, pydantic)\n"
    assert plain["_runtime/kept.py"] == "x=1\n" and plain["toolgen-manifest.json"] == FILES["toolgen-manifest.json"]
    format_python(FILES, PACKAGE, cache)
    assert not cache.path.exists(), "written only when saved"
    assert _formatted(FILES, cache) == plain
    assert len(json.loads(cache.path.read_text(encoding="utf-8"))) == 4, "one entry per file ruff formats"
    assert _formatted(FILES, cache) == plain, "every file from the cache"

    changed = {**FILES, "helpers.py": FILES["helpers.py"] + "import json\nprint(json)\n"}
    del changed["_tool_models/one.py"]
    # Only helpers.py goes through ruff now; models.py is not among its files, yet `models` stays first-party.
    assert _formatted(changed, cache) == format_python(changed, PACKAGE)
    assert len(json.loads(cache.path.read_text(encoding="utf-8"))) == 3, "entries of files gone are dropped"


def test_a_cache_that_cannot_be_read_is_ignored_and_written_anew(tmp_path: Path) -> None:
    cache = FormatCache(tmp_path / "formatted.json")
    plain = format_python(FILES, PACKAGE)
    for junk in ("not json", "[1, 2]", json.dumps(dict.fromkeys(["a", "b"], 3))):
        cache.path.write_text(junk, encoding="utf-8")
        assert _formatted(FILES, cache) == plain
        assert all(isinstance(text, str) for text in json.loads(cache.path.read_text(encoding="utf-8")).values())


def test_a_cache_where_a_folder_stands_only_formats_every_file(tmp_path: Path) -> None:
    cache = FormatCache(tmp_path / "formatted.json")
    cache.path.mkdir()
    assert _formatted(FILES, cache) == format_python(FILES, PACKAGE)
    assert cache.path.is_dir() and not list(tmp_path.glob("*.partial"))


def test_a_build_keeps_the_cache_and_check_reads_it_without_writing(project: Project) -> None:
    cache = project.root / ".toolgen-cache" / "formatted.json"
    cache.unlink(missing_ok=True)
    assert toolgen.build(project.root, force=True).written
    kept = cache.read_bytes()
    assert len(json.loads(kept)) == sum(
        name.endswith(".py") and not name.startswith("_runtime/") for name in toolgen.build(project.root).files
    )
    # A hand edit: the manifest no longer answers, so check renders, formatting from the cache.
    models = project.package_dir / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    cached, full = toolgen.check(project.root), toolgen.check(project.root, full=True)
    assert (cached.changed, cached.diff) == (full.changed, full.diff)
    assert cached.changed == ("generated/sdk/models.py",) and "-# mine" in cached.diff
    assert cache.read_bytes() == kept
    cache.unlink()
    assert toolgen.check(project.root).changed == cached.changed
    assert not cache.exists(), "check writes nothing"
