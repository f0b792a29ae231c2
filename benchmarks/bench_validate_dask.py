"""`toolgen validate` on one machine vs on a Dask cluster: records per second, the fixed cost of a cluster run, and
the peak memory of the client (which hosts a local cluster's scheduler) and of each worker on a large file.

    python benchmarks/bench_validate_dask.py                 # 64 MB for speed, 1 GB for memory; ~10 min on 2 idle cores
    python benchmarks/bench_validate_dask.py --quick         # 16 MB, no memory run: a smoke test, ~1 min
    python benchmarks/bench_validate_dask.py --readme        # also rewrite the Results section of benchmarks/README.md

Every run is the `toolgen validate` command as a user types it, in a fresh process, on a generated JSON Lines log
of conversations (`--as messages`) with planted errors; its process tree is sampled every 0.1 s for memory.
Needs `pip install '.[dask]'` (psutil comes with distributed). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
README = REPO / "benchmarks" / "README.md"
START, END = "<!-- dask-results:start", "<!-- dask-results:end -->"
SCHEMA = """\
tools:
  - name: get_current_weather
    description: Get the current weather in a given location.
    inputSchema:
      type: object
      properties:
        location: {type: string}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [location]
"""
CALL = '{"id": "c%d", "type": "function", "function": {"name": "get_current_weather", "arguments": "%s"}}'


def conversation(number: int) -> str:
    """A user question, the call, its result and the answer; every 20th call has bad arguments."""
    arguments = '{\\"location\\": 5}' if number % 20 == 0 else f'{{\\"location\\": \\"City {number}\\"}}'
    return (
        f'[{{"role": "user", "content": "Weather in city {number}?"}}, '
        f'{{"role": "assistant", "content": null, "tool_calls": [{CALL % (number, arguments)}]}}, '
        f'{{"role": "tool", "tool_call_id": "c{number}", "content": "21 C"}}, '
        f'{{"role": "assistant", "content": "It is 21 degrees in city {number}."}}]'
    )


def long_conversation(number: int) -> str:
    """A conversation whose answer is 4 KB of text, as long answers are: fewer records a gigabyte, quicker to check."""
    text = f"It is 21 degrees in city {number}. " * 120
    return conversation(number).replace(f"It is 21 degrees in city {number}.", text.strip())


def write_log(path: Path, size: int, make: Callable[[int], str] = conversation) -> int:
    """About `size` bytes of conversations, one a line; returns the number of records."""
    chunk = "\n".join(make(n) for n in range(1, 1001)) + "\n"
    data = chunk.encode()
    count = 0
    with path.open("wb") as handle:
        while count * len(data) < size:
            handle.write(data)
            count += 1
    return count * 1000


@dataclass
class Run:
    """One command: its wall time, exit code, records counted, and the peak RSS seen per process role."""

    label: str
    seconds: float
    code: int
    records: int
    client_peak: int = 0
    worker_peaks: list[int] = field(default_factory=list)


def run(label: str, root: Path, args: list[str]) -> Run:
    """`toolgen validate ARGS` in `root`, its process tree's memory sampled while it runs."""
    command = [sys.executable, "-m", "toolgen", "validate", *args]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, int] = {}
    stop = threading.Event()

    def sample() -> None:
        main = psutil.Process(process.pid)
        while not stop.is_set():
            try:
                for proc in [main, *main.children(recursive=True)]:
                    peaks[proc.pid] = max(peaks.get(proc.pid, 0), proc.memory_info().rss)
            except psutil.Error:
                pass
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    found = re.search(r"toolgen: ([\d,]+) record\(s\)", stderr)
    if found is None:
        raise SystemExit(f"{label}: no summary line (exit {process.returncode}):\n{stderr}")
    records = int(found.group(1).replace(",", ""))
    client = peaks.pop(process.pid, 0)
    # A worker is a process that is not the client; a local cluster's nannies are small and counted as workers too,
    # so the largest of them are the workers that did the checking.
    return Run(label, seconds, process.returncode, records, client, sorted(peaks.values(), reverse=True))


def mib(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="16 MB for speed, no 1 GB memory run")
    parser.add_argument("--size-mb", type=int, help="size of the speed run's log (default 64, quick 16)")
    parser.add_argument("--memory-gb", type=float, default=1.0, help="size of the memory run's log (default 1)")
    parser.add_argument("--readme", action="store_true", help="rewrite the Results section of benchmarks/README.md")
    options = parser.parse_args()
    size = (options.size_mb or (16 if options.quick else 64)) << 20
    load = []
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as folder:
        root = Path(folder)
        (root / "schemas").mkdir()
        (root / "schemas" / "weather.yaml").write_text(SCHEMA, encoding="utf-8")
        (root / "toolgen.yaml").write_text(
            "version: v1\npackage: bench_sdk\noutput: generated\ninputs: [schemas/*.yaml]\n"
        )
        subprocess.run([sys.executable, "-m", "toolgen", "build"], cwd=root, check=True, capture_output=True)
        records = write_log(root / "speed.jsonl", size)
        (root / "one.jsonl").write_text(conversation(1) + "\n")
        print(f"speed log: {size >> 20} MB, {records:,} records", file=sys.stderr)
        cases = [
            ("local, all cores (2 processes)", ["speed.jsonl"]),
            ("local, one process (`--workers 1`)", ["--workers", "1", "speed.jsonl"]),
            ("`--dask local:2` (2 workers)", ["--dask", "local:2", "speed.jsonl"]),
            ("`--dask local:1` (one worker)", ["--dask", "local:1", "speed.jsonl"]),
        ]
        runs = []
        for label, args in cases:
            runs.append(run(label, root, [*args, "--as", "messages"]))
            load.append(os.getloadavg()[0])
            print(f"{label}: {runs[-1].seconds:.1f} s", file=sys.stderr)
        fixed = [run("fixed", root, ["--dask", "local:2", "one.jsonl", "--as", "messages"]) for _ in range(3)]
        fixed_local = [run("fixed local", root, ["one.jsonl", "--as", "messages"]) for _ in range(3)]
        memory = None
        if not options.quick:
            (root / "speed.jsonl").unlink()
            big = write_log(root / "big.jsonl", int(options.memory_gb * 2**30), long_conversation)
            print(f"memory log: {options.memory_gb} GB, {big:,} records", file=sys.stderr)
            memory = run("memory", root, ["--dask", "local:2", "big.jsonl", "--as", "messages"])
            load.append(os.getloadavg()[0])
    text = report(size, records, runs, fixed, fixed_local, memory, options, load)
    print(text)
    if options.readme:
        before, rest = README.read_text(encoding="utf-8").split(START, 1)
        after = rest.split(END, 1)[1]
        README.write_text(f"{before}{START} (written by benchmarks/bench_validate_dask.py) -->\n{text}\n{END}{after}")


def report(
    size: int,
    records: int,
    runs: list[Run],
    fixed: list[Run],
    fixed_local: list[Run],
    memory: Run | None,
    options: argparse.Namespace,
    load: list[float],
) -> str:
    import dask
    import distributed

    from toolgen.payloads.validation.cluster import BLOCK_BYTES

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    start = min(r.seconds for r in fixed)
    start_local = min(r.seconds for r in fixed_local)
    lines = [
        f"Command: `python benchmarks/bench_validate_dask.py{' --quick' if options.quick else ''}`",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; toolgen at commit {commit.strip()}",
        f"- Machine: {platform.system()} {platform.machine()}, nproc {os.cpu_count()}; Python {platform.python_version()}; "
        f"dask {dask.__version__}, distributed {distributed.__version__}",
        f"- 1-minute load average after each run: {', '.join(f'{x:.1f}' for x in load)} "
        f"(other work on the machine slows every row alike only roughly: compare rows of one run)",
        f"- Speed log: {size >> 20} MB of JSON Lines, {records:,} conversations (4 messages, 1 tool call each; 5% bad "
        f"arguments), `--as messages`; blocks of {BLOCK_BYTES >> 20} MiB on the cluster",
        "",
        "| how | wall time | records/s | exit |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {r.label} | {r.seconds:.1f} s | {r.records / r.seconds:,.0f} | {r.code} |" for r in runs]
    lines += [
        "",
        f"Fixed cost of a cluster run (`--dask local:2` on a one-record file, best of 3): {start:.1f} s, against "
        f"{start_local:.1f} s for the same file without `--dask`: {start - start_local:.1f} s to start a local "
        "cluster of 2 worker processes, send the generated package and import it on each worker, and shut down. "
        "Against a running scheduler only the sending and importing remain. Past that, the cost of scheduling is "
        f"one task per {BLOCK_BYTES >> 20} MiB block (milliseconds each) plus shipping each block's findings back.",
    ]
    if memory is not None:
        workers = ", ".join(mib(p) for p in memory.worker_peaks[:2])
        lines += [
            "",
            f"Memory, `--dask local:2` on a {options.memory_gb:g} GB log ({memory.records:,} records, the same "
            "conversations with a 4 KB answer each, "
            f"{memory.seconds:.0f} s, {memory.records / memory.seconds:,.0f} records/s): peak RSS of the client "
            f"process, which also hosts the local cluster's scheduler, {mib(memory.client_peak)}; of the two "
            f"workers {workers}; of the nannies {', '.join(mib(p) for p in memory.worker_peaks[2:]) or '-'}.",
            f"On the {size >> 20} MB log the same command peaked at {mib(runs[2].client_peak)} (client) and "
            f"{', '.join(mib(p) for p in runs[2].worker_peaks[:2])} (workers): memory follows the block size and "
            "the window of blocks in flight, not the file's size.",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
