"""`toolgen validate --dask`: the same findings, order, tally and exit codes as local validation, on a real
dask.distributed LocalCluster (processes, 2 workers of 1 thread, on 127.0.0.1) shared by the module."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dask.config
import fsspec
import pytest
from click.testing import CliRunner, Result
from distributed import Client, LocalCluster
from support.projects import Project

import toolgen
from toolgen.cli.main import main
from toolgen.core.diagnostics import Diagnostic
from toolgen.payloads.validation.cluster import ClusterAddress, parse_address, validate_on_dask
from toolgen.payloads.validation.local import Tally
from toolgen.payloads.validation.summary import Summary

# Quick enough for the main suite (one cluster for the module); `-m "not dask"` leaves them out.
pytestmark = pytest.mark.dask

CALL = '{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": "%s"}}'
# One conversation a line: planted errors in some, a call without its result in others.
GOOD = '[{"role": "user", "content": "Paris?"}, {"role": "assistant", "content": null, "tool_calls": [%s]}, {"role": "tool", "tool_call_id": "c%d", "content": "21 C"}]'
UNANSWERED = '[{"role": "assistant", "content": null, "tool_calls": [%s]}]'
BROKEN = '[{"role": "wizard", "content": "x"}]'


def conversation(number: int) -> str:
    """Line `number` of the planted log: mostly valid, every 7th with bad arguments, every 11th broken JSON..."""
    if number % 11 == 5:
        return '[{"role": "user", "content": '  # not JSON: unreadable
    if number % 13 == 3:
        return BROKEN
    if number % 17 == 8:
        return UNANSWERED % (CALL % (f"c{number}", "nope", "{}"))
    arguments = '{\\"location\\": 5}' if number % 7 == 2 else '{\\"location\\": \\"Oslo\\"}'
    return GOOD % (CALL % (f"c{number}", "get_current_weather", arguments), number)


def planted(lines: int) -> str:
    return "\n".join("" if n % 19 == 0 else conversation(n) for n in range(1, lines + 1)) + "\n"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as local,
        Client(local) as client,
    ):
        yield client


def local_run(project: Project, paths: list[str], summary: Summary | None = None) -> tuple[list[Diagnostic], Tally]:
    tally = Tally()
    paths = [str(project.root / path) for path in paths]
    if summary is None:
        found = list(toolgen.validate(paths, kind="messages", root=project.root, tally=tally))
    else:
        from toolgen.payloads.validation.report import validate_with_summary

        found = list(validate_with_summary(paths, kind="messages", root=project.root, tally=tally, summary=summary))
    return found, tally


def dask_run(
    client: Client, project: Project, paths: list[str], block_bytes: int = 4096, summary: Summary | None = None
) -> tuple[list[Diagnostic], Tally]:
    tally = Tally()
    findings = validate_on_dask(
        [path if "://" in path else str(project.root / path) for path in paths],
        kind="messages",
        address=client.scheduler.address,
        root=project.root,
        tally=tally,
        summary=summary,
        block_bytes=block_bytes,
    )
    return list(findings), tally


def test_the_cluster_finds_what_local_validation_finds_in_the_same_order(
    client_project: tuple[Client, Project],
) -> None:
    client, project = client_project
    project.write("logs/a.jsonl", planted(900))
    project.write("logs/b.jsonl", planted(40).replace("\n", "\r\n"))  # CRLF, and a second file after the first
    project.write("logs/c.json", '[\n  {"role": "user",\n   "content": 7}\n]\n')
    paths = ["logs"]
    local, local_tally = local_run(project, paths)
    local_summary, remote_summary = Summary(), Summary()
    assert local_run(project, paths, local_summary) == (local, local_tally)
    # Blocks of 3,000 bytes: a line often spans two.
    remote, remote_tally = dask_run(client, project, paths, block_bytes=3000, summary=remote_summary)
    assert remote == local
    assert remote_tally == local_tally and local_tally.unreadable > 0 and local_tally.invalid > 0
    assert [d.path for d in remote][-1] == "logs/c.json"
    assert remote_summary == local_summary
    weather = remote_summary.tools["get_current_weather"]
    assert weather.calls > 0 and weather.invalid == weather.by_rule["arguments-invalid"] > 0
    assert remote_summary.tools["nope"].results_missing == remote_summary.tools["nope"].calls > 0


def test_a_worker_killed_mid_run_loses_and_repeats_no_finding(client_project: tuple[Client, Project]) -> None:
    client, project = client_project
    project.write("logs/big.jsonl", planted(6000))
    local, local_tally = local_run(project, ["logs/big.jsonl"])
    before = client.run(os.getpid)
    tally = Tally()
    findings = validate_on_dask(
        [str(project.root / "logs/big.jsonl")], kind="messages", address=client.scheduler.address, root=project.root, tally=tally,
        block_bytes=200_000,
    )  # fmt: skip
    remote = [next(findings)]  # the first block is done; the next ones are running on both workers
    busy = [address for address, keys in client.processing().items() if keys]
    assert busy, "no block was running when the worker was to be killed"
    os.kill(before[busy[0]], signal.SIGKILL)
    remote.extend(findings)
    assert remote == local and tally == local_tally
    client.wait_for_workers(2, timeout=60)
    after = client.run(os.getpid)
    assert before[busy[0]] not in after.values()  # the worker really died, and its nanny started another


def test_a_worker_killed_holding_finished_blocks_repeats_them(client_project: tuple[Client, Project]) -> None:
    """A finished block not yet taken is lost with its worker: it is computed again, and the run waits for it on
    its own client even when another client is the process's default (this test's)."""
    client, project = client_project
    project.write("logs/held.jsonl", planted(6000))
    local, local_tally = local_run(project, ["logs/held.jsonl"])
    before = client.run(os.getpid)
    tally = Tally()
    findings = validate_on_dask(
        [str(project.root / "logs/held.jsonl")], kind="messages", address=client.scheduler.address, root=project.root, tally=tally,
        block_bytes=100_000,
    )  # fmt: skip
    remote = [next(findings)]  # paused here, the run takes no result: finished blocks stay on their workers
    holder = None
    for _ in range(600):
        held = {
            address: keys
            for address, keys in client.has_what().items()
            if any("toolgen-validate" in str(k) for k in keys)
        }
        if held:
            holder = next(iter(held))
            break
        time.sleep(0.05)
    assert holder is not None, "no worker held a finished block"
    os.kill(before[holder], signal.SIGKILL)
    remote.extend(findings)
    assert remote == local and tally == local_tally
    client.wait_for_workers(2, timeout=60)


def test_fsspec_urls_file_and_memory(client_project: tuple[Client, Project]) -> None:
    client, project = client_project
    text = planted(300)
    log = project.write("logs/a.jsonl", text)
    local, local_tally = local_run(project, ["logs/a.jsonl"])
    url = log.as_uri()  # file:///...: the workers open it themselves
    # memory:// lives in one process: the workers (other processes) cannot see the client's, so the client
    # reads each block and sends its bytes with the task.
    memory = fsspec.filesystem("memory")
    memory.pipe("/dask17/logs/a.jsonl", text.encode())
    memory.pipe("/dask17/logs/notes.txt", b"not a payload")
    shipped, folder, missing = "memory://dask17/logs/a.jsonl", "memory://dask17/logs", "memory://dask17/none.jsonl"
    try:
        remote, tally = dask_run(client, project, [url, shipped, folder, missing])
    finally:
        memory.rm("/dask17", recursive=True)
    by_path: dict[str, list[Diagnostic]] = {}
    for finding in remote:
        by_path.setdefault(finding.path, []).append(finding)
    assert list(by_path) == [url, shipped, "memory:///dask17/logs/a.jsonl", missing]  # the folder: payloads only
    for path in list(by_path)[:3]:
        assert by_path[path] == [dataclasses.replace(d, path=path) for d in local]
    assert [d.rule for d in by_path[missing]] == ["file-unreadable"]
    assert tally == Tally(3 * local_tally.records, 3 * local_tally.invalid, 3 * local_tally.unreadable + 1)


def test_workers_import_the_package_the_client_sent_not_the_projects_folder(
    client_project: tuple[Client, Project],
) -> None:
    client, project = client_project
    project.write("logs/a.jsonl", planted(30))
    findings = validate_on_dask(
        [str(project.root / "logs/a.jsonl")], kind="messages", address=client.scheduler.address, root=project.root
    )
    first = next(findings)
    homes = client.run(lambda: str(sys.modules["sdk"].__file__))
    findings.close()
    assert first.path == "logs/a.jsonl"
    for home in homes.values():
        assert not Path(home).is_relative_to(project.root) and "toolgen-sdk-" in home


def test_the_command_against_a_scheduler_started_outside_toolgen_prints_the_same_bytes(
    client_project: tuple[Client, Project],
) -> None:
    client, project = client_project
    project.write("logs/a.jsonl", planted(120))
    address = client.scheduler.address
    assert address.startswith("tcp://127.0.0.1:")
    local = project.cli("validate", "logs/a.jsonl", "--as", "messages")
    remote = project.cli("validate", "--dask", address, "logs/a.jsonl", "--as", "messages")
    assert (remote.stdout, remote.returncode) == (local.stdout, local.returncode), remote.stderr
    assert local.returncode == 3 and local.stdout  # the planted log has unreadable records
    for extra in (["--format", "json"], ["--format", "github"], ["--summary"], ["--summary", "--format", "json"]):
        # The same command in this process, which spares an interpreter start a run.
        local_in = invoke(project, "logs/a.jsonl", "--as", "messages", *extra)
        remote_in = invoke(project, "--dask", address, "logs/a.jsonl", "--as", "messages", *extra)
        assert (remote_in.stdout, remote_in.exit_code) == (local_in.stdout, local_in.exit_code), remote_in.stderr
        assert local_in.exit_code == 3 and local_in.stdout
    project.write("logs/ok.jsonl", conversation(1) + "\n")
    ok = invoke(project, "--dask", address, "logs/ok.jsonl", "--as", "messages")
    assert ok.exit_code == 0 and ok.stdout == "" and "1 record(s), 0 invalid" in ok.stderr


def invoke(project: Project, *args: str) -> Result:
    """`toolgen validate -C ROOT ARGS` in this process, PATHS given relative to the project root."""
    with contextlib.chdir(project.root):
        return CliRunner().invoke(main, ["validate", "-C", str(project.root), *args])


def test_bad_usage_and_a_cluster_that_cannot_be_reached(project: Project) -> None:
    project.write("logs/a.jsonl", conversation(1) + "\n")
    bad = invoke(project, "--dask", "no such/cluster", "logs/a.jsonl", "--as", "messages")
    assert bad.exit_code == 2 and "expected local, local:N or a scheduler address" in bad.stderr
    assert invoke(project, "--dask", "local:0", "logs/a.jsonl", "--as", "messages").exit_code == 2
    stdin = invoke(project, "--dask", "local", "-", "--as", "messages")
    assert stdin.exit_code == 2 and "stdin cannot be sent to a cluster" in stdin.stderr
    both = invoke(project, "--dask", "local", "--workers", "2", "logs/a.jsonl", "--as", "messages")
    assert both.exit_code == 2 and "--workers is for local runs" in both.stderr
    github = invoke(project, "--dask", "local", "--summary", "--format", "github", "logs/a.jsonl", "--as", "messages")
    assert github.exit_code == 2 and "--summary prints a table" in github.stderr
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        unreachable = invoke(project, "--dask", "tcp://127.0.0.1:9", "logs/a.jsonl", "--as", "messages")
    assert unreachable.exit_code == 4 and unreachable.stdout == ""
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in unreachable.stderr
    (project.root / "generated").rename(project.root / "moved")
    unbuilt = invoke(project, "--dask", "tcp://127.0.0.1:9", "logs/a.jsonl", "--as", "messages")
    assert unbuilt.exit_code == 3 and "run `toolgen build` first" in unbuilt.stderr  # before any cluster is reached


def test_without_the_extra_the_message_names_it_and_exit_is_4(project: Project) -> None:
    project.write("logs/a.jsonl", conversation(1) + "\n")
    code = (
        "import sys\nsys.modules['distributed'] = None  # as if dask.distributed were not installed\n"
        "from toolgen.cli.main import main\n"
        "for extra in ([], ['--dask', 'local']):\n"
        "    try:\n"
        "        main.main(['validate', *extra, 'logs/a.jsonl', '--as', 'messages'], standalone_mode=False)\n"
        "    except SystemExit as exit:\n"
        "        print('exit', exit.code)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True, check=False)
    # Local validation does not need the extra; --dask says which one to install.
    assert result.stdout.splitlines() == ["exit 0", "exit 4"], result.stderr
    assert "install the dask extra: pip install 'toolgen[dask]'" in result.stderr


def test_addresses() -> None:
    assert parse_address("local") == ClusterAddress(None)
    assert parse_address("local:3") == ClusterAddress(None, 3)
    assert parse_address("tcp://10.0.0.5:8786") == ClusterAddress("tcp://10.0.0.5:8786")
    assert parse_address("scheduler:8786") == ClusterAddress("scheduler:8786")
    for bad in ("local:", "local:x", "local:0", "", "a b", "tcp://"):
        with pytest.raises(ValueError, match="expected"):
            parse_address(bad)


@pytest.fixture
def client_project(cluster: Client, project: Project) -> tuple[Client, Project]:
    return cluster, project


def test_recorded_streams_are_checked_whole_on_the_cluster_as_they_are_locally(
    client_project: tuple[Client, Project],
) -> None:
    client, project = client_project
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": ""}}
    deltas = [
        {"role": "assistant", "tool_calls": [call]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"location": 5}'}}]},
    ]
    chunks = [{**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    project.write("streams/bad.sse", "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n")
    project.write("streams/bad.jsonl", "".join(f"{json.dumps(c)}\n" for c in chunks))
    paths = [str(project.root / "streams")]
    local_tally, remote_tally = Tally(), Tally()
    local = list(toolgen.validate(paths, kind="openai-chat.response", root=project.root, tally=local_tally))
    remote = list(
        validate_on_dask(
            paths, kind="openai-chat.response", address=client.scheduler.address, root=project.root, tally=remote_tally
        )
    )
    assert remote == local and [d.rule for d in local] == ["arguments-invalid", "arguments-invalid"]
    assert remote_tally == local_tally and (local_tally.records, local_tally.invalid) == (2, 2)
