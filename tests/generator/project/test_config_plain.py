"""toolgen.yaml read without a YAML parser: exactly what PyYAML reads, or nothing.

A fresh checkout has no kept config, so a quick verb reads the text itself when it is in the plain subset of
YAML configs are written in (config_cache.read_plain). Wherever that read gives an answer, it must be PyYAML's:
the same data, of the same types, at the same line:col (positions are among the settings the manifest records).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.projects import REPO_ROOT

from toolgen.core.positions import KEY, yaml_positions
from toolgen.project.config import load_config
from toolgen.project.config_cache import plain_config, read_plain
from toolgen.source.load import LoadError, parse_text

CONFIGS = sorted(
    path for path in REPO_ROOT.glob("**/toolgen.yaml") if not any(part.startswith(".") for part in path.parts)
)
TEXTS = [
    "version: v1\npackage: bench_sdk\noutput: generated\ninputs: [tools.json]\nnormalize: [types]\n",
    "inputs:\n- a.yaml\n- 'b c.yaml'  # a comment\npackage: x\n",
    "inputs:\n    - a.yaml\n    -   b.yaml\nexport:\n  strict: true\n  gemini_schema: openapi\n",
    "lint:\n  providers: [openai, anthropic]\nmcp:\n  lock: mcp-lock.json\n  on_drift: warn\n",
    "a:\n  b:\n    - x\n    - y\n  c: z\n",
    "a:\n b: c\n d: e\n",
    "a: b\r\nc: [d]\r\n",
    "a: b\n\n# comment\n   # indented comment\nc: d\n",
    "package: 'it''s'\n",
    'package: "dq"\n',
    "package: [ a , 'b,c' ]  # x\n",
    "package: []\n",
    "a: x:y\n",
    "a: 2024-01-01\n",
    "a: 1.0.0\n",
    "a: yes\n",
    "a: True\n",
    # Outside the subset: PyYAML reads these (or refuses them).
    "package: a#b\n",
    "package: 1.0\n",
    "package: null\n",
    "package:\n",
    "package: [a, b, ]\n",
    "package: a\n  b\n",
    "a: b\rc: d\n",
    "a: b\n---\n",
    "a: &x b\nc: *x\n",
    "a: !!str b\n",
    "a: |\n  x\n",
    "a: b\na: c\n",
    "\ufeffa: b\n",
    "a:\n  - x\n  -\n",
    "a:\n- x\n - y\n",
    "a: x: y\n",
    "a: 'x'y\n",
    " a: b\n",
    "a: b\n c: d\n",
    "a:\n  b: c\n d: e\n",
    'a: "x\\ny"\n',
    "a: [x, [y]]\n",
    "a: {x: y}\n",
    "a: 'a\n  b'\n",
    "a: 0x1F\n",
    "a: ~\n",
    "a:\n  - x: y\n",
    "a: x\tb\n",
    "%YAML 1.2\n---\na: b\n",
    '"a": b\n',
    "? a\n: b\n",
    "true: x\n",
    "null: x\n",
]


def _same_as_pyyaml(text: str) -> bool:
    """Whether the plain read of `text` is PyYAML's (True), or there is none (False); fails on a difference."""
    plain = read_plain(text, "toolgen.yaml")
    if plain is None:
        return False
    try:
        document = parse_text(text, Path("toolgen.yaml"), "toolgen.yaml")
    except LoadError as error:
        pytest.fail(f"read {text!r} as {plain.data!r}, which PyYAML refuses: {error}")
    _same_values(document.data, plain.data, text)
    positions = {pointer: at for pointer, at in yaml_positions(document.node).items() if KEY not in pointer}
    assert plain.positions == positions, text
    return True


def _same_values(theirs: Any, ours: Any, text: str) -> None:
    assert type(ours) is type(theirs) and ours == theirs, (text, theirs, ours)
    if isinstance(theirs, dict):
        for key, value in theirs.items():
            _same_values(value, ours[key], text)
    elif isinstance(theirs, list):
        for value, mine in zip(theirs, ours, strict=True):
            _same_values(value, mine, text)


def test_the_projects_configs_are_read_as_pyyaml_reads_them() -> None:
    assert CONFIGS, "the repository holds toolgen.yaml files"
    read = [path for path in CONFIGS if _same_as_pyyaml(path.read_text(encoding="utf-8"))]
    assert REPO_ROOT / "toolgen.yaml" in read
    assert len(read) >= len(CONFIGS) // 2, "most configs are in the plain subset"


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_is_read_as_pyyaml_reads_it_or_left_to_it(text: str) -> None:
    _same_as_pyyaml(text)


# Characters that matter to YAML's reading of a scalar, and a few that do not.
_PIECES = st.sampled_from(list("ab1._/-:#'\"[]{},&*!|>?%@` \t~") + ["\r\n", "\n", "é", "true", "null", "0x1", ".5"])
_VALUES = st.lists(_PIECES, max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, form=st.sampled_from(["k: {}\n", "k: [{}]\n", "k:\n  - {}\n", "k:\n- {}\nj: x\n", "k:\n  {}\n"]))
def test_odd_scalars_are_read_as_pyyaml_reads_them_or_left_to_it(value: str, form: str) -> None:
    _same_as_pyyaml(form.format(value))


def test_the_settings_of_a_plain_text_are_those_of_the_full_read(tmp_path: Path) -> None:
    for path in CONFIGS:
        root = tmp_path / "projects" / path.parent.relative_to(REPO_ROOT)
        root.mkdir(parents=True, exist_ok=True)
        (root / "toolgen.yaml").write_bytes(path.read_bytes())
        if read_plain(path.read_text(encoding="utf-8"), "toolgen.yaml") is None:
            continue
        assert plain_config(root, None) == load_config(root, None, check_shape=False), path
