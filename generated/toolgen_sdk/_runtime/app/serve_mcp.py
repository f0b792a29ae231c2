# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""`python -m <package> mcp`: the package's tools over MCP, on stdio or (with --http) streamable HTTP."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..mcp.sdk import mcp_module
from ..mcp.server import parse_address, serve_mcp
from ..tools.loading import ToolsLoadError
from ..tools.registry import Registry
from .binding import bind_demo, chosen_registry


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve this package's tools over MCP: on stdin/stdout by default, or streamable HTTP "
        "with --http. Each MCP session is a conversation of its own (what the demo's todo tools keep is not "
        "shared); a call may name its conversation under _meta['toolgen/conversation']. Needs the mcp extra.",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    parser.add_argument(
        "--tools",
        metavar="MODULE:ATTRIBUTE",
        help="your bound tools: a Tools instance, or a function returning one; tools without a "
        "handler are listed as unavailable",
    )
    parser.add_argument("--name", help="the server's name (default: the package's)")
    parser.add_argument(
        "--workspace",
        help="the demo's run_command directory (default: a temporary one with a sample file)",
    )
    return parser


def mcp_main(
    argv: Sequence[str], make_registry: Callable[[], Registry], *, prog: str
) -> int:
    """Serve until the client hangs up (stdio) or the process is stopped (HTTP); 2 for bad options,
    4 when the mcp SDK is missing."""
    parser = _parser(prog)
    options = parser.parse_args(list(argv))
    address = None
    if options.http:
        try:
            address = parse_address(options.http)
        except ValueError as error:
            parser.error(f"--http: {error}")
    try:
        registry = chosen_registry(options.tools, make_registry)
    except ToolsLoadError as error:
        parser.error(str(error))
    name = options.name or prog.split()[-2]
    # The SDK first: without it, one line naming the extra (main() says it), before anything is bound or said.
    mcp_module()
    with tempfile.TemporaryDirectory(prefix="toolgen-workspace-") as scratch:
        if not options.tools:
            bind_demo(registry, options.workspace, Path(scratch))
        try:
            if address is None:
                serve_mcp(registry, transport="stdio", name=name)
            else:
                sys.stderr.write(
                    f"serving MCP at http://{options.http}/mcp (Ctrl-C stops)\n"
                )
                sys.stderr.flush()
                serve_mcp(
                    registry,
                    transport="http",
                    host=address[0],
                    port=address[1],
                    name=name,
                )
        except ImportError as error:
            sys.stderr.write(f"{prog}: {error}\n")
            return 4
        except KeyboardInterrupt:
            return 130
    return 0
