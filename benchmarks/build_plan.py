"""The build benchmark's plans (sizes, repetitions), its timer, and the results and load averages a run collects."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SLOW = 1000  # project size from which every case gets plan.reps_slow repetitions


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    reps_fast: int  # cases well under a second
    reps_slow: int  # cases of several seconds (1,000-tool builds, generate() over 1,000 schemas)
    reps_cli: int  # subprocess cases
    sample: int  # schemas timed per rep for the extrapolated datamodel-codegen CLI rows
    noop_size: int
    scaling: tuple[int, ...]  # project sizes whose builds are split into generate(), the rewrites and the rest
    long_names: int  # property names of the one wide tool of the long-names case
    floor_sizes: tuple[int, ...]  # project sizes whose builds are measured beside their floor (build_floor.py)
    callgrind_sizes: tuple[int, ...]  # of those, the sizes whose instructions callgrind counts


FULL = Plan(
    sizes=(1, 100, 1000),
    reps_fast=7,
    reps_slow=3,
    reps_cli=5,
    sample=10,
    noop_size=1000,
    scaling=(1000, 3000),
    long_names=1200,
    floor_sizes=(1, 100, 1000, 3000),
    callgrind_sizes=(1, 100),
)
QUICK = Plan(
    sizes=(1, 10, 50),
    reps_fast=2,
    reps_slow=1,
    reps_cli=1,
    sample=3,
    noop_size=50,
    scaling=(10, 50),
    long_names=120,
    floor_sizes=(1, 10, 50),
    callgrind_sizes=(1,),
)


def load() -> float:
    """The 1-minute load average, sampled after each measurement for the report."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


@dataclass
class Row:
    key: str
    case: str
    tools: int
    times: list[float]
    note: str = ""
    extrapolated: bool = False

    @property
    def median(self) -> float:
        return statistics.median(self.times)


@dataclass
class Results:
    source: str
    loads: list[float]  # the run's load samples: one list, which the floor measured before these rows adds to too
    rows: list[Row] = field(default_factory=list)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        self.loads.append(load())
        spread = f"{min(row.times):.3f}-{max(row.times):.3f}" if len(row.times) > 1 else "-"
        print(
            f"  {row.case:<58} n={row.tools:<5} reps={len(row.times):<2} median {row.median:9.3f} s  [{spread}]",
            flush=True,
        )
        return row

    def get(self, key: str) -> Row | None:
        return next((r for r in self.rows if r.key == key), None)


def timed(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start
