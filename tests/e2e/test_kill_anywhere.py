"""SIGKILL at 50 seeded random moments of the write of a 1,000-tool build: the package is always the old one or the
new one, byte for byte, once the next build's automatic recovery has run, and nothing else is under `output`.

The two versions are rendered once, in this process; each killed process is the write half of `toolgen build`
(recovery, staging, the import-and-validate check, the commit, the per-file apply: building.commit_build) with
one version's rendered files, started in a process group of its own and killed with it, SIGKILL. A few kills
come at a random moment of the whole write, measured from the start; most come at a random moment of the commit
and apply, measured from when the writer reports it has staged (its step hook prints, nothing else changes), as
that is where a kill could leave a package half written; the spans come from one measured run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolgen.output.build_stages import render_all
from toolgen.output.building import build_lock, recover_package
from toolgen.project.config import Config, load_config

pytestmark = pytest.mark.slow

TOOLS = 1_000
KILLS = 50
SPREAD = 10  # of the kills, how many fall anywhere in the write; the others fall in the commit and apply
SEED = 19

WRITER = """\
import json, sys, time
from pathlib import Path
import toolgen.output.write as write
from toolgen.output.beside import plan_beside
from toolgen.output.building import build_lock, commit_build, environment_errors, recover_package
from toolgen.project.config import load_config
from toolgen.project.manifest import MANIFEST_NAME
root, rendered, timed = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text(encoding="utf-8")), sys.argv[3]
if timed == "timed":
    write._reached = lambda step: print(time.monotonic(), step, flush=True)
config = load_config(root)
manifest = rendered.pop(MANIFEST_NAME)
with environment_errors(root), build_lock(root):
    recover_package(config, config.package_dir)
    commit_build(config, rendered, manifest, None, plan_beside(config, {}))
print(time.monotonic(), "done", flush=True)
"""


def _tools(version: int) -> dict[str, object]:
    """The schemas of one version: the second changes every description, drops a tool and adds one."""
    tools = []
    for index in range(TOOLS):
        if version == 2 and index == 0:
            continue
        tools.append(
            {
                "name": f"tool_{index:04d}",
                "description": f"Tool number {index}, version {version}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "mode": {"type": "string", "enum": ["fast", "slow"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["query"],
                },
            }
        )
    if version == 2:
        tools.append({"name": "tool_new", "description": "Added.", "inputSchema": {"type": "object"}})
    return {"tools": tools}


def _hashes(package_dir: Path) -> dict[str, str]:
    return {
        p.relative_to(package_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(package_dir.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def _write(root: Path, rendered: Path, timed: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(rendered), "timed" if timed else "quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill takes the import check's interpreter too
    )


def _recovered(config: Config) -> None:
    """What the next `toolgen build` does first: take the lock and finish or clear what a kill left."""
    with build_lock(config.root):
        recover_package(config, config.package_dir)


def test_sigkill_at_50_random_moments_leaves_the_old_or_the_new_package(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "schemas").mkdir(parents=True)
    (root / "toolgen.yaml").write_text(
        "version: v1\npackage: big_sdk\noutput: generated\ninputs:\n  - schemas/*.json\n", encoding="utf-8"
    )
    config = load_config(root)
    rendered: dict[int, Path] = {}
    for version in (1, 2):
        (root / "schemas" / "tools.json").write_text(json.dumps(_tools(version)), encoding="utf-8")
        files = render_all(config).package
        rendered[version] = tmp_path / f"rendered-{version}.json"
        rendered[version].write_text(json.dumps(files), encoding="utf-8")

    expected: dict[int, dict[str, str]] = {}
    for version in (1, 2):  # unkilled writes: each version's package, and the measured moments of the second
        started = time.monotonic()
        writer = _write(root, rendered[version], timed=True)
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        expected[version] = _hashes(config.package_dir)
        moments = {line.split(" ", 1)[1]: float(line.split()[0]) - started for line in out.splitlines()}
    assert expected[1] != expected[2]
    commit, done = moments["staged"], moments["done"]

    chance = random.Random(SEED)
    kills = [(False, chance.uniform(0, done)) for _ in range(SPREAD)]
    kills += [(True, chance.uniform(0, done - commit + 0.02)) for _ in range(KILLS - SPREAD)]
    chance.shuffle(kills)
    current = 2
    outcomes = []
    for after_staging, delay in kills:
        other = 1 if current == 2 else 2
        writer = _write(root, rendered[other], timed=after_staging)
        if after_staging:
            assert writer.stdout is not None
            for line in writer.stdout:
                if line.endswith(" staged\n"):
                    break
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(writer.pid, signal.SIGKILL)
        writer.communicate()
        where = f"killed {delay:.3f} s after {'staging' if after_staging else 'the start'}"
        _recovered(config)
        assert [p.name for p in config.output_dir.iterdir()] == [config.package], where
        found = _hashes(config.package_dir)
        assert found in (expected[current], expected[other]), f"{where}: neither the old nor the new package"
        outcomes.append("new" if found == expected[other] else "old")
        current = other if found == expected[other] else current
    assert len(outcomes) == KILLS
    print(f"{outcomes.count('old')} kills left the old package, {outcomes.count('new')} the new one")
