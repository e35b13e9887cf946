"""Where the host listens: a Unix socket in a directory only the user can enter, one host
per user (a lock held for the host's life), and the peer's uid checked on every connection.

    place = HostPlace.for_user()         # $XDG_RUNTIME_DIR/melgui, else /tmp/melgui-UID
    place.socket                         # .../host.sock
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


class PlaceError(Exception):
    """The host's directory cannot be trusted or made (said in one line)."""


@dataclass(frozen=True)
class HostPlace:
    directory: Path

    @classmethod
    def for_user(cls) -> HostPlace:
        """$XDG_RUNTIME_DIR/melgui when that is the user's own directory, else a per-user
        directory in the system's temporary folder; made 0700, refused when it is not
        the user's own or others may enter it."""
        base = os.environ.get("XDG_RUNTIME_DIR", "")
        uid = os.getuid()
        if base and _owned_directory(Path(base), uid):
            directory = Path(base) / "melgui"
        else:
            directory = Path(tempfile.gettempdir()) / f"melgui-{uid}"
        ensure_private(directory)
        return cls(directory)

    @property
    def socket(self) -> Path:
        return self.directory / "host.sock"

    @property
    def lock(self) -> Path:
        return self.directory / "host.lock"

    @property
    def info(self) -> Path:
        return self.directory / "host.json"

    def hold_lock(self) -> IO[str] | None:
        """The one-host-per-user lock, held while the returned file stays open; None when
        another host holds it."""
        import fcntl  # not on Windows, where no host listens on a socket yet

        handle = open(self.lock, "a+")  # noqa: SIM115 - held for the host's life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        return handle

    def write_info(self, **fields: Any) -> None:
        temporary = self.info.with_suffix(".tmp")
        temporary.write_text(json.dumps(fields))
        os.replace(temporary, self.info)

    def read_info(self) -> dict[str, Any]:
        """What the running host wrote about itself (pid, version); {} when none."""
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.info.read_text())
            if isinstance(data, dict):
                return data
        return {}


def _owned_directory(path: Path, uid: int) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == uid


def ensure_private(directory: Path) -> None:
    """Make `directory` (0700) or check the one there: a real directory of this user
    that nobody else may enter."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=False)
    try:
        info = directory.lstat()
    except OSError as exc:
        raise PlaceError(f"cannot make the host's directory {directory}: {exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise PlaceError(f"{directory} is not a directory (a link or a file): refused")
    if info.st_uid != os.getuid():
        raise PlaceError(f"{directory} belongs to uid {info.st_uid}, not to you: refused")
    if info.st_mode & 0o077:
        raise PlaceError(
            f"{directory} may be entered by others (mode {stat.S_IMODE(info.st_mode):o}); "
            "make it 0700 or remove it"
        )


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED on Linux,
    LOCAL_PEERCRED elsewhere)."""
    if hasattr(socket, "SO_PEERCRED"):
        raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        return int(uid)
    local_peercred = 0x001  # macOS and the BSDs: struct xucred, cr_uid after cr_version
    raw = connection.getsockopt(0, local_peercred, struct.calcsize("2I"))
    return int(struct.unpack("2I", raw)[1])
