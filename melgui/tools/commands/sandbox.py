"""A bubblewrap (`bwrap`) sandbox for run_command on Linux.

Inside: the whole file system read-only, the project (or a worker's worktree) writable,
a private /tmp, no network unless allowed, and melgui's config and data folders, the
keyring's folder and `$XDG_RUNTIME_DIR` (the session bus and keyring sockets) replaced by
empty folders. The session bus address is removed from the environment. With the
network allowed, the host's network namespace is shared, and with it abstract Unix
sockets: the setting says so.

`sandbox_status()` tries bwrap once and says why it cannot be used; nothing claims to be
sandboxed when it is not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from melgui.core.protocol.tools.commands import SandboxStatus
from melgui.core.runtime.processes import forked_here, reset_signals

BUS_VARIABLES = ("DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS")


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """What a sandboxed command may touch."""

    writable: tuple[str, ...]
    hidden: tuple[str, ...] = ()
    network: bool = False

    def describe(self) -> str:
        net = "network allowed" if self.network else "no network"
        return f"sandboxed (bubblewrap): only the project is writable, {net}"


@lru_cache(maxsize=1)
def sandbox_status() -> SandboxStatus:
    """Whether bwrap can run here; tried once per process."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed")
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            preexec_fn=forked_here(reset_signals),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"bubblewrap cannot start: {exc}")
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxStatus(False, "bubblewrap cannot make a sandbox here: " + " ".join(why))
    return SandboxStatus(True, f"bubblewrap at {bwrap}")


def default_hidden(
    env: Mapping[str, str], private: Sequence[str | os.PathLike[str]]
) -> tuple[str, ...]:
    """What a sandbox hides: `private` (melgui's config and data), the keyrings folder and
    the runtime folder with the session bus."""
    home = env.get("HOME", "")
    paths = [str(p) for p in private]
    if home:
        data_home = env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
        paths.append(os.path.join(data_home, "keyrings"))
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        paths.append(runtime)
    return tuple(dict.fromkeys(os.path.realpath(p) for p in paths))


def bwrap_argv(spec: SandboxSpec, cwd: str, command: Sequence[str]) -> list[str]:
    """The argv that runs `command` in the sandbox, starting in `cwd`."""
    bwrap = shutil.which("bwrap") or "bwrap"
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not spec.network:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    writable = [os.path.realpath(p) for p in spec.writable]
    for path in writable:
        argv += ["--bind", path, path]
    for path in spec.hidden:
        if not os.path.isdir(path):
            if os.path.exists(path):
                argv += ["--ro-bind", "/dev/null", path]
            continue
        under_tmp = _within(path, "/tmp")
        if under_tmp and not any(_within(path, w) for w in writable):
            continue  # already gone under the private /tmp
        argv += ["--tmpfs", path]
    for name in BUS_VARIABLES:
        argv += ["--unsetenv", name]
    argv += ["--chdir", cwd, "--", *command]
    return argv


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in BUS_VARIABLES}


def _within(path: str, root: str) -> bool:
    return Path(path) == Path(root) or Path(root) in Path(path).parents
