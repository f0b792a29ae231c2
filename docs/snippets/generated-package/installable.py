"""package_layout: installable: build also writes <output>/pyproject.toml, so `pip install -e generated/` works."""

import tempfile
from pathlib import Path

import toolgen

with tempfile.TemporaryDirectory() as folder:
    toolgen.init_project(folder)
    config = Path(folder, "toolgen.yaml")
    # --8<-- [start:config]
    config.write_text(config.read_text() + "package_layout: installable\npackage_version: 0.1.0\n")
    # --8<-- [end:config]
    toolgen.build(folder)
    pyproject = Path(folder, "generated", "pyproject.toml").read_text()
    print(pyproject, end="")
    assert 'name = "toolgen-sdk"' in pyproject and toolgen.check(folder).ok
