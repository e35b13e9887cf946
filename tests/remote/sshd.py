"""A real OpenSSH server on 127.0.0.1 for the remote tests, and the person's side of it.

    with TestSshServer.start(workdir) as server:     # sshd -D on a free port, own config
        server.alias                                  # "melgui-test-<port>": a Host block
        subprocess.run(["ssh", server.alias, "true"]) # as a person's terminal would

The remote machine is a second local user (`melgui-remote`, shell /bin/bash) whose home is
a fresh folder under `workdir`; never root, whose `.bashrc` (pyenv init) can wait a minute.
Its keys are throwaway: a host key and a user key made for this server alone. Two test
runs at once each need a user of their own (`MELGUI_TEST_REMOTE_USER=melgui-remote2`):
a server that stops ends every process of its user, and moves the user's home.

The person's side is configured as a person does it: a clearly marked `Host` block in the
ssh config of the account that runs the tests. ssh reads `~/.ssh/config` from the passwd
entry's home (root: /root), not from `$HOME`, so the block goes there and is taken out
again when the server stops; each change is made under a lock beside the file and put in
place whole, so two runs at once neither lose each other's blocks nor let an ssh read a
half-written file. The block names the key, the port, the user and a
known_hosts file holding the throwaway host key (StrictHostKeyChecking yes: nothing is
accepted silently).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

SSHD = Path("/usr/sbin/sshd")
REMOTE_USER = os.environ.get("MELGUI_TEST_REMOTE_USER") or "melgui-remote"
START_TIMEOUT = 15.0
MARK = "# melgui test sshd"


def ensure_sshd() -> Path:
    """Debian's openssh-server, installed when /usr/sbin/sshd is missing (.ci/run installs
    it on a fresh machine)."""
    if not SSHD.exists():
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "openssh-server"],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
    return SSHD


def end_processes_of(name: str, within: float = 10.0) -> None:
    """Kill every process of the test user `name` (left by a run that was stopped before
    its server stopped) and wait until none is left."""
    deadline = time.monotonic() + within
    while subprocess.run(["pkill", "-9", "-u", name], stdout=subprocess.DEVNULL).returncode == 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes of {name} would not end")
        time.sleep(0.05)


def ensure_user(home: Path, name: str = REMOTE_USER) -> pwd.struct_passwd:
    """The remote machine's user, with `home` as its home (made, owned by it, 0700).

    Its password field is `*` (no password, not locked): with UsePAM off, sshd refuses
    a key to an account whose field starts with `!`, which is what useradd leaves."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/bin/bash", "--home-dir", str(home), name],
            check=True,
        )
    end_processes_of(name)  # a run stopped by hand leaves them, and usermod then refuses
    subprocess.run(
        ["usermod", "--home", str(home), "--shell", "/bin/bash", "--password", "*", name],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    entry = pwd.getpwnam(name)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    home.chmod(0o700)
    return entry


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def keygen(path: Path, comment: str) -> str:
    """A new ed25519 key pair at `path`; returns the public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
    )
    return path.with_name(path.name + ".pub").read_text().strip()


def person_ssh_config() -> Path:
    """The ssh config ssh reads for this account: from the passwd entry's home."""
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".ssh" / "config"


@contextlib.contextmanager
def _config_locked() -> Iterator[Path]:
    """The person's ssh config (its real path), locked against another test run's change:
    an flock on a file beside it, held for the read, the change and the write."""
    config = person_ssh_config()
    config.parent.mkdir(mode=0o700, exist_ok=True)
    config = config.resolve()
    with open(config.with_name(config.name + ".melgui-test.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield config
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _replace(config: Path, text: str) -> None:
    """`config` becomes `text` at once (an ssh reading it sees the old or the new file)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{config.name}.", dir=config.parent)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, config)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def add_host_block(alias: str, lines: list[str]) -> None:
    block = [
        f"{MARK} {alias} >>> (tests/remote/sshd.py; removed when the test ends)",
        f"Host {alias}",
        *(f"    {line}" for line in lines),
        f"{MARK} {alias} <<<",
    ]
    with _config_locked() as config:
        before = config.read_text() if config.exists() else ""
        if before and not before.endswith("\n"):
            before += "\n"
        _replace(config, before + "\n".join(block) + "\n")


def remove_host_block(alias: str) -> None:
    with _config_locked() as config:
        if not config.exists():
            return
        kept, inside = [], False
        for line in config.read_text().splitlines(keepends=True):
            if line.startswith(f"{MARK} {alias} >>>"):
                inside = True
            elif line.startswith(f"{MARK} {alias} <<<"):
                inside = False
            elif not inside:
                kept.append(line)
        _replace(config, "".join(kept))


def user_processes(uid: int) -> list[int]:
    """Pids of the processes of `uid` (what the tests started as the remote user)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                pids.append(int(entry.name))
    return pids


@dataclass
class TestSshServer:
    __test__ = False  # not a test class, for pytest

    workdir: Path
    port: int
    alias: str
    user: pwd.struct_passwd
    process: subprocess.Popen[bytes]
    log: Path
    host_public_key: str
    extra: dict[str, str] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)  # more Host blocks, removed at stop

    @property
    def home(self) -> Path:
        return Path(self.user.pw_dir)

    @classmethod
    def start(cls, workdir: Path) -> TestSshServer:
        ensure_sshd()
        workdir.mkdir(parents=True, exist_ok=True)
        workdir.chmod(0o755)  # the remote user walks through it to its home
        keys = workdir / "keys"
        keys.mkdir(mode=0o700, exist_ok=True)
        user = ensure_user(workdir / "home")
        host_key = keys / "ssh_host_ed25519_key"
        host_public = keygen(host_key, "melgui-test-host")
        user_key = keys / "id_ed25519"
        user_public = keygen(user_key, "melgui-test-user")
        authorized = workdir / "authorized_keys"
        authorized.write_text(user_public + "\n")
        authorized.chmod(0o644)
        port = free_port()
        config = workdir / "sshd_config"
        pid_file = workdir / "sshd.pid"
        config.write_text(
            "\n".join(
                [
                    f"Port {port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"PidFile {pid_file}",
                    f"AuthorizedKeysFile {authorized}",
                    f"AllowUsers {user.pw_name}",
                    "UsePAM no",
                    "StrictModes no",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "PermitRootLogin no",
                    "X11Forwarding no",
                    "PrintMotd no",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        known_hosts = workdir / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_public}\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation
        log = workdir / "sshd.log"
        with log.open("ab") as output:
            process = subprocess.Popen(
                [str(SSHD), "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        alias = f"melgui-test-{port}"
        server = cls(workdir, port, alias, user, process, log, host_public)
        add_host_block(alias, server._block_lines())
        try:
            server._wait_listening()
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd ended: {self.log.read_text()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen on {self.port}: {self.log.read_text()[-2000:]}")

    def alias_through(self, port: int) -> str:
        """A second Host block (removed when the server stops) reaching this sshd through
        127.0.0.1:`port` (a proxy the test owns), with the same keys: `melgui-test-P-via-Q`."""
        known_hosts = self.workdir / "known_hosts"
        with known_hosts.open("a") as kept:
            kept.write(f"[127.0.0.1]:{port} {self.host_public_key}\n")
        return self.alias_with(f"via-{port}", port=port)

    def alias_with(
        self,
        name: str,
        *,
        port: int | None = None,
        known_hosts: Path | None = None,
        strict: str = "yes",
        identity: Path | None = None,
    ) -> str:
        """Another Host block for this sshd, as a person would write one (removed when
        the server stops): `strict` is StrictHostKeyChecking (`ask` is ssh's default)."""
        alias = f"{self.alias}-{name}"
        remove_host_block(alias)
        add_host_block(alias, self._block_lines(port, known_hosts, strict, identity))
        self.aliases.append(alias)
        return alias

    def user_key(self, name: str, passphrase: str) -> Path:
        """Another key of the remote user's, protected by `passphrase`."""
        path = self.workdir / "keys" / name
        if not path.exists():
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", path],
                check=True,
            )
            public = path.with_name(name + ".pub").read_text().strip()
            with (self.workdir / "authorized_keys").open("a") as authorized:
                authorized.write(public + "\n")
        return path

    def _block_lines(
        self,
        port: int | None = None,
        known_hosts: Path | None = None,
        strict: str = "yes",
        identity: Path | None = None,
    ) -> list[str]:
        keys = self.workdir / "keys"
        return [
            "HostName 127.0.0.1",
            f"Port {port or self.port}",
            f"User {self.user.pw_name}",
            f"IdentityFile {identity or keys / 'id_ed25519'}",
            "IdentitiesOnly yes",
            f"UserKnownHostsFile {known_hosts or self.workdir / 'known_hosts'}",
            f"StrictHostKeyChecking {strict}",
        ]

    def ssh(self, *command: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run a command on the remote the way a person's terminal does."""
        return subprocess.run(
            ["ssh", "-T", "-o", "BatchMode=yes", self.alias, *command],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def give(self, path: Path) -> None:
        """Make `path` (and what is under it) the remote user's."""
        for place in [path, *path.rglob("*")]:
            os.chown(place, self.user.pw_uid, self.user.pw_gid, follow_symlinks=False)

    def stop(self) -> None:
        for alias in [self.alias, *self.aliases]:
            remove_host_block(alias)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # Each connection has an sshd child of its own, and the remote user's hosts
        # outlive them: end what runs as the remote user (all started by the tests).
        for pid in user_processes(self.user.pw_uid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def __enter__(self) -> TestSshServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def copy_tree_for(server: TestSshServer, source: Path, target: Path) -> Path:
    """A copy of `source` that the remote user can read (for the code it runs)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for place in [target, *target.rglob("*")]:
        place.chmod(0o755 if place.is_dir() else 0o644)
    return target
