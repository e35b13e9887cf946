"""Who may talk to the host: the same melgui version, the same user, over the user's own
socket; one host per user; an idle host ends by itself; stdio for a host started as a child."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.host import wire
from melgui.host.client import HostClient, VersionRefused
from melgui.host.place import HostPlace, PlaceError, ensure_private
from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess, host_env, runtime_dir

# A client of another user: connects and prints what it hears (or why it could not).
OTHER_USER_CLIENT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print(json.dumps({"connect": type(exc).__name__})); sys.exit(0)
try:
    s.sendall(b'{"id":1,"method":"initialize","params":{"version":"%s","protocol":1}}\\n')
except OSError:
    pass  # the host may have refused and closed already; its answer is still to read
s.settimeout(20)
data = b""
while not data.endswith(b"\\n"):
    try:
        chunk = s.recv(65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
print(data.decode() or json.dumps({"closed": True}))
"""


async def test_another_version_is_refused_naming_both(host: HostProcess) -> None:
    with pytest.raises(VersionRefused) as refused:
        await HostClient.connect(host.place, client="old window", version="0.0.9")
    message = str(refused.value)
    assert "0.0.9" in message and wire.VERSION in message
    assert "cannot work together" in message


async def test_the_same_version_with_an_older_protocol_is_refused_naming_both(
    host: HostProcess,
) -> None:
    reader, writer = await asyncio.open_unix_connection(str(host.place.socket))
    older = {"version": wire.VERSION, "protocol": wire.PROTOCOL - 1, "client": "window"}
    writer.write(wire.encode(wire.request(1, "initialize", older)))
    answer = json.loads(await reader.readline())
    writer.close()
    await writer.wait_closed()
    assert answer["error"]["code"] == wire.VERSION_MISMATCH
    message = answer["error"]["message"]
    assert f"(protocol {wire.PROTOCOL - 1})" in message
    assert f"(protocol {wire.PROTOCOL})" in message


async def test_requests_before_initialize_are_refused(host: HostProcess) -> None:
    reader, writer = await asyncio.open_unix_connection(str(host.place.socket))
    writer.write(wire.encode(wire.request(1, "session/list")))
    answer = json.loads(await reader.readline())
    assert answer["error"]["code"] == wire.NOT_INITIALIZED
    writer.close()
    await writer.wait_closed()


def _others_may_run(path: Path) -> bool:
    """Every folder above `path` may be entered, and it run, by any user."""
    real = path.resolve()
    return all(p.stat().st_mode & 0o001 for p in (real, *real.parents))


def _python_for_others() -> str:
    for candidate in (Path(sys.executable), Path("/usr/bin/python3")):
        if candidate.exists() and _others_may_run(candidate):
            return str(candidate)
    pytest.skip("no Python interpreter another user may run")


def _as_nobody(socket_path: Path) -> dict[str, object]:
    nobody = pwd.getpwnam("nobody")
    result = subprocess.run(
        [_python_for_others(), "-I", "-c", OTHER_USER_CLIENT % wire.VERSION, str(socket_path)],
        capture_output=True,
        text=True,
        timeout=60,
        user=nobody.pw_uid,
        group=nobody.pw_gid,
        extra_groups=[],
        cwd="/",
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
def test_a_client_of_another_uid_is_refused(host: HostProcess) -> None:
    # The directory alone keeps others out...
    assert _as_nobody(host.place.socket) == {"connect": "PermissionError"}
    # ...and were it opened up, the host still checks who is at the other end.
    os.chmod(host.runtime, 0o755)
    os.chmod(host.place.directory, 0o755)
    os.chmod(host.place.socket, 0o777)
    answer = _as_nobody(host.place.socket)
    error = answer["error"]
    assert isinstance(error, dict) and error["code"] == wire.REFUSED
    assert f"not uid {pwd.getpwnam('nobody').pw_uid}" in error["message"]


def test_the_directory_must_be_private(tmp_path: Path) -> None:
    open_dir = tmp_path / "melgui"
    open_dir.mkdir(mode=0o755)
    os.chmod(open_dir, 0o755)
    with pytest.raises(PlaceError, match="may be entered by others"):
        ensure_private(open_dir)
    link = tmp_path / "link"
    link.symlink_to(open_dir)
    with pytest.raises(PlaceError, match="not a directory"):
        ensure_private(link)
    made = tmp_path / "made"
    ensure_private(made)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_the_place_is_under_xdg_runtime_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.chmod(tmp_path, 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert HostPlace.for_user().directory == tmp_path / "melgui"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert HostPlace.for_user().directory.name == f"melgui-{os.getuid()}"


def test_a_second_host_finds_the_running_one(host: HostProcess) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "melgui", "host"],
        env=host.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert second.returncode == 0
    assert host.process is not None
    assert f"already running (pid {host.process.pid}" in second.stderr
    status = subprocess.run(
        [sys.executable, "-m", "melgui", "--list-running"],
        env=host.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    assert f"(pid {host.process.pid})" in status.stdout and "no sessions" in status.stdout


def test_an_idle_host_ends_by_itself() -> None:
    with runtime_dir() as runtime:
        host = HostProcess(runtime, "--idle-exit", "0.5").start()
        try:
            assert host.wait(timeout=60) == 0
            assert not host.place.socket.exists()
        finally:
            host.stop()


def test_no_host_running_is_said(tmp_path: Path) -> None:
    with runtime_dir() as runtime:
        status = subprocess.run(
            [sys.executable, "-m", "melgui", "--list-running"],
            env=host_env(runtime), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert status.returncode == 0 and "no host is running" in status.stdout


def test_stdio_serves_one_view(scripted_relay: ScriptedRelay, tmp_path: Path) -> None:
    scripted_relay.script([text("Hello over stdio."), done()])
    with runtime_dir() as runtime:
        child = subprocess.Popen(
            [sys.executable, "-m", "melgui", "host", "--stdio"],
            env=host_env(runtime), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert child.stdin is not None and child.stdout is not None

        def call(ident: int, method: str, **params: object) -> dict[str, object]:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(wire.encode(wire.request(ident, method, params)))
            child.stdin.flush()
            while True:
                message = json.loads(child.stdout.readline())
                if message.get("id") == ident:
                    return message
                notes.append(message)

        notes: list[dict[str, object]] = []
        try:
            assert call(1, "initialize", version=wire.VERSION, protocol=wire.PROTOCOL)["result"]
            opened = call(
                2, "session/open", folder=str(tmp_path), model="m1",
                settings={"connection": "relay", "relay_url": scripted_relay.base_url},
            )["result"]  # fmt: skip
            assert isinstance(opened, dict)
            call(3, "session/attach", sessions={opened["id"]: None})
            call(4, "turn/prompt", session=opened["id"], text="hi")
            records: list[dict[str, object]] = []
            while not any(r["type"] == "turn_end" for r in records):
                message = json.loads(child.stdout.readline())
                records.extend(message["params"]["changes"])
            records[:0] = [r for n in notes for r in n["params"]["changes"]]  # type: ignore[index]
            said = streamed_text(records)
            assert said == "Hello over stdio."
            assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
        finally:
            child.stdin.close()
            assert child.wait(timeout=60) == 0
            child.stdout.close()
