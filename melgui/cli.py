"""Command line: `melgui [FOLDER]` opens the window; `melgui exec …` runs one turn headless."""

from __future__ import annotations

import argparse
import sys

from melgui import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melgui",
        description="A desktop app for working with an AI agent on a project folder.",
        epilog="Run `melgui exec --help` for the headless mode, `melgui acp --help` to serve "
        "melgui to an ACP client (Zed), `melgui checkpoints --help` "
        "to list and restore checkpoints, `melgui mcp login NAME` to sign in to an MCP server, "
        "`melgui host --help` for the agent host, `melgui --list-running` for what it runs.",
    )
    parser.add_argument("--version", action="version", version=f"melgui {__version__}")
    parser.add_argument(
        "folder",
        nargs="?",
        default=".",
        help="project folder (default: .), or ssh://[user@]host[:port]/abs/path: a folder on "
        "another machine (its tools and terminals run there; the loop and the key stay here)",
    )
    hosting = parser.add_mutually_exclusive_group()
    hosting.add_argument(
        "--no-host",
        action="store_true",
        help="run the agents, terminals and tools in a melgui host of this window's own, "
        "its child, instead of the user's melgui host (by default the window attaches to "
        "that host, starting it when none runs, so what runs can keep running when the "
        "window closes): they end when the window closes",
    )
    # The default since the window became a view of the host; kept so that scripts and
    # desktop notifications written for the earlier opt-in still work.
    hosting.add_argument("--with-host", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "exec":
        from melgui import lean_start

        lean_start.skip_unused_imports()
        if argv is None:  # as the program: a test's process keeps its own dataclasses
            lean_start.compile_dataclasses_once()
        lean_start.buffer_stdout()
        with lean_start.imported_once():
            from melgui.headless import main as exec_main
        try:
            code = exec_main(args[1:])
        finally:
            lean_start.before_exit()
        # As the program (not called with its arguments): no teardown after the run.
        return code if argv is not None else lean_start.end_process(code)
    if args and args[0] == "acp":
        from melgui.acp.main import main as acp_main

        return acp_main(args[1:])
    if args and args[0] == "mcp":
        from melgui.mcp_cli import main as mcp_main

        return mcp_main(args[1:])
    if args and args[0] == "host":
        from melgui import lean_start

        lean_start.asyncio_without_ssl()  # a host speaks TLS only once a session does
        lean_start.secrets_on_first_use()  # pydantic's, not OpenSSL's until it compares
        from melgui.host.main import main as host_main

        return host_main(args[1:])
    if args and args[0] == "--list-running":
        from melgui.host.main import main as host_main

        return host_main(["--status"])
    if args and args[0] == "checkpoints":
        from melgui.checkpoint_cli import main as checkpoints_main

        return checkpoints_main(args[1:])
    options = build_parser().parse_args(args)
    from melgui.ui.app import run_app

    return run_app(options.folder, host="own" if options.no_host else "user")
