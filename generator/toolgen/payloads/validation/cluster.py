"""`toolgen validate --dask ADDRESS`: the same validation on a Dask cluster, the same findings in the same order.

Files are cut into byte ranges that each end on a line boundary; every worker checks the ranges it is given with
the generated SDK, which a worker plugin unpacks and imports once per worker. A bounded window of ranges is in
flight; results are fetched as they complete and put back in file order from a small reorder buffer, so neither
the client nor the scheduler ever holds more than the window's findings. A range whose worker dies is run again
by Dask, and its findings are taken once, from the one result the client fetches.

dask.distributed is an optional extra (`toolgen[dask]`), imported only here, when `--dask` is given.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import logging
import os
import re
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import ExternalToolError, InvalidInputError
from toolgen.core.kinds import KINDS, WIRE_KINDS
from toolgen.payloads.validation.blocks import BlockResult, Collector
from toolgen.payloads.validation.local import Tally, load_sdk
from toolgen.payloads.validation.streams import stream_framing
from toolgen.payloads.validation.summary import Summary
from toolgen.project.config import load_config

# Bytes of a file one task checks: large enough that scheduling costs little next to the checking, small enough
# that a worker's memory stays a small multiple of it.
BLOCK_BYTES = 16 << 20
# Tasks in flight (submitted, or done and waiting for the ones before them) per worker thread.
WINDOW_PER_THREAD = 2
# Filesystems only the client's process can see: it reads their ranges and sends the bytes with the task.
CLIENT_ONLY_PROTOCOLS = frozenset({"memory"})
PAYLOAD_SUFFIXES = (".json", ".jsonl", ".ndjson")
INSTALL_HINT = "pip install 'toolgen[dask]'"
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?[^\s/:]+(?::\d+)?$|^[a-z][a-z0-9+.-]*://\S+$")


@dataclass(frozen=True)
class ClusterAddress:
    """Where to run: a scheduler's address, or None for a local cluster of `workers` processes (default: cores)."""

    scheduler: str | None
    workers: int | None = None


def parse_address(text: str) -> ClusterAddress:
    """`local`, `local:N` or a scheduler address (`tcp://host:8786`); ValueError names what was expected."""
    if text == "local":
        return ClusterAddress(None)
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"{text!r}: expected local:N with N a number of workers of at least 1")
        return ClusterAddress(None, int(count))
    if not _ADDRESS.match(text):
        raise ValueError(f"{text!r}: expected local, local:N or a scheduler address such as tcp://host:8786")
    return ClusterAddress(text)


@dataclass(frozen=True)
class Target:
    """One file to check: where workers read it, how findings name it, its size, or why it cannot be read."""

    url: str
    display: str
    size: int = 0
    document: bool = False
    client_only: bool = False
    error: str | None = None
    # A recorded stream, read whole and aggregated (see validate_streams): its framing.
    framing: str | None = None


def _distributed() -> tuple[ModuleType, ModuleType]:
    """dask.distributed and the worker side of this module, or an error that names the extra to install."""
    try:
        import distributed

        from toolgen.payloads.validation import cluster_worker as validate_dask_worker
    except ImportError as error:
        raise ExternalToolError(
            f"--dask needs dask.distributed, which is not installed ({error}); install the dask extra: {INSTALL_HINT}"
        ) from None
    return distributed, validate_dask_worker


def validate_on_dask(
    paths: Iterable[str | Path],
    *,
    kind: str,
    address: str | ClusterAddress,
    root: str | Path = ".",
    config_path: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
    tally: Tally | None = None,
    summary: Summary | None = None,
    block_bytes: int = BLOCK_BYTES,
    storage_options: Mapping[str, Any] | None = None,
) -> Iterator[Diagnostic]:
    """`toolgen.validate`'s findings for `paths` (local paths, or fsspec URLs the workers can read), checked on the
    cluster at `address`; `summary`, when given, counts every tool call as `--summary` shows it.

    The cluster is reached and the SDK loaded on every worker now, so those errors come before the first finding;
    the cluster is let go when the findings run out or the iterator is closed.
    """
    distributed, worker = _distributed()
    if kind not in KINDS and kind not in WIRE_KINDS:
        raise ValueError(f"unknown payload kind {kind!r}; one of {', '.join((*KINDS, *WIRE_KINDS))}")
    where = parse_address(address) if isinstance(address, str) else address
    storage = dict(storage_options or {})
    config = load_config(Path(root).resolve(), Path(config_path).resolve() if config_path else None)
    sdk = load_sdk(config.output_dir, config.package)  # a missing or broken SDK is exit 3 before any cluster starts
    if summary is not None:
        summary.expect(sdk.TOOLS)
    targets = plan_targets(paths, config.root, storage, kind)
    session = _Session.open(distributed, worker, where, config.package, package_files(config.package_dir))
    collector = Collector(tally if tally is not None else Tally(), summary, progress)
    findings = _findings(session, targets, kind, collector, summary is not None, block_bytes, storage)
    weakref.finalize(findings, session.close)  # an iterator dropped unread still lets the cluster go
    return findings


def package_files(package_dir: Path) -> tuple[tuple[str, bytes], ...]:
    """Every file of the generated package (bytecode caches aside), as (POSIX path inside it, bytes)."""
    return tuple(
        (path.relative_to(package_dir).as_posix(), path.read_bytes())
        for path in sorted(package_dir.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    )


def plan_targets(
    paths: Iterable[str | Path], root: Path, storage: dict[str, Any], kind: str | None = None
) -> list[Target]:
    """The files to check, in the order given: a folder means its payload files, sorted; a URL may hold a glob.

    For a provider response, a local file that is a recorded stream is one target read whole; a URL is one when
    its extension names a stream framing (`.sse`, `.eventstream`), since sniffing its first line would read it."""
    from toolgen.payloads.validation.sources import payload_sources

    targets: list[Target] = []
    for given in paths:
        text = str(given)
        if text == "-":
            raise ValueError("stdin cannot be sent to a cluster: give files, or validate stdin without --dask")
        if "://" in text:
            targets.extend(_streams_by_name([_uncompressed(t) for t in _url_targets(text, storage)], kind))
            continue
        for source in payload_sources([given], root=root, kind=kind):
            assert source.path is not None
            target = _local_target(source.path, source.display)
            framing = stream_framing(kind, source.path) if kind is not None else None
            targets.append(dataclasses.replace(target, document=True, framing=framing) if framing else target)
    return targets


def _streams_by_name(targets: list[Target], kind: str | None) -> list[Target]:
    if kind is None or not kind.endswith(".response"):
        return targets
    framings = {".sse": "sse", ".eventstream": "eventstream"}
    out = []
    for target in targets:
        framing = framings.get(Path(target.url.split("?", 1)[0]).suffix.lower())
        out.append(dataclasses.replace(target, document=True, framing=framing) if framing else target)
    return out


# A gzip stream cannot be cut into blocks that workers read on their own.
_COMPRESSED_ON_A_CLUSTER = (
    "a compressed file is read by local validation only: validate it without --dask, or decompress it"
)


def _uncompressed(target: Target) -> Target:
    if target.error is None and Path(target.url.split("?", 1)[0]).suffix.lower() == ".gz":
        return dataclasses.replace(target, error=_COMPRESSED_ON_A_CLUSTER)
    return target


def _local_target(path: Path, display: str) -> Target:
    document = path.suffix.lower() == ".json"
    if path.suffix.lower() == ".gz":
        return Target(str(path), display, document=document, error=_COMPRESSED_ON_A_CLUSTER)
    try:
        return Target(str(path), display, path.stat().st_size, document)
    except OSError as error:
        return Target(str(path), display, document=document, error=error.strerror or str(error))


def _url_targets(url: str, storage: dict[str, Any]) -> list[Target]:
    import fsspec.core

    try:
        fs, path = fsspec.core.url_to_fs(url, **storage)
    except ImportError as error:
        raise ExternalToolError(f"{url}: reading it needs a package that is not installed ({error})") from None
    except ValueError as error:
        problem = f"not a URL fsspec can read: {error}"
        raise InvalidInputError([Diagnostic(url, 1, 1, Severity.ERROR, "payload-unreadable", problem)]) from None
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    client_only = bool(protocols & CLIENT_ONLY_PROTOCOLS)
    if glob.has_magic(path):
        found = sorted(p for p in fs.glob(path) if fs.isfile(p))
        shown = [fs.unstrip_protocol(p) for p in found]
        if not found:
            raise InvalidInputError([Diagnostic(url, 1, 1, Severity.ERROR, "payload-unreadable", "matches no file")])
    elif fs.isdir(path):
        found = sorted(p for p in fs.find(path) if p.lower().endswith(PAYLOAD_SUFFIXES))
        shown = [fs.unstrip_protocol(p) for p in found]
        if not found:
            problem = "no .json, .jsonl or .ndjson file in this folder: nothing to validate"
            raise InvalidInputError([Diagnostic(url, 1, 1, Severity.ERROR, "payload-unreadable", problem)])
    else:
        found, shown = [path], [url]
    targets = []
    for path, display in zip(found, shown, strict=True):
        document = path.lower().endswith(".json")
        target_url = fs.unstrip_protocol(path)
        try:
            size = int(fs.size(path))
        except OSError as error:
            reason = error.strerror or "No such file or directory"
            targets.append(Target(target_url, display, document=document, client_only=client_only, error=reason))
            continue
        targets.append(Target(target_url, display, size, document, client_only))
    return targets


class _Session:
    """A client of the cluster (and the local cluster it started), with the SDK plugin registered on its workers."""

    def __init__(self, worker: ModuleType, client: Any, cluster: Any, plugin: str) -> None:
        self.worker = worker
        self.client = client
        self.cluster = cluster
        self.plugin = plugin
        self.closed = False

    @classmethod
    def open(
        cls,
        distributed: ModuleType,
        worker: ModuleType,
        where: ClusterAddress,
        package: str,
        files: tuple[tuple[str, bytes], ...],
    ) -> _Session:
        cluster = None
        try:
            if where.scheduler is None:
                cluster = distributed.LocalCluster(
                    n_workers=where.workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                client = distributed.Client(cluster)
            else:
                # How long to try is dask's own setting (distributed.comm.timeouts.connect, 30 s by default).
                client = distributed.Client(where.scheduler)
        except (OSError, TimeoutError) as error:
            if cluster is not None:
                cluster.close()
            shown = where.scheduler or "a local cluster"
            raise ExternalToolError(f"cannot reach the Dask scheduler at {shown}: {error}") from None
        digest = hashlib.sha256(b"".join(name.encode() + b"\0" + data for name, data in files)).hexdigest()
        session = cls(worker, client, cluster, f"toolgen-sdk-{digest[:12]}-{uuid.uuid4().hex[:8]}")
        try:
            client.wait_for_workers(1, timeout=_connect_timeout())
            client.register_plugin(
                worker.SdkPlugin(session.plugin, package, files, worker.toolgen_version()), name=session.plugin
            )
        except Exception as error:  # noqa: BLE001 - whatever a worker raised, the run cannot start
            session.close()
            raise ExternalToolError(_setup_failure(where, error)) from None
        return session

    def threads(self) -> int:
        return max(1, sum(int(count) for count in self.client.nthreads().values()))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for step in (
            lambda: self.client.unregister_worker_plugin(self.plugin),
            self.client.close,
            *((self.cluster.close,) if self.cluster is not None else ()),
        ):
            # Letting go of a cluster that is already gone is not an error.
            with contextlib.suppress(Exception):
                step()


def _connect_timeout() -> float:
    """Seconds to wait for a worker: dask's connect timeout, which DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT sets."""
    import dask.config
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect")) or 30)


def _setup_failure(where: ClusterAddress, error: BaseException) -> str:
    shown = where.scheduler or "the local cluster"
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, TimeoutError):
        return f"the Dask scheduler at {shown} has no worker ({text})"
    hint = ""
    if "toolgen" in str(error) and isinstance(error, ImportError):
        hint = "; the workers need toolgen installed, the same version as here (the same image, or pip install)"
    return f"the workers of {shown} could not load the generated package: {text}{hint}"


def _blocks(targets: list[Target], block_bytes: int, storage: dict[str, Any], worker: ModuleType) -> Iterator[Any]:
    """(file index, display, work) in file order: a worker's Block, or a result already known (a file not read)."""
    for index, target in enumerate(targets):
        if target.error is not None:
            yield index, target.display, BlockResult(unreadable=target.error)
            continue
        spans = [(0, None)] if target.document else [(o, block_bytes) for o in range(0, target.size, block_bytes)]
        for offset, length in spans:
            block = worker.Block(target.url, target.display, offset, length, target.document, framing=target.framing)
            if target.client_only:
                try:
                    block = dataclasses.replace(block, data=worker.read_range(block, storage))
                except OSError as error:
                    yield index, target.display, BlockResult(unreadable=error.strerror or str(error))
                    break
            yield index, target.display, block


def _findings(
    session: _Session,
    targets: list[Target],
    kind: str,
    collector: Collector,
    summarize: bool,
    block_bytes: int,
    storage: dict[str, Any],
) -> Iterator[Diagnostic]:
    from distributed import as_completed

    sequence: dict[Any, int] = {}  # future -> its place in file order
    try:
        window = WINDOW_PER_THREAD * session.threads()
        work = _blocks(targets, block_bytes, storage, session.worker)
        # The session's own loop: by default as_completed waits on the process's first client, and a future that
        # is lost and recomputed then wakes two loops at once.
        done = as_completed(loop=session.client.loop)  # type: ignore[no-untyped-call]
        ready: dict[int, tuple[int, str, BlockResult]] = {}  # the reorder buffer: results waiting for earlier ones
        places: dict[int, tuple[int, str]] = {}
        submitted = emitted = 0
        current, skipping, exhausted = -1, False, False
        token = uuid.uuid4().hex[:8]
        while True:
            while not exhausted and submitted - emitted < window:
                item = next(work, None)
                if item is None:
                    exhausted = True
                    break
                index, display, task = item
                if isinstance(task, BlockResult):
                    ready[submitted] = (index, display, task)
                else:
                    future = session.client.submit(
                        session.worker.check_block,
                        session.plugin,
                        kind,
                        task,
                        summarize,
                        storage,
                        key=f"toolgen-validate-{token}-{submitted}",
                        pure=False,
                    )
                    sequence[future] = submitted
                    places[submitted] = (index, display)
                    done.add(future)  # type: ignore[no-untyped-call]
                submitted += 1
            if emitted in ready:
                while emitted in ready:
                    index, display, result = ready.pop(emitted)
                    emitted += 1
                    if index != current:
                        current, skipping = index, False
                        collector.start_file()
                    if not skipping:
                        yield from collector.take(display, result)
                        skipping = result.unreadable is not None
                continue
            if exhausted and emitted == submitted:
                return
            future = next(done)
            place = sequence.pop(future)
            index, display = places.pop(place)
            ready[place] = (index, display, _result(future, display))
            future.release()
    finally:
        if sequence:
            # Blocks still queued would otherwise start on a worker after the plugin they need is gone.
            with contextlib.suppress(Exception):
                session.client.cancel(list(sequence))
        session.close()


def _result(future: Any, display: str) -> BlockResult:
    from distributed import KilledWorker

    try:
        result = future.result()
    except KilledWorker as error:
        raise ExternalToolError(
            f"a block of {display} was lost: every worker that ran it died ({error}); "
            "the workers may need more memory, or smaller blocks"
        ) from None
    except Exception as error:  # noqa: BLE001 - a task that failed on a worker stops the run with its reason
        raise ExternalToolError(
            f"checking a block of {display} failed on the cluster: {type(error).__name__}: {error}"
        ) from None
    assert isinstance(result, BlockResult)
    return result
