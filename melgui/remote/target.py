"""Where a remote folder is, and the argv that reaches it.

    target = parse_folder("ssh://me@build:2222/srv/project")
    target.path                                   # "/srv/project"
    target.argv(["python3", "-m", "melgui", "host", "--bridge"])
    # ["ssh", "-T", "-o", "ServerAliveInterval=2", ..., "-p", "2222", "-l", "me", "--",
    #  "build", "python3 -m melgui host --bridge"]

    box = command_target("docker exec -i devbox", "/work")     # any argv giving a shell
    box.argv(["python3", "-m", "melgui", "host", "--bridge"])
    # ["docker", "exec", "-i", "devbox", "python3", "-m", "melgui", "host", "--bridge"]

ssh is the system's OpenSSH client, so the person's ~/.ssh/config, agent, ProxyJump,
ControlMaster and known_hosts apply as in their terminal. `-T`: no terminal on the remote
(the link is a byte pipe). Host keys are never accepted silently: no
StrictHostKeyChecking option is given, so the person's own setting (ssh's default: ask)
holds. `BatchMode=yes` only on reconnects, when nobody is there to answer a prompt; the
first connection may ask (for a passphrase, an unknown host key) on the person's terminal.

ssh hands its command to the remote login shell as one string. The remote argv is quoted
for a POSIX shell, and melgui's own argv contains nothing the other shells (csh, fish)
read differently: plain words, no `$`, `!`, globs or redirections.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote, urlsplit

# Heartbeats at ssh's own level too: a dead TCP link ends the ssh process within seconds.
ALIVE = ("-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3")
CONNECT_TIMEOUT = ("-o", "ConnectTimeout=15")
_HOST = re.compile(r"^[A-Za-z0-9._\-\[\]:%]+$")


class TargetError(ValueError):
    """A folder text that names no remote folder melgui can reach."""


class Target(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def label(self) -> str:
        """How the person names the machine ("me@build", "docker exec -i devbox")."""
        ...

    def argv(self, remote: list[str], *, batch: bool = False) -> list[str]:
        """The local argv whose stdio is the remote `remote` argv's stdio."""
        ...


@dataclass(frozen=True, slots=True)
class SshTarget:
    host: str
    path: str
    user: str | None = None
    port: int | None = None
    ssh: str = "ssh"

    @property
    def label(self) -> str:
        place = f"{self.user}@{self.host}" if self.user else self.host
        return f"{place}:{self.port}" if self.port else place

    @property
    def url(self) -> str:
        place = f"{self.user}@{self.host}" if self.user else self.host
        return f"ssh://{place}{f':{self.port}' if self.port else ''}{self.path}"

    def argv(self, remote: list[str], *, batch: bool = False) -> list[str]:
        argv = [self.ssh, "-T", *ALIVE, *CONNECT_TIMEOUT]
        if batch:
            argv += ["-o", "BatchMode=yes"]
        if self.port is not None:
            argv += ["-p", str(self.port)]
        if self.user is not None:
            argv += ["-l", self.user]
        return [*argv, "--", self.host, shlex.join(remote)]


@dataclass(frozen=True, slots=True)
class CommandTarget:
    """Any command that runs an argv on the target with its stdio: `docker exec -i box`,
    `podman exec -i box`, `kubectl exec -i pod --`, a devcontainer's exec."""

    prefix: tuple[str, ...]
    path: str

    @property
    def label(self) -> str:
        return shlex.join(self.prefix)

    def argv(self, remote: list[str], *, batch: bool = False) -> list[str]:
        return [*self.prefix, *remote]


def is_remote_folder(text: str) -> bool:
    return text.startswith("ssh://")


def parse_folder(text: str) -> SshTarget:
    """`ssh://[user@]host[:port]/abs/path` (the form scripts use; kept as it is)."""
    if not is_remote_folder(text):
        raise TargetError(f"{text!r} is not an ssh://[user@]host[:port]/abs/path folder")
    parts = urlsplit(text)
    host = parts.hostname or ""
    if not host or not _HOST.match(host) or host.startswith("-"):
        raise TargetError(f"{text!r} names no host (ssh://[user@]host[:port]/abs/path)")
    try:
        port = parts.port
    except ValueError:
        raise TargetError(f"{text!r}: the port is not a number from 1 to 65535") from None
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise TargetError(f"{text!r}: the folder must be an absolute path (ssh://host/abs/path)")
    user = unquote(parts.username) if parts.username else None
    if user is not None and (not user or user.startswith("-")):
        raise TargetError(f"{text!r}: {user!r} is not a user name")
    if parts.password is not None:
        raise TargetError(f"{text!r}: no password in the URL; ssh asks for it, or uses a key")
    return SshTarget(host, path.rstrip("/") or "/", user, port)


def command_target(command: str, path: str) -> CommandTarget:
    """A folder reached through a command (`docker exec -i devbox`), at absolute `path`."""
    prefix = tuple(shlex.split(command))
    if not prefix:
        raise TargetError("the command that reaches the target is empty")
    if not path.startswith("/"):
        raise TargetError(f"{path!r}: the folder must be an absolute path on the target")
    return CommandTarget(prefix, path.rstrip("/") or "/")


def host_argv(python: str = "python3", env: dict[str, str] | None = None) -> list[str]:
    """The remote argv that starts melgui's host bridge (until the offline install says
    where melgui lives there): `env K=V … python3 -m melgui host --bridge`."""
    pairs = [f"{name}={value}" for name, value in (env or {}).items()]
    return [*(["env", *pairs] if pairs else []), python, "-m", "melgui", "host", "--bridge"]


def target_for(folder: str, via: str | None) -> Target | None:
    """The remote target of a folder argument; None for a folder on this machine."""
    if via:
        return command_target(via, folder)
    if is_remote_folder(folder):
        return parse_folder(folder)
    return None
