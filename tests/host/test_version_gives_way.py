"""An upgrade's first window: a host of another version that runs nothing ends and the
window starts a host of its own version; one that still serves a view is left running
and the window is refused, naming both versions."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.host import wire
from melgui.host.client import HostClient, VersionRefused
from melgui.host.place import HostPlace
from tests.fakes.host_process import host_env, runtime_dir

OLD = "0.0.9"
# `melgui host` as another version would run it: the same code, saying another version.
OLD_HOST = f"""
import sys
from melgui.host import wire
wire.VERSION = {OLD!r}
from melgui.host.main import main
sys.exit(main([]))
"""


@pytest.fixture
def runtime() -> Iterator[Path]:
    with runtime_dir() as path:
        yield path


def start_old_host(runtime: Path) -> subprocess.Popen[bytes]:
    place = HostPlace(runtime / "melgui")
    process = subprocess.Popen(
        [sys.executable, "-c", OLD_HOST], env=host_env(runtime),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    while place.read_info().get("version") != OLD or not place.socket.exists():
        assert process.poll() is None, "the old host did not start"
        time.sleep(0.02)
    return process


async def answering(place: HostPlace, version: str) -> HostClient:
    """A client of `version`, once the host's socket takes connections."""
    while True:
        try:
            return await HostClient.connect(place, client="old window", version=version)
        except OSError:
            await asyncio.sleep(0.02)


async def test_an_idle_host_of_another_version_gives_way_to_a_window(runtime: Path) -> None:
    old = start_old_host(runtime)
    place = HostPlace(runtime / "melgui")
    try:
        await (await answering(place, OLD)).aclose()
        client = await HostClient.attach_or_start(place, client="window", env=host_env(runtime))
        try:
            assert client.info["version"] == wire.VERSION
            assert old.wait(timeout=20) == 0  # it ended by itself, not killed
            assert client.info["pid"] != old.pid
        finally:
            await client.call("host/shutdown")
            await client.aclose()
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()


async def test_a_host_of_another_version_serving_a_view_refuses_and_stays(
    runtime: Path,
) -> None:
    old = start_old_host(runtime)
    place = HostPlace(runtime / "melgui")
    viewing = await answering(place, OLD)  # a window of that version, still open
    try:
        with pytest.raises(VersionRefused) as refused:
            await HostClient.attach_or_start(place, client="window", env=host_env(runtime))
        assert not refused.value.gives_way
        assert OLD in str(refused.value) and wire.VERSION in str(refused.value)
        assert old.poll() is None
        assert (await viewing.call("host/status"))["version"] == OLD
    finally:
        await viewing.aclose()
        old.kill()
        old.wait()


async def test_status_of_another_version_leaves_an_idle_host_running(runtime: Path) -> None:
    old = start_old_host(runtime)
    place = HostPlace(runtime / "melgui")
    try:
        await (await answering(place, OLD)).aclose()
        with pytest.raises(VersionRefused) as refused:
            await HostClient.connect(place, client="melgui host --status")
        assert not refused.value.gives_way
        assert old.poll() is None
    finally:
        old.kill()
        old.wait()
