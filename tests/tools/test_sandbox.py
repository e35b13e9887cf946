"""run_command in the bubblewrap sandbox, against real processes.

These tests skip only where unprivileged user namespaces are off (`unshare -Ur true`
fails): there bwrap cannot work. Where they are on, a missing bwrap fails the tests.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.core.runtime.processes import reset_signals
from melgui.tools.commands.run_command import RUN_COMMAND_TOOL
from melgui.tools.commands.sandbox import SandboxSpec, bwrap_argv, default_hidden, sandbox_status
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


def _namespaces_work() -> bool:
    try:
        done = subprocess.run(
            ["unshare", "-Ur", "true"], capture_output=True, timeout=10, preexec_fn=reset_signals
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


needs_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="unprivileged user namespaces are off (unshare -Ur fails)"
)


@pytest.fixture
def runtime(project: Path) -> Iterator[Path]:
    """A runtime folder with a listening session-bus socket (inside the project, so only
    the sandbox's own hiding can keep it out of reach)."""
    folder = project / "run"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(folder / "bus"))
    server.listen(1)
    yield folder
    server.close()


@pytest.fixture
def sandboxed(project: Path, runtime: Path) -> ToolSettings:
    keys = project / ".config" / "melgui"
    keys.mkdir(parents=True)
    (keys / "api-keys.json").write_text('{"relay": "sk-secret"}')
    env = {"HOME": str(project / "home"), "XDG_RUNTIME_DIR": str(runtime)}
    return ToolSettings(sandbox_commands=True, sandbox_hidden=default_hidden(env, (keys,)))


async def run(workspace: Workspace, settings: ToolSettings, command: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SHELL": "/bin/bash",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
    }
    outcome = await RUN_COMMAND_TOOL.run(
        ToolContext(workspace, settings, environment=env), {"command": command}
    )
    return outcome.content


@needs_namespaces
def test_bwrap_is_usable_where_namespaces_work() -> None:
    assert sandbox_status().available, sandbox_status().message


@needs_namespaces
async def test_writes_inside_the_project_succeed_and_the_result_says_sandboxed(
    workspace: Workspace, sandboxed: ToolSettings, project: Path
) -> None:
    out = await run(workspace, sandboxed, "echo made > inside.txt && cat inside.txt")
    assert out.startswith("exit_code=0\nmade")
    assert "sandboxed (bubblewrap)" in out and "no network" in out
    assert (project / "inside.txt").read_text() == "made\n"


@needs_namespaces
async def test_writes_outside_the_project_fail(
    workspace: Workspace, sandboxed: ToolSettings, outside: Path
) -> None:
    home = Path.home() / f".melgui-sandbox-probe-{os.getpid()}"
    out = await run(workspace, sandboxed, f"echo x > {home}")
    assert out.startswith("exit_code=1") and "Read-only file system" in out
    assert not home.exists()
    out = await run(workspace, sandboxed, f"echo x > {outside}/new.txt; ls {outside}")
    assert not (outside / "new.txt").exists()  # /tmp is the sandbox's own
    out = await run(workspace, sandboxed, f"rm -f {outside}/secret.txt")
    assert (outside / "secret.txt").read_text() == "top secret\n"


@needs_namespaces
async def test_network_is_refused_unless_allowed(
    workspace: Workspace, sandboxed: ToolSettings
) -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        refused = await run(workspace, sandboxed, probe)
        assert "connected" not in refused and not refused.startswith("exit_code=0")
        allowed = ToolSettings(
            sandbox_commands=True, sandbox_network=True, sandbox_hidden=sandboxed.sandbox_hidden
        )
        out = await run(workspace, allowed, probe)
        assert out.startswith("exit_code=0\nconnected") and "network allowed" in out
    finally:
        server.close()
        await server.wait_closed()


@needs_namespaces
async def test_keys_and_the_session_bus_are_out_of_reach(
    workspace: Workspace, sandboxed: ToolSettings, project: Path, runtime: Path
) -> None:
    keys = project / ".config" / "melgui" / "api-keys.json"
    out = await run(workspace, sandboxed, f"cat {keys}")
    assert "sk-secret" not in out and "No such file" in out
    out = await run(workspace, sandboxed, f"test -S {runtime}/bus && echo bus; ls -A {runtime}")
    assert "bus" not in out.split("\n", 1)[1].split("[sandboxed")[0]
    out = await run(workspace, sandboxed, 'echo "bus=${DBUS_SESSION_BUS_ADDRESS:-unset}"')
    assert "bus=unset" in out
    # outside the sandbox both are there (the test would prove nothing otherwise)
    assert keys.exists() and (runtime / "bus").is_socket()


def test_the_argv_hides_private_folders_and_binds_the_project(tmp_path: Path) -> None:
    private = Path.home() / ".config" / "melgui-never-created"
    hidden = default_hidden({"HOME": str(Path.home()), "XDG_RUNTIME_DIR": "/run/user/1"}, ())
    spec = SandboxSpec(("/srv/p",), (*hidden, str(Path.home())), network=False)
    argv = bwrap_argv(spec, "/srv/p", ["/bin/sh", "-c", "ls"])
    assert argv[-4:] == ["--", "/bin/sh", "-c", "ls"]
    bind = argv.index("--bind")
    assert "--unshare-net" in argv and argv[bind : bind + 3] == ["--bind", "/srv/p", "/srv/p"]
    assert argv[argv.index("--tmpfs", argv.index("--bind")) + 1] == str(Path.home())
    assert str(private) not in argv  # what does not exist needs no hiding
    assert "DBUS_SESSION_BUS_ADDRESS" in argv


async def test_an_unusable_sandbox_refuses_instead_of_pretending(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox_status.cache_clear()
    try:
        with pytest.raises(ToolError, match="sandbox is on but cannot be used"):
            await RUN_COMMAND_TOOL.run(
                ToolContext(workspace, ToolSettings(sandbox_commands=True), environment={}),
                {"command": "true"},
            )
    finally:
        sandbox_status.cache_clear()


@needs_namespaces
async def test_a_timeout_ends_everything_the_sandboxed_command_started(
    workspace: Workspace, sandboxed: ToolSettings, project: Path
) -> None:
    settings = ToolSettings(
        sandbox_commands=True, sandbox_hidden=sandboxed.sandbox_hidden, command_timeout=1.0
    )
    outcome = await RUN_COMMAND_TOOL.run(
        ToolContext(
            workspace,
            settings,
            environment={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SHELL": "/bin/sh"},
        ),
        {"command": "(sleep 60; echo late > late.txt) & sleep 60"},
    )
    assert outcome.status == "error" and "Timed out after 1 s" in outcome.content
    await asyncio.sleep(0.2)
    processes = subprocess.run(
        ["pgrep", "-f", "echo late > late.txt"], capture_output=True, preexec_fn=reset_signals
    )
    assert processes.stdout.strip() == b""
    assert not (project / "late.txt").exists()
