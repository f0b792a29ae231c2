# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""`python -m <package> serve`: durable runs over HTTP with their page, offline by default (the `serve` extra)."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..loop.options import RunOptions
from ..serve.durable import DurableRuns, DurableRunsError
from ..serve.http import service_app
from ..tools.loading import ToolsLoadError
from ..tools.registry import Registry
from .binding import bind_demo, chosen_registry
from .endpoint import add_endpoint_options, endpoint_model, run_settings
from .prompted import PromptedModel

# In the folder the service starts in: the project's state, beside its sources and out of the package.
STATE_DIR = ".toolgen-state"
SERVE_EXTRA = ("dbos", "starlette", "uvicorn")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{prog} serve",
        description="Serve durable agent runs over HTTP, with a page to watch and approve them: "
        "offline with a scripted model by default, or against an endpoint with --base-url.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--database",
        metavar="URL",
        help="where runs are kept: sqlite:///FILE or postgresql://... to share runs "
        f"between servers (default: a SQLite file under {STATE_DIR}/)",
    )
    parser.add_argument(
        "--executor-id",
        default=os.environ.get("TOOLGEN_EXECUTOR_ID", "local"),
        help="this server's name among those sharing a database: a server resumes the "
        "unfinished runs it started (default 'local'; give each server its own)",
    )
    parser.add_argument("--tools", metavar="MODULE:ATTRIBUTE", help="your bound tools")
    add_endpoint_options(parser)
    parser.add_argument(
        "--max-steps", type=int, default=8, help="model calls at most per run"
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="every run's overall deadline (a run may ask for its own in POST /runs)",
    )
    parser.add_argument(
        "--workspace",
        help=f"run_command's directory (default: {STATE_DIR}/<package>/workspace)",
    )
    return parser


def _registry(
    options: argparse.Namespace,
    parser: argparse.ArgumentParser,
    make_registry: Callable[[], Registry],
    state: Path,
) -> Registry:
    try:
        registry = chosen_registry(options.tools, make_registry)
    except ToolsLoadError as error:
        parser.error(str(error))
    if options.tools:
        return registry
    default = state / "workspace"
    fresh = not options.workspace and not default.exists()
    if fresh:
        default.mkdir(parents=True)
    # A new default workspace gets the demo's sample files; one kept from an earlier start is used as it is.
    bind_demo(registry, None if fresh else (options.workspace or str(default)), default)
    return registry


def _missing_extra() -> str | None:
    """The first package of the `serve` extra that cannot be imported, if any."""
    for module in SERVE_EXTRA:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
            return module
    return None


def serve_main(
    argv: Sequence[str], make_registry: Callable[[], Registry], *, prog: str
) -> int:
    """Serve until stopped: 0 after SIGTERM, 130 after Ctrl-C, 4 when the service cannot start."""
    parser = _parser(prog)
    options = parser.parse_args(argv)
    package = __name__.split(".")[0]
    state = Path(STATE_DIR) / package
    if not options.database:
        state.mkdir(parents=True, exist_ok=True)
    database = options.database or f"sqlite:///{(state / 'runs.sqlite').resolve()}"
    if not database.startswith(("sqlite:", "postgresql:", "postgres:")):
        parser.error("--database must be a sqlite:/// or postgresql:// URL")
    registry = _registry(options, parser, make_registry, state)
    missing = _missing_extra()
    if missing is not None:
        sys.stderr.write(
            f"serve: {missing} is not installed; the service needs the `serve` extra: "
            "pip install dbos starlette uvicorn\n"
        )
        return 4
    import uvicorn

    try:
        runs = DurableRuns(
            registry,
            endpoint_model(options, parser, PromptedModel),
            database_url=database,
            name=package.replace("_", "-"),
            executor_id=options.executor_id,
            options=RunOptions(
                stream=True,
                max_steps=options.max_steps,
                deadline=options.deadline,
                settings=run_settings(options, parser),
                on_unsupported=options.on_unsupported,
            ),
        )
        app = service_app(runs)
    except DurableRunsError as error:
        sys.stderr.write(f"serve: {error}\n")
        return 4
    except (
        ValueError
    ) as error:  # UnsupportedSettings, or a limit out of range (--deadline 0)
        parser.error(str(error))
    sys.stderr.write(f"serving on http://{options.host}:{options.port}/\n")
    server = uvicorn.Server(
        uvicorn.Config(app, host=options.host, port=options.port, log_level="warning")
    )
    code = _served(server, runs, options)
    stuck = [
        thread
        for thread in threading.enumerate()
        if thread is not threading.current_thread() and not thread.daemon
    ]
    if stuck:
        # A run waiting for a decision holds one of DBOS's worker threads, which the interpreter would join at
        # exit for as long as the wait lasts (an hour); its state is in the database and it resumes at the next
        # start, so the process ends now, as a service manager expects of SIGTERM.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _served(server: Any, runs: DurableRuns, options: argparse.Namespace) -> int:
    """Run `server` until it stops; the exit status that stop means."""
    try:
        # uvicorn.run() swallows the Ctrl-C it re-raises after a graceful stop: run the server itself to see it.
        with _terminate_as_stop():
            server.run()
    except KeyboardInterrupt:
        sys.stderr.write(
            "serve: interrupted; unfinished runs resume at the next start\n"
        )
        return 130
    except _Stopped:
        return 0  # SIGTERM: the way a service manager stops a service
    except SystemExit:
        if server.started:
            raise
        # uvicorn exits 1 when it cannot listen (the port is taken): an environment failure, like a bad database.
        sys.stderr.write(f"serve: could not listen on {options.host}:{options.port}\n")
        return 4
    finally:
        runs.close()
    return 0 if server.started else 4


class _Stopped(Exception):
    """SIGTERM arrived: stop as after Ctrl-C, but as a clean stop."""


@contextmanager
def _terminate_as_stop() -> Iterator[None]:
    """SIGTERM raises _Stopped (after uvicorn's graceful shutdown, which re-raises it), so runs.close() runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Stopped()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
