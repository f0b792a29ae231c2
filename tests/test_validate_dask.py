"""`toolgen validate --dask`: the same findings, order, tally and exit codes as local validation, on a real
dask.distributed LocalCluster (processes, 2 workers of 1 thread, on 127.0.0.1) shared by the module."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from distributed import Client, LocalCluster

import toolgen
from toolgen.diagnostics import Diagnostic
from toolgen.validate import Tally
from toolgen.validate_dask import ClusterAddress, parse_address, validate_on_dask
from toolgen.validate_summary import Summary

from conftest import Project

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
        from toolgen.validate_report import validate_with_summary

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
    remote, remote_tally = dask_run(client, project, paths, block_bytes=3000)  # a line often spans two blocks
    assert remote == local
    assert remote_tally == local_tally and local_tally.unreadable > 0 and local_tally.invalid > 0
    assert [d.path for d in remote][-1] == "logs/c.json"
    local_summary, remote_summary = Summary(), Summary()
    local_run(project, paths, local_summary)
    dask_run(client, project, paths, summary=remote_summary)
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


def test_fsspec_urls_file_and_memory(client_project: tuple[Client, Project]) -> None:
    client, project = client_project
    text = planted(300)
    log = project.write("logs/a.jsonl", text)
    local, local_tally = local_run(project, ["logs/a.jsonl"])
    url = log.as_uri()  # file:///...: the workers open it themselves
    remote, tally = dask_run(client, project, [url])
    assert remote == [dataclasses.replace(d, path=url) for d in local] and tally == local_tally
    # memory:// lives in one process: the workers (other processes) cannot see the client's, so the client
    # reads each block and sends its bytes with the task.
    memory = fsspec.filesystem("memory")
    memory.pipe("/dask17/logs/a.jsonl", text.encode())
    memory.pipe("/dask17/logs/notes.txt", b"not a payload")
    try:
        shipped, shipped_tally = dask_run(client, project, ["memory://dask17/logs/a.jsonl"])
        assert [d.line for d in shipped] == [d.line for d in local] and shipped_tally == local_tally
        assert {d.path for d in shipped} == {"memory://dask17/logs/a.jsonl"}
        folder, _ = dask_run(client, project, ["memory://dask17/logs"])  # a folder: its payload files only
        assert {d.path for d in folder} == {"memory:///dask17/logs/a.jsonl"} and len(folder) == len(local)
        missing, missing_tally = dask_run(client, project, ["memory://dask17/none.jsonl"])
        assert [d.rule for d in missing] == ["file-unreadable"] and missing_tally.unreadable == 1
    finally:
        memory.rm("/dask17", recursive=True)


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
    project.write("logs/a.jsonl", planted(400))
    address = client.scheduler.address
    assert address.startswith("tcp://127.0.0.1:")
    for extra in (["--format", "text"], ["--format", "json"], ["--format", "github"], ["--summary"]):
        local = project.cli("validate", "logs/a.jsonl", "--as", "messages", *extra)
        remote = project.cli("validate", "--dask", address, "logs/a.jsonl", "--as", "messages", *extra)
        assert (remote.stdout, remote.returncode) == (local.stdout, local.returncode), remote.stderr
        assert local.returncode == 3 and local.stdout  # the planted log has unreadable records
    project.write("logs/ok.jsonl", conversation(1) + "\n")
    ok = project.cli("validate", "--dask", address, "logs/ok.jsonl", "--as", "messages")
    assert ok.returncode == 0 and ok.stdout == "" and "1 record(s), 0 invalid" in ok.stderr


def test_bad_usage_and_a_cluster_that_cannot_be_reached(project: Project) -> None:
    project.write("logs/a.jsonl", conversation(1) + "\n")
    bad = project.cli("validate", "--dask", "no such/cluster", "logs/a.jsonl", "--as", "messages")
    assert bad.returncode == 2 and "expected local, local:N or a scheduler address" in bad.stderr
    assert project.cli("validate", "--dask", "local:0", "logs/a.jsonl", "--as", "messages").returncode == 2
    stdin = project.cli("validate", "--dask", "local", "-", "--as", "messages")
    assert stdin.returncode == 2 and "stdin cannot be sent to a cluster" in stdin.stderr
    both = project.cli("validate", "--dask", "local", "--workers", "2", "logs/a.jsonl", "--as", "messages")
    assert both.returncode == 2 and "--workers is for local runs" in both.stderr
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    unreachable = project.cli("validate", "--dask", "tcp://127.0.0.1:9", "logs/a.jsonl", "--as", "messages", env=env)
    assert unreachable.returncode == 4 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in unreachable.stderr
    unbuilt = project.cli("validate", "--dask", "tcp://127.0.0.1:9", "logs/a.jsonl", "--as", "messages", "-C", "logs")
    assert unbuilt.returncode == 3  # no project there: an input error, before any cluster is reached


def test_without_the_extra_the_message_names_it_and_exit_is_4(project: Project) -> None:
    project.write("logs/a.jsonl", conversation(1) + "\n")
    code = (
        "import sys\nsys.modules['distributed'] = None  # as if dask.distributed were not installed\n"
        "sys.argv = ['toolgen', 'validate', '--dask', 'local', 'logs/a.jsonl', '--as', 'messages']\n"
        "from toolgen.__main__ import run\nrun()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True, check=False)
    assert result.returncode == 4 and result.stdout == ""
    assert "install the dask extra: pip install 'toolgen[dask]'" in result.stderr
    # Local validation does not import it at all.
    code = code.replace("'--dask', 'local', ", "")
    local = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True, check=False)
    assert local.returncode == 0, local.stderr


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
