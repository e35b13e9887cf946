"""The window tests over the real sshd share `remote_window`: a real main window on a
remote folder there (its stand-in folder here), closed with its links when the test ends;
and `window_there`: that window on a fresh folder whose host says `loop_there`. The sshd
itself is the session's (tests/remote/fixtures.py)."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost, Settings
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.panes.remote.remote_side import stand_in_for
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.fakes import ScriptedRelay
from tests.fakes.window import relay_settings
from tests.remote.fixtures import Remote, url


@pytest.fixture
def remote_window(
    qloop: asyncio.AbstractEventLoop, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """`remote_window(url, settings)`: the window on `url`, shown."""
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(remote.host_argv))
    windows: list[MainWindow] = []

    def make(url: str, settings: Settings) -> MainWindow:
        window = build_main_window(stand_in_for(url), settings, api_key="k", persist_settings=False)
        window.remote.open_folder(url)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        qloop.run_until_complete(asyncio.wait_for(window.aclose(), 60))
        window.guard.allow()
        window.close()
        window.deleteLater()


def loop_there(remote: Remote, folder: Path, **settings: Any) -> list[RemoteHost]:
    """The configured host the folder is on, with `loop_there` (as a person writes it)."""
    target = f"ssh://{remote.server.alias}{folder}"
    return [RemoteHost(name="build", target=target, loop_there=True, **settings)]


@dataclass(frozen=True)
class There:
    """A folder there whose host says `loop_there`, its URL, the window's settings for
    it (on the test's scripted relay), and the window on it."""

    folder: Path
    url: str
    settings: Settings
    window: Any  # a MainWindow, as `remote_window` gives it


WindowThere = Callable[..., There]  # the `window_there` fixture


@pytest.fixture
def window_there(scripted_relay: ScriptedRelay, remote: Remote, remote_window: Any) -> WindowThere:
    """`window_there(name, files, **settings)`: a fresh folder `name` there holding
    `files`, whose host says `loop_there`, and the real window on it, shown (`settings`:
    more of the window's settings)."""

    def make(name: str, files: dict[str, str] | None = None, **settings: Any) -> There:
        folder = remote.folder(name, files or {})
        hosts = loop_there(remote, folder)
        chosen = relay_settings(scripted_relay, hosts=hosts, **settings)
        address = url(remote, folder)
        return There(folder, address, chosen, remote_window(address, chosen))

    return make
