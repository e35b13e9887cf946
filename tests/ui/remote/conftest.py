"""The window tests over the real sshd share `remote_window`: a real main window on a
remote folder there (its stand-in folder here), closed with its links when the test ends.
The sshd itself is the session's (tests/remote/fixtures.py)."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterator
from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.panes.remote.remote_side import stand_in_for
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.remote.fixtures import Remote


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
