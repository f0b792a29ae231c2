"""What the service costs its server, and how soon an SSE reader gets a run's event once it is stored.

    python benchmarks/bench_serve_delivery.py            # costs (with callgrind) and 5 rounds of 30 events per
                                                         # delivery case, a few minutes; rewrites the results in
                                                         # README.md
    python benchmarks/bench_serve_delivery.py --quick    # 2 rounds, fewer requests, no callgrind; prints only
    python benchmarks/bench_serve_delivery.py --before HEAD   # the costs of the toolgen of a commit beside them

Costs (serve_costs.py, each a fresh process calling the service's Starlette app in-process through ASGI, beside a
bare Starlette app doing the least the same request needs, interleaved with it): the server CPU of `POST /runs` to
its answer, and of replaying a finished run's events over SSE, per event; for the replay, callgrind's instructions
too (a process with the requests minus one without, PYTHONHASHSEED=0). With `--before REF`, the same for the toolgen
of that commit (its `generator/`, by git archive).

Delivery: each case serves the service's real Starlette app (`service_app`) under uvicorn on a loopback port, in a
thread of this process, and reads one run's `/runs/{id}/events` with an httpx stream in another thread, as a browser
reads it. The writer (the main thread, standing in for a DBOS worker) stores one event at a time with
`RunStore.add_events`, at a random moment 0 to 0.1 s after the reader got the last one (0 to 0.5 s for the
reader that looks every 0.5 s: a whole period of the reader's looks, so that writes land at every phase of a
polling reader's cycle), and the delay is the time from `add_events` returning to the reader having parsed the
event (one monotonic clock, one process). The cases:

- one store, SQLite: the app reads through the store the writer writes through, as in one server process;
  the reader is woken by the in-process notification (which `add_events` sends after its commit, so a reader
  can have the event a little before the writer's call has returned: a delay can be negative);
- another store, SQLite: the app has its own store on the same file, as a second server process would; no
  notification crosses, and the reader finds the event at its fallback look, every 0.5 s;
- another store, Postgres: the same on a throwaway PostgreSQL cluster (initdb under /usr/lib/postgresql/*/bin,
  as the tests make one; the rows are left out without it): the writer's NOTIFY reaches the app's listener;
- one store, Postgres: the in-process notification, and the NOTIFY's echo;
- 0.1 s polling, each database: the reader as it was before wake-ups (read; nothing new: sleep 0.1 s; read), that
  is the same app over a store whose wake-ups never come and whose reader looks every 0.1 s.

Cases run round-robin, each round a fresh run; the table gives the median over rounds of each round's median
delay, the range of those medians, and the 90th percentile over all events. Nothing here is a test, and no
test times anything.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import glob
import os
import platform
import queue
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from readme_markers import replace_between
from serve_costs import extracted, run_child

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))

import httpx  # noqa: E402
import uvicorn  # noqa: E402

from toolgen.runtime import service_app  # noqa: E402
from toolgen.runtime.serve.auth import open_access  # noqa: E402
from toolgen.runtime.serve.store import RunStore, StoredEvent  # noqa: E402
from toolgen.runtime.serve.wakeup import FALLBACK_POLL_SECONDS, Wakeups  # noqa: E402

README = Path(__file__).resolve().parent / "README.md"
START = "<!-- delivery-results:start (written by benchmarks/bench_serve_delivery.py; do not edit by hand) -->"
END = "<!-- delivery-results:end -->"
OLD_POLL_SECONDS = 0.1


class Polling(Wakeups):
    """The reader before wake-ups: never woken, it looks every 0.1 s."""

    @property
    def poll_seconds(self) -> float:
        return OLD_POLL_SECONDS

    def notify(self, run_id: str) -> None:
        pass


@dataclass
class Case:
    label: str
    database: str  # "sqlite" or "postgres"
    reader: str  # "same" store as the writer, "other" store, or "polling" (another store that never wakes)
    # Each write comes a random 0 to `gap` seconds after the reader got the last one: a whole period of the
    # reader's looks, so that writes land at every phase of it.
    gap: float = OLD_POLL_SECONDS
    delays: list[float] = field(default_factory=list)
    medians: list[float] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _bin(name: str) -> str | None:
    return shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))), None)


@contextlib.contextmanager
def postgres() -> Iterator[str | None]:
    """A throwaway PostgreSQL cluster's URL (as tests/runtime/serve/test_serve_postgres.py makes one), or None without one."""
    initdb, pg_ctl, psql = _bin("initdb"), _bin("pg_ctl"), _bin("psql")
    if initdb is None or pg_ctl is None or psql is None:
        yield None
        return
    root = Path(tempfile.mkdtemp(prefix="toolgen-bench-postgres-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()
    subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "toolgen"], check=True, capture_output=True)
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "server.log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        command = [psql, "-h", "127.0.0.1", "-p", str(port), "-U", "toolgen", "-d", "postgres"]
        subprocess.run([*command, "-c", "CREATE DATABASE runs"], check=True, capture_output=True)
        yield f"postgresql://toolgen@127.0.0.1:{port}/runs"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def postgres_version() -> str:
    server = _bin("postgres")
    found = subprocess.run([server or "postgres", "--version"], capture_output=True, text=True, check=False).stdout
    return found.strip().replace("postgres (PostgreSQL)", "PostgreSQL") or "PostgreSQL"


@contextlib.contextmanager
def serving(store: RunStore) -> Iterator[str]:
    """The service's app over `store`, under uvicorn in a thread: its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            service_app(SimpleNamespace(store=store), auth=open_access),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise SystemExit("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def read_stream(url: str, received: queue.Queue[tuple[int, float]]) -> None:
    """Parse the run's SSE stream, putting (id, the moment it was parsed) for each event, until it ends."""
    with httpx.Client(timeout=60) as client, client.stream("GET", url) as answer:
        if answer.status_code != 200:
            raise SystemExit(f"GET {url}: {answer.status_code}")
        event_id = None
        for line in answer.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line == "" and event_id is not None:
                received.put((event_id, time.perf_counter()))
                event_id = None


def one_round(case: Case, writer: RunStore, reader: RunStore, samples: int, rng: random.Random) -> None:
    run_id = f"bench-{case.database}-{case.reader}-{rng.getrandbits(48):x}"
    writer.create_run(run_id, run_id, [{"role": "user", "content": "go"}])
    received: queue.Queue[tuple[int, float]] = queue.Queue()
    delays = []
    with serving(reader) as base:
        thread = threading.Thread(target=read_stream, args=(f"{base}/runs/{run_id}/events", received), daemon=True)
        thread.start()
        writer.add_events(run_id, [StoredEvent(1, "run_started", {"messages": 1}, time.time())])
        received.get(timeout=30)  # the stream is open and the reader has caught up
        for seq in range(2, samples + 2):
            time.sleep(rng.uniform(0, case.gap))
            writer.add_events(run_id, [StoredEvent(seq, "text_delta", {"text": f"part {seq}"}, time.time())])
            stored = time.perf_counter()
            got, at = received.get(timeout=30)
            if got != seq:
                raise SystemExit(f"{case.label}: expected event {seq}, got {got}")
            delays.append(at - stored)
        finished = {"stop_reason": "finished", "steps": 1, "metrics": {}}
        writer.add_events(run_id, [StoredEvent(samples + 2, "run_finished", finished, time.time())])
        thread.join(timeout=30)
    case.delays.extend(delays)
    case.medians.append(statistics.median(delays))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def report(cases: list[Case], rounds: int, samples: int, command: str, note: str) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"Command: `{command}`",
        "",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}",
        f"- {rounds} rounds of {samples} events per case, round-robin; the 1-minute load average at the end: {load:.1f}",
        f"- Delay: from `add_events` returning to the reader having parsed the event; {note}",
        "",
        "| database | reader | events | median delay | round medians | p90 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for case in cases:
        if not case.delays:
            continue
        database, reader = case.label.split(": ", 1)
        lines.append(
            f"| {database} | {reader} | {len(case.delays)} | {_ms(statistics.median(case.medians))} | "
            f"{_ms(min(case.medians))} - {_ms(max(case.medians))} | {_ms(_p90(case.delays))} |"
        )
    return "\n".join(lines) + "\n"


REPLAY_EVENTS = 1000


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.2f} µs" if seconds < 1e-3 else f"{seconds * 1000:,.2f} ms"


def costs(rounds: int, requests: int, callgrind: bool, generator: str | None) -> dict[str, float]:
    """The medians over `rounds` processes of each: POST's CPU to its answer, the replay's CPU per event (ours and
    the floor's), and with callgrind the replay's instructions per event."""
    post: dict[str, list[float]] = {"ours": [], "floor": []}
    replay: dict[str, list[float]] = {"ours": [], "floor": []}
    events = 0
    for _ in range(rounds):
        found, _ = run_child(["post", "--requests", str(requests)], generator)
        for side in post:
            post[side].extend(found[side])
        found, _ = run_child(["replay", "--events", str(REPLAY_EVENTS), "--requests", str(requests)], generator)
        events = found["events"]
        for side in replay:
            replay[side].extend(value / events for value in found[side])
    result = {
        "post": statistics.median(post["ours"]),
        "post_floor": statistics.median(post["floor"]),
        "replay": statistics.median(replay["ours"]),
        "replay_floor": statistics.median(replay["floor"]),
        "events": float(events),
    }
    if callgrind:
        for side in ("ours", "floor"):
            counted = []
            for count in (5, 0):
                arguments = ["replay", "--events", str(REPLAY_EVENTS), "--requests", str(count), "--side", side]
                counted.append(run_child(arguments, generator, callgrind=True)[1])
            # Each side's requests come after two untimed ones: 5 + 2 against 2.
            result["replay_ir" if side == "ours" else "replay_floor_ir"] = (counted[0] - counted[1]) / 5 / events
    return result


def cost_report(found: dict[str, float], before: dict[str, float] | None, ref: str | None, requests: int) -> list[str]:
    lines = [
        f"Server costs: the service's app called in-process through ASGI, {requests} requests a process, "
        f"medians; the replay is of a finished run of {found['events']:.0f} events (its model's answer of "
        f"{REPLAY_EVENTS:,} words), its floor a StreamingResponse of the same bytes, one chunk per event, from memory"
        + (f"; before: the toolgen of `{ref}`" if before else ""),
        "",
        "| path | toolgen | floor | x floor |" + (" before | before x floor |" if before else ""),
        "| --- | ---: | ---: | ---: |" + (" ---: | ---: |" if before else ""),
    ]
    rows = [
        ("`POST /runs`, CPU to the answer", "post", "post_floor", _us),
        ("SSE replay, CPU per event", "replay", "replay_floor", _us),
        ("SSE replay, instructions per event", "replay_ir", "replay_floor_ir", lambda n: f"{n:,.0f}"),
    ]
    for label, key, floor, shown in rows:
        if key not in found:
            continue
        line = f"| {label} | {shown(found[key])} | {shown(found[floor])} | {found[key] / found[floor]:.2f}x |"
        if before:
            if key in before:
                line += f" {shown(before[key])} | {before[key] / before[floor]:.2f}x |"
            else:
                line += " | |"
        lines.append(line)
    return lines


def write_readme(section: str) -> None:
    replace_between(README, START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 10 events; prints only")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--samples", type=int, default=None, help="events per case and round")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--before", metavar="REF", help="also measure the costs of the toolgen of this commit")
    parser.add_argument("--no-callgrind", action="store_true", help="costs in CPU time only")
    options = parser.parse_args()
    rounds = options.rounds or (2 if options.quick else 5)
    samples = options.samples or (10 if options.quick else 30)
    requests = 10 if options.quick else 30
    callgrind = not (options.quick or options.no_callgrind)
    found = costs(rounds, requests, callgrind, None)
    before = None
    if options.before:
        with extracted(options.before) as generator:
            before = costs(rounds, requests, callgrind, generator)
    print("costs measured", file=sys.stderr)
    rng = random.Random(20261203)
    cases = [
        Case("SQLite: one store (the server's own writes), woken", "sqlite", "same"),
        Case(
            f"SQLite: another store (a second server), looks every {FALLBACK_POLL_SECONDS} s",
            "sqlite",
            "other",
            FALLBACK_POLL_SECONDS,
        ),
        Case("SQLite: polling every 0.1 s (before)", "sqlite", "polling"),
        Case("Postgres: another store (a second server), woken by NOTIFY", "postgres", "other"),
        Case("Postgres: one store (the server's own writes), woken", "postgres", "same"),
        Case("Postgres: polling every 0.1 s (before)", "postgres", "polling"),
    ]
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-delivery-") as folder, postgres() as postgres_url:
        urls = {"sqlite": f"sqlite:///{Path(folder) / 'runs.sqlite'}", "postgres": postgres_url}
        stores: dict[tuple[str, str], RunStore] = {}
        try:
            for database, url in urls.items():
                if url is None:
                    continue
                writer = RunStore(url)
                other, polling = RunStore(url), RunStore(url)
                polling.wakeups.close()
                polling.wakeups = Polling()
                stores.update({(database, "same"): writer, (database, "other"): other, (database, "polling"): polling})
                if database == "postgres":
                    # The listener connects when its first reader watches; its connection is not what is timed.
                    with other.wakeups.watch("warm-up"):
                        deadline = time.monotonic() + 30
                        while not other.wakeups.listening and time.monotonic() < deadline:
                            time.sleep(0.01)
            for number in range(rounds):
                for case in cases:
                    if (case.database, case.reader) in stores:
                        writer = stores[(case.database, "same")]
                        one_round(case, writer, stores[(case.database, case.reader)], samples, rng)
                print(f"round {number + 1}/{rounds} done", file=sys.stderr)
        finally:
            for store in stores.values():
                store.close()
    command = (
        "python benchmarks/bench_serve_delivery.py"
        + (" --quick" if options.quick else "")
        + (f" --before {options.before}" if options.before else "")
    )
    note = (
        f"{postgres_version()} (a throwaway cluster, fsync off)"
        if postgres_url
        else "no PostgreSQL here: no rows for it"
    )
    section = report(cases, rounds, samples, command, note)
    section = "\n".join(cost_report(found, before, options.before, requests)) + "\n\n" + section
    print(section)
    if not (options.quick or options.no_readme):
        write_readme(section)


if __name__ == "__main__":
    main()
