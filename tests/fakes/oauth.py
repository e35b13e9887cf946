"""Helpers for OAuth tests: the guarded MCP server with its authorization server in a
process of their own, and a `$BROWSER` that follows the sign-in's redirects."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melgui.core.runtime.processes import reset_signals
from tests.fakes.mcp import ROOT, free_port


@dataclass(frozen=True)
class GuardedServer:
    url: str  # the MCP endpoint
    issuer: str  # the authorization server

    def events(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(self.issuer + "/test/events", timeout=10) as answer:
            found: list[dict[str, Any]] = json.loads(answer.read())
        return found

    def expire_tokens(self) -> None:
        """Every access token it issued runs out now, as time would make it."""
        request = urllib.request.Request(self.issuer + "/test/expire", method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()

    def kinds(self) -> list[str]:
        return [e["type"] if e["kind"] == "grant" else e["kind"] for e in self.events()]


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if process.poll() is not None:
            raise RuntimeError("the fake OAuth server exited")
        time.sleep(0.05)
    raise RuntimeError("the fake OAuth server did not listen")


@contextlib.contextmanager
def guarded_server(*extra: str) -> Iterator[GuardedServer]:
    as_port, rs_port = free_port(), free_port()
    # What the server said goes to a file, shown with any failure: a test that once found
    # it gone mid-test (connection refused, under load) said nothing of why.
    with tempfile.TemporaryFile() as said:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.oauth_server", "--as-port", str(as_port),
             "--rs-port", str(rs_port), *extra],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=said,
            stderr=subprocess.STDOUT,
            preexec_fn=reset_signals,
        )  # fmt: skip
        try:
            _wait_for(as_port, process)
            _wait_for(rs_port, process)
            yield GuardedServer(f"http://127.0.0.1:{rs_port}/mcp", f"http://127.0.0.1:{as_port}")
        except BaseException as exc:
            said.seek(0)
            text = said.read().decode(errors="replace")[-4000:]
            exc.add_note(f"the fake OAuth server (exit code {process.poll()}) said:\n{text}")
            raise
        finally:
            process.terminate()
            process.wait(10)


def browser_env(folder: Path) -> tuple[dict[str, str], Path]:
    """`$BROWSER` set to the stand-in (webbrowser runs it as one program, so a script), and
    the file it logs each address it opened to."""
    script = folder / "browser"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m tests.fakes.browser "$@"\n',
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    log = folder / "browser.log"
    return {"BROWSER": str(script), "MELGUI_TEST_BROWSER_LOG": str(log)}, log


def opened(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
