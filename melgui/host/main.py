"""`melgui host`: serve the user's desks and sessions to views, over the user's socket or
(`--stdio`) over stdin and stdout.

    melgui host                 # the user's one host; a second start finds the running one
    melgui host --stdio         # one view on stdio, from a host of its own
    melgui host --stdio --journal PATH   # a window's private host (its child)
    melgui host --bridge        # one view on stdio, through the user's host (over ssh)
    melgui host --status        # what the running host has (also `melgui --list-running`)
    melgui host --stop
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from typing import Any

from melgui.host import wire
from melgui.host.client import START_TIMEOUT, HostClient, VersionRefused, start_host
from melgui.host.place import HostPlace, PlaceError

DEFAULT_IDLE_EXIT = 600.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melgui host",
        description="Run the agents of every melgui window in one process of their own.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve one view on stdin/stdout")
    mode.add_argument(
        "--bridge",
        action="store_true",
        help="serve one view on stdin/stdout through the user's host (started if none runs), "
        "so what it runs outlives this connection",
    )
    mode.add_argument("--status", action="store_true", help="list what the running host runs")
    mode.add_argument("--stop", action="store_true", help="ask the running host to end")
    parser.add_argument(
        "--journal",
        metavar="PATH",
        help="with --stdio: journal the sessions in PATH, not in the user's host.sqlite, so "
        "that this host reopens only PATH's and no other host reopens them (a window's "
        "private host)",
    )
    parser.add_argument(
        "--idle-exit",
        type=float,
        default=DEFAULT_IDLE_EXIT,
        metavar="SECONDS",
        help="end after this long with no view attached and nothing running (default 600)",
    )
    return parser


def main(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="melgui host: %(message)s", stream=sys.stderr)
    if options.stdio:
        return asyncio.run(_serve_stdio(options.journal))
    if options.bridge:
        idle = options.idle_exit if options.idle_exit != DEFAULT_IDLE_EXIT else None
        return asyncio.run(bridge(idle))
    try:
        place = HostPlace.for_user()
    except PlaceError as exc:
        print(f"melgui host: {exc}", file=sys.stderr)
        return 1
    if options.status or options.stop:
        return asyncio.run(_ask(place, stop=options.stop))
    lock = place.hold_lock()
    if lock is None:
        running = place.read_info()
        print(
            f"melgui host: already running (pid {running.get('pid', '?')}, version "
            f"{running.get('version', '?')}) at {place.socket}",
            file=sys.stderr,
        )
        return 0
    with lock:
        place.write_info(pid=os.getpid(), version=wire.VERSION, socket=str(place.socket))
        asyncio.run(_serve_socket(place, options.idle_exit))
    return 0


def _leave_out_unused_imports() -> None:
    """Before a host's modules load: httpx's command line (rich, click and pygments,
    about 6 MB once a connection loads httpx) is never used here, as in `melgui exec`."""
    from melgui import lean_start

    lean_start.skip_unused_imports()


async def _serve_socket(place: HostPlace, idle_exit: float) -> None:
    # Imported when a host is served: the bridge and --status start in a tenth of a
    # second without them.
    _leave_out_unused_imports()
    from melgui.host.host import Host
    from melgui.host.server import HostServer

    host = Host.open()
    await host.reopen()
    server = HostServer(host, idle_exit=idle_exit)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, server.stop)
    await server.serve_socket(place)


async def _serve_stdio(journal: str | None = None) -> int:
    # Imported when a host is served: the bridge and --status start in a tenth of a
    # second without them.
    _leave_out_unused_imports()
    from pathlib import Path

    from melgui.host.host import Host
    from melgui.host.server import HostServer

    host = Host.open(Path(journal) if journal else None)
    await host.reopen()
    await HostServer(host, idle_exit=None).serve_stdio()
    return 0


async def _ask(place: HostPlace, *, stop: bool) -> int:
    try:
        client = await HostClient.connect(place, client="melgui host --status")
    except OSError:
        print("melgui: no host is running")
        return 0 if not stop else 1
    except VersionRefused as exc:
        print(f"melgui: {exc}", file=sys.stderr)
        return 1
    try:
        if stop:
            await client.call("host/shutdown")
            print(f"melgui: the host (pid {client.info.get('pid')}) is ending")
            return 0
        status = await client.call("host/status")
        print(describe_status(status))
        return 0
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()


def describe_status(status: dict[str, Any], now: float | None = None) -> str:
    """What the host runs, and each question waiting for a person (with or without a
    window attached): what the call would do, why it asks, for how long."""
    now = time.time() if now is None else now
    lines = [f"melgui host {status['version']} (pid {status['pid']}), {status['views']} view(s)"]
    for session in status["sessions"]:
        state = "running" if session["busy"] else "idle"
        waiting = session["approvals"]
        if waiting:
            state += f", {len(waiting)} waiting for approval"
        if session.get("compaction"):
            state += ", waiting for the preview before a compaction"
        lines.append(f"  {session['id']}  {session['folder']}  [{state}]")
        for question in waiting:
            asked = question.get("since") or now
            why = f"; {question['reason']}" if question.get("reason") else ""
            lines.append(
                f"    {question['name']}: {question.get('summary', '')}"
                f"  (waiting {_duration(now - asked)}{why})"
            )
    if not status["sessions"]:
        lines.append("  no sessions")
    for term in status.get("terminals") or []:  # terminal panes' programs, kept here
        code = term.get("exit_code")
        state = "running" if code is None else f"ended ({code})"
        lines.append(f"  terminal {term['term']}  {term['folder']}  {term['title']}  [{state}]")
    if any(s["approvals"] or s.get("compaction") for s in status["sessions"]):
        lines.append("Open melgui on the folder (melgui FOLDER) to answer.")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


# -- the bridge --------------------------------------------------------------------------
# `melgui host --bridge`: one view on stdin/stdout, passed through to the user's host on
# its socket (started first when none runs), byte for byte. This is what a remote folder
# starts over ssh. `--stdio` would serve the view from a host of its own, which ends when
# stdin closes: when the link drops, a call running there would be cut. Through the
# bridge, what runs lives in the user's host, which outlives the ssh session; the next
# connection's bridge reaches the same host, and the view reattaches and hears what it
# missed.

CHUNK = 256 * 1024


async def open_user_host(
    place: HostPlace, *, args: tuple[str, ...] = ()
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The user's host's socket, starting the host first when none answers."""
    with contextlib.suppress(OSError):
        return await asyncio.open_unix_connection(str(place.socket), limit=wire.MAX_LINE)
    start_host(args=args)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT
    while True:
        try:
            return await asyncio.open_unix_connection(str(place.socket), limit=wire.MAX_LINE)
        except OSError:
            if loop.time() > deadline:
                raise OSError(
                    f"the melgui host did not start; see {place.directory / 'host.log'}"
                ) from None
            await asyncio.sleep(0.05)


async def bridge(idle_exit: float | None = None) -> int:
    place = HostPlace.for_user()
    args = ("--idle-exit", str(idle_exit)) if idle_exit is not None else ()
    try:
        host_reader, host_writer = await open_user_host(place, args=args)
    except OSError as exc:
        sys.stderr.write(f"melgui host --bridge: {exc}\n")
        return 1
    loop = asyncio.get_running_loop()
    for fd in (sys.stdin.fileno(), sys.stdout.fileno()):
        wire.widen_pipe(fd)
    stdin = asyncio.StreamReader(limit=wire.MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    out_transport, out_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
    )
    stdout = asyncio.StreamWriter(out_transport, out_protocol, None, loop)
    upward = asyncio.create_task(_pump(stdin, host_writer))
    downward = asyncio.create_task(_pump(host_reader, stdout))
    await asyncio.wait({upward, downward}, return_when=asyncio.FIRST_COMPLETED)
    for task in (upward, downward):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    host_writer.close()
    with contextlib.suppress(Exception):
        await host_writer.wait_closed()
    return 0


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until the reader ends (the view's stdin closed, or the host went away)."""
    with contextlib.suppress(ConnectionError):
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
