# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""`python -m <package> serve`: durable runs over HTTP with their page, offline by default (the `serve` extra)."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..extras import MissingExtra, missing_extra
from ..loop.options import RunOptions
from ..serve.auth import (
    SESSION_COOKIE,
    TOKEN_ENV,
    Authenticate,
    AuthError,
    TokenAuth,
    Tokens,
    kept_token,
    open_access,
)
from ..serve.boundary import checked_origin, is_loopback, service_hosts
from ..serve.durable import MAX_OPEN_RUNS, DurableRuns, DurableRunsError
from ..serve.http import service_app
from ..tools.loading import ToolsLoadError
from ..tools.registry import Registry
from .binding import bind_demo, chosen_registry
from .endpoint import add_endpoint_options, endpoint_model, run_settings
from .prompted import PromptedModel
from .server_limits import MAX_CONNECTIONS, connection_cap, service_config

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
    parser.add_argument(
        "--port", type=_port, default=8000, help="port, 1 to 65535 (default 8000)"
    )
    parser.add_argument(
        "--max-connections",
        type=connection_cap,
        default=MAX_CONNECTIONS,
        metavar="N",
        help="connections held at once, event streams included; past it a connection "
        f"awaiting a request is closed, or the new one answered 503 (default {MAX_CONNECTIONS:,})",
    )
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
        help="every run's overall deadline, and the longest a run may ask for in POST /runs",
    )
    parser.add_argument(
        "--workspace",
        help=f"run_command's directory (default: {STATE_DIR}/<package>/workspace)",
    )
    access = parser.add_argument_group(
        "access",
        f"Every request needs a token: one of --tokens, else ${TOKEN_ENV}, else one made at "
        f"the first start and kept in {STATE_DIR}/<package>/token (printed once, with the page's address).",
    )
    access.add_argument(
        "--tokens",
        metavar="FILE",
        help="the tokens, one `TOKEN RIGHTS NAME` a line, RIGHTS a comma list of start, read, "
        "decide, cancel (default all), NAME whose runs they are (default one made from the token)",
    )
    access.add_argument(
        "--max-open-runs",
        type=_open_runs_cap,
        default=MAX_OPEN_RUNS,
        metavar="N",
        help="runs one credential may have running or awaiting approval at once; past it POST "
        f"/runs is answered 429 (default {MAX_OPEN_RUNS})",
    )
    access.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="another Host the service answers to (a proxy's or a name of this machine; "
        "repeatable); others get 421",
    )
    access.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="URL",
        help="another page origin, http(s)://HOST[:PORT], whose requests are taken (repeatable)",
    )
    access.add_argument(
        "--allow-client-tool-calls",
        action="store_true",
        help="take a conversation ending in an assistant turn with tool calls, which run at "
        "once with no model call (refused by default)",
    )
    access.add_argument(
        "--no-auth",
        action="store_true",
        help="serve without a credential: only on a loopback --host",
    )
    return parser


def _port(text: str) -> int:
    """--port's value: 1 to 65535. Not 0 (any free port): the token's link, the allowed Host and the session
    cookie's name are made from the port before it is bound."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port: a whole number from 1 to 65535"
        )
    return int(text)


def _open_runs_cap(text: str) -> int:
    """--max-open-runs' value: a whole number from 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1")
    return int(text)


def _access(
    options: argparse.Namespace, parser: argparse.ArgumentParser, state: Path
) -> dict[str, Any]:
    """service_app's authentication and boundary as the options say; a usage error (exit 2) for what cannot be."""
    auth: Authenticate
    try:
        hosts = service_hosts(options.host, options.port, options.allowed_host)
        origins = [checked_origin(origin) for origin in options.allowed_origin]
        if options.no_auth and options.tokens:
            parser.error("--no-auth and --tokens exclude each other")
        if options.no_auth and not is_loopback(options.host):
            parser.error(
                f"--no-auth would serve anyone who reaches {options.host}: it is allowed only "
                "on a loopback address (--host 127.0.0.1, ::1 or localhost)"
            )
        if options.no_auth:
            auth = open_access
        else:
            # Cookies are not told apart by port: each port's own name keeps two services' sessions apart.
            cookie = f"{SESSION_COOKIE}_{options.port}"
            auth = TokenAuth(_tokens(options, state), cookie=cookie)
    except AuthError as error:
        parser.error(str(error))
    return {
        "auth": auth,
        "hosts": hosts,
        "origins": origins,
        "allow_client_tool_calls": options.allow_client_tool_calls,
    }


def _tokens(options: argparse.Namespace, state: Path) -> Tokens:
    """The tokens file's, the environment's, or the one kept in the state folder (made and shown once)."""
    if options.tokens:
        return Tokens.from_file(options.tokens)
    if os.environ.get(TOKEN_ENV):
        return Tokens.single(os.environ[TOKEN_ENV])
    path = state / "token"
    token, made = kept_token(path)
    if made:
        host = "127.0.0.1" if options.host in ("", "0.0.0.0", "::") else options.host
        host = f"[{host}]" if ":" in host else host
        sys.stderr.write(
            f"serve: made the service's token, kept in {path} and shown only this once; "
            f"the page: http://{host}:{options.port}/#token={token}\n"
        )
    else:
        sys.stderr.write(f"serve: the page asks for the token kept in {path}\n")
    return Tokens.single(token, str(path))


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


def _missing_extra(http: bool) -> MissingExtra | None:
    """The error naming the `serve` extra when one of its packages (or one they import) is missing, if any;
    with `http` (--base-url), httpx too, which the extra brings: said before anything starts."""
    for module in (*SERVE_EXTRA, *(("httpx", "httpcore") if http else ())):
        try:
            importlib.import_module(module)
        except ImportError as error:
            named = missing_extra(error, "serve", "serve")
            if named is None:
                raise
            return named
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
    missing = _missing_extra(bool(options.base_url))
    if missing is not None:
        sys.stderr.write(f"{prog} {missing}\n")
        return 4
    access = _access(options, parser, state)
    import uvicorn  # type: ignore[import-not-found,unused-ignore]

    try:
        runs = DurableRuns(
            registry,
            endpoint_model(options, parser, PromptedModel),
            database_url=database,
            name=package.replace("_", "-"),
            executor_id=options.executor_id,
            # Resumed only once the port is ours (below): a server that cannot serve leaves the runs alone.
            launch=False,
            max_open_runs=options.max_open_runs,
            options=RunOptions(
                stream=True,
                max_steps=options.max_steps,
                deadline=options.deadline,
                settings=run_settings(options, parser),
                on_unsupported=options.on_unsupported,
            ),
        )
        app = service_app(runs, **access)
    except DurableRunsError as error:
        sys.stderr.write(f"serve: {error}\n")
        return 4
    except (
        ValueError
    ) as error:  # UnsupportedSettings, or a limit out of range (--deadline 0)
        parser.error(str(error))
    try:
        listening = _listen(options.host, options.port)
    except OSError as error:
        runs.close()
        sys.stderr.write(
            f"serve: could not listen on {options.host}:{options.port}: {error.strerror or error}\n"
        )
        return 4
    try:
        runs.launch()
    except DurableRunsError as error:
        listening.close()
        runs.close()
        sys.stderr.write(f"serve: {error}\n")
        return 4
    # What is alive once the service has started (modules, DBOS, the app) stays for its life: out of the garbage
    # collector's full passes, which would walk it all again every few hundred runs.
    gc.collect()
    gc.freeze()
    sys.stderr.write(f"serving on http://{options.host}:{options.port}/\n")
    server = uvicorn.Server(
        service_config(
            app, options.host, options.port, max_connections=options.max_connections
        )
    )
    code = _served(server, runs, options, listening)
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


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything else starts, as uvicorn would bind it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.set_inheritable(True)
    except OSError:
        listening.close()
        raise
    return listening


def _served(
    server: Any,
    runs: DurableRuns,
    options: argparse.Namespace,
    listening: socket.socket,
) -> int:
    """Run `server` on `listening` until it stops; the exit status that stop means."""
    try:
        # uvicorn.run() swallows the Ctrl-C it re-raises after a graceful stop: run the server itself to see it.
        with _terminate_as_stop():
            server.run(sockets=[listening])
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
