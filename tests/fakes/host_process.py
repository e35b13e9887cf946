"""`melgui host` as a real process for tests, in a runtime directory of the test's own;
a view process (tests/fakes/host_view.py) that can be killed mid-turn; and a window
process (tests/fakes/host_window_*.py) that starts its own host there."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from melgui.core.config.settings import Settings, save_settings
from melgui.host.client import HostClient
from melgui.host.place import HostPlace
from tests.fakes.scripted_server import ScriptedRelay
from tests.fakes.session_bus import NotificationBus

ROOT = Path(__file__).resolve().parents[2]
KEY = "k-host"


def host_env(runtime: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "XDG_RUNTIME_DIR": str(runtime),
            "MELIAI_API_KEY": KEY}  # fmt: skip


class HostProcess:
    """One `melgui host`; `place` is where it listens. Stop it with stop() or kill()."""

    def __init__(self, runtime: Path, *args: str) -> None:
        self.runtime = runtime
        self.args = args
        self.env = host_env(runtime)
        runtime.mkdir(mode=0o700, exist_ok=True)
        self.place = HostPlace(runtime / "melgui")
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log = runtime / "host.log"

    def start(self, timeout: float = 30.0) -> HostProcess:
        self.starts += 1
        self.log = self.runtime / f"host-{self.starts}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "melgui", "host", *self.args],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()  # never left running: a Popen collected later fails another test
                raise AssertionError(f"the host did not start: {self.stderr()}")
            time.sleep(0.02)
        return self

    def _answers(self) -> bool:
        """The socket takes connections (a killed host's socket file stays behind)."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(self.place.socket))
        except OSError:
            return False
        finally:
            probe.close()
        return True

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    async def client(self, name: str = "test view") -> HostClient:
        return await HostClient.connect(self.place, client=name)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def wait(self, timeout: float = 60.0) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@contextlib.contextmanager
def runtime_dir() -> Iterator[Path]:
    """A short private directory (a Unix socket's path has at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="mh-"))
    os.chmod(path, 0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def host_on_bus() -> Iterator[tuple[HostProcess, NotificationBus]]:
    """A host process speaking to a session bus of its own, whose notification server
    records what it is told (`bus.calls()`); both end with the block."""
    bus = NotificationBus().start()
    try:
        with runtime_dir() as runtime:
            host = HostProcess(runtime)
            host.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            host.start()
            try:
                yield host, bus
            finally:
                host.stop()
    finally:
        bus.close()


@contextlib.contextmanager
def running_host(*args: str, env: dict[str, str] | None = None) -> Iterator[HostProcess]:
    """A `melgui host` (with `args`, and `env` added to its environment) started in a
    runtime directory of its own, and stopped when the block ends."""
    with runtime_dir() as runtime:
        process = HostProcess(runtime, *args)
        process.env.update(env or {})
        process.start()
        try:
            yield process
        finally:
            process.stop()


class ViewProcess:
    """tests/fakes/host_view.py: opens a session, prompts, prints each change as a line."""

    def __init__(self, host: HostProcess, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.host_view", str(host.place.directory), *args],
            env=host.env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        self._out: IO[bytes] = self.process.stdout
        self.lines: list[dict[str, Any]] = []

    def read_until(self, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
        """Read lines until one matches (the view prints at once and flushes)."""
        while True:
            line = self._out.readline()
            if not line:
                assert self.process.stderr is not None
                raise AssertionError(f"the view ended: {self.process.stderr.read().decode()}")
            data = json.loads(line)
            self.lines.append(data)
            if predicate(data):
                return data

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self._out.close()
        if self.process.stderr is not None:
            self.process.stderr.close()


@contextlib.contextmanager
def window_process(
    relay: ScriptedRelay, module: str, *args: str
) -> Iterator[tuple[subprocess.Popen[str], HostPlace]]:
    """`python -m MODULE ARGS` (tests/fakes/host_window_*.py: the real app, offscreen, as
    the view of a host it starts), its settings on `relay`, in a runtime directory of its
    own; and the place its host listens at. Killed at the end if it still runs, and its
    host stopped."""
    save_settings(
        Settings(connection="relay", relay_url=relay.base_url, model="m1"),
        Path(os.environ["MELGUI_CONFIG_DIR"]) / "settings.json",
    )
    with runtime_dir() as runtime:
        window = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT, env={**host_env(runtime), "QT_QPA_PLATFORM": "offscreen"},
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            text=True,
        )  # fmt: skip
        place = HostPlace(runtime / "melgui")
        try:
            yield window, place
        finally:
            if window.poll() is None:
                window.kill()
            stop_detached(place)


def stop_detached(place: HostPlace) -> None:
    """The window started the host detached: end it by its pid."""
    pid = place.read_info().get("pid")
    if isinstance(pid, int):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        for _ in range(600):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            threading.Event().wait(0.05)
        os.kill(pid, signal.SIGKILL)
