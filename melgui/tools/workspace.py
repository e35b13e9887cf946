"""The project folder and the one confinement rule every file tool goes through.

A path from the model is resolved to its real path (symlinks followed) and compared
with the project root component by component. Anything that lands outside, or that is
not what the tool expects (a FIFO, a device, a folder), is refused with a one-line
message the model can act on, before anything is touched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from melgui.core.protocol.tooling import ToolError

_PROTECTED_DIR_NAMES = frozenset({".git"})


class Workspace:
    """A project folder; every path a tool uses is resolved through it."""

    def __init__(
        self, root: str | os.PathLike[str], *, config_dir: str | os.PathLike[str] | None = None
    ) -> None:
        real = Path(os.path.realpath(root))
        if not real.is_dir():
            raise ValueError(f"project folder {str(root)!r} is not a folder")
        self.root = real
        self.config_dir = Path(os.path.realpath(config_dir)) if config_dir is not None else None

    def display(self, path: Path) -> str:
        """The path as the model sees it: relative to the root, forward slashes."""
        if path == self.root:
            return "."
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _resolve(self, raw: str, argument: str) -> Path:
        if not isinstance(raw, str):
            raise ToolError(f"Argument {argument!r} must be a string.")
        if "\x00" in raw:
            raise ToolError(f"Refused: {argument!r} contains a NUL byte.")
        if raw.strip() == "":
            raise ToolError(f"Argument {argument!r} is empty.")
        candidate = Path(raw) if os.path.isabs(raw) else self.root / raw
        try:
            # strict=False resolves the existing prefix (symlinks included) and keeps a
            # not-yet-existing tail as written, so `..` in it is applied lexically.
            resolved = Path(os.path.realpath(candidate))
        except (OSError, ValueError) as exc:
            raise ToolError(f"Refused: cannot resolve {raw!r} ({exc}).") from None
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise ToolError(
                f"Refused: {raw!r} resolves outside the project folder ({self.root}); "
                "use a path inside it."
            )
        # realpath gives up on a symlink loop and returns a path that is still a link.
        if os.path.islink(resolved):
            raise ToolError(f"Refused: {raw!r} is a symlink loop.")
        return resolved

    def _existing(self, raw: str, argument: str, noun: str) -> tuple[Path, os.stat_result]:
        """An existing path inside the project and its stat; `noun` names what was asked."""
        resolved = self._resolve(raw, argument)
        try:
            return resolved, os.stat(resolved)
        except FileNotFoundError:
            raise ToolError(f"No such {noun}: {raw!r}.") from None
        except OSError as exc:
            raise ToolError(f"Cannot access {raw!r}: {exc.strerror or exc}.") from None

    def existing_file(self, raw: str, argument: str = "path") -> Path:
        """A regular file inside the project, for reading."""
        resolved, info = self._existing(raw, argument, "file")
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{raw!r} is a folder, not a file; use list_dir.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"Refused: {raw!r} is not a regular file ({_kind(info.st_mode)}).")
        return resolved

    def existing_dir(self, raw: str, argument: str = "path") -> Path:
        """A folder inside the project (the root included), for listing."""
        resolved, info = self._existing(raw, argument, "folder")
        if not stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{raw!r} is not a folder.")
        return resolved

    def writable_file(self, raw: str, argument: str = "path") -> Path:
        """A path inside the project where a regular file may be written (it may not exist)."""
        resolved = self._resolve(raw, argument)
        if resolved == self.root:
            raise ToolError(f"Refused: {raw!r} is the project folder itself, not a file.")
        parts = resolved.relative_to(self.root).parts
        if _PROTECTED_DIR_NAMES.intersection(parts):
            raise ToolError(f"Refused: {raw!r} is inside .git/; melgui never writes there.")
        if self.config_dir is not None and (
            resolved == self.config_dir or resolved.is_relative_to(self.config_dir)
        ):
            raise ToolError(f"Refused: {raw!r} is inside melgui's own configuration folder.")
        # A parent that exists as a file makes the path impossible; say so up front.
        for parent in resolved.parents:
            if parent == self.root or not parent.is_relative_to(self.root):
                break
            if parent.exists() and not parent.is_dir():
                raise ToolError(f"Cannot write {raw!r}: {self.display(parent)!r} is not a folder.")
        try:
            info = os.stat(resolved)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise ToolError(f"Cannot access {raw!r}: {exc.strerror or exc}.") from None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                raise ToolError(f"Refused: {raw!r} is a folder, not a file.")
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"Refused: {raw!r} is not a regular file ({_kind(info.st_mode)}).")
        return resolved


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def open_for_write(path: Path) -> int:
    """Open a resolved path for writing without following a symlink swapped in since."""
    # O_NONBLOCK: a FIFO swapped in fails at once instead of waiting for a reader.
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    return os.open(path, flags, 0o666)


def write_bytes_confined(workspace: Workspace, path: Path, data: bytes) -> bool:
    """Create parent folders and write `data`; True when the file is new.

    `path` must come from `workspace.writable_file`. Folders are re-checked as they are
    made so a symlink planted in between cannot carry the write outside.
    """
    created = not path.exists()
    parent = path.parent
    missing: list[Path] = []
    while not parent.exists():
        if parent == workspace.root or not parent.is_relative_to(workspace.root):
            raise ToolError(f"The project folder {workspace.root} no longer exists.")
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        os.mkdir(folder)
    real_parent = Path(os.path.realpath(path.parent))
    if real_parent != workspace.root and not real_parent.is_relative_to(workspace.root):
        raise ToolError(
            f"Refused: {workspace.display(path)!r} resolves outside the project folder."
        )
    fd = open_for_write(path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"Refused: {workspace.display(path)!r} is not a regular file.")
        with os.fdopen(fd, "wb", closefd=True) as handle:
            fd = -1
            handle.write(data)
    finally:
        if fd >= 0:
            os.close(fd)
    return created
