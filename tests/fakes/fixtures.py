"""Pytest fixtures: a started scripted server per test, checked on teardown; a history
store per test; a real `melgui host` process per test.

Registered from tests/conftest.py (`pytest_plugins = ["tests.fakes.fixtures"]`).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from melgui.core.store import Store, open_store
from tests.fakes.host_process import HostProcess, running_host
from tests.fakes.scripted_server import ScriptedOpenAI, ScriptedRelay


@pytest.fixture
def scripted_relay() -> Iterator[ScriptedRelay]:
    """A Mel relay with an empty script: call `.script(...)` / `.on(...)`, use `.base_url`."""
    server = ScriptedRelay()
    with server:
        yield server
    server.check()


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """An OpenAI-compatible server with an empty script; `.base_url` ends in /v1."""
    server = ScriptedOpenAI()
    with server:
        yield server
    server.check()


@pytest.fixture
def store_clock() -> Callable[[], float]:
    """The clock of the `store` fixture: real time. A module that checks times overrides
    this fixture with a tests.fakes.clocks.FakeClock."""
    return time.time


@pytest.fixture
def store(tmp_path: Path, store_clock: Callable[[], float]) -> Iterator[Store]:
    """This test's own history database (in tmp_path/data), opened as the app opens it."""
    opened = open_store(tmp_path / "data", clock=store_clock)
    yield opened
    opened.close()


@pytest.fixture
def host_environ() -> dict[str, str]:
    """What the `host` fixture's process has in its environment besides the test's own
    (a module that needs more overrides this fixture)."""
    return {}


@pytest.fixture
def host(host_environ: dict[str, str]) -> Iterator[HostProcess]:
    """A real `melgui host` process in a runtime directory of its own, stopped after the
    test."""
    with running_host(env=host_environ) as process:
        yield process


HOSTILE_IGNORED = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP)
HOSTILE_BLOCKED = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGUSR1})


@pytest.fixture
def hostile_parent() -> Iterator[None]:
    """This process as a launcher may leave it: signals ignored and some blocked.

    A background job of a non-interactive shell starts with SIGINT and SIGQUIT ignored;
    some launchers ignore SIGTERM or SIGHUP, or block signals. Every child melgui starts
    must not inherit any of it. Restored after the test.
    """
    previous = {number: signal.getsignal(number) for number in HOSTILE_IGNORED}
    for number in HOSTILE_IGNORED:
        signal.signal(number, signal.SIG_IGN)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HOSTILE_BLOCKED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for number, handler in previous.items():
            signal.signal(number, handler)
