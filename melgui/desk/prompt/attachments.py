"""`@` in the prompt box: the project's files, fuzzy-matched, and what attaching one sends.

The listing is the one find_files searches (hidden names skipped, `.gitignore` rules
respected, symlinks not followed), built on first use and rebuilt when older than
INDEX_TTL. A file goes with the message as text, cut at MAX_FILE_BYTES with a note; a
folder (`@folder/`) as a listing of the files under it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from melgui.core.config.project_files import walk_files
from melgui.core.protocol.content import FilePart
from melgui.core.protocol.views.fuzzy_match import fuzzy_rank

MAX_INDEXED = 50_000
# Built files nobody attaches by hand: left out of the @ list even where no .gitignore
# says so.
NOT_OFFERED_DIRS = frozenset({"__pycache__"})
NOT_OFFERED_SUFFIXES = (".pyc", ".pyo")
INDEX_TTL = 30.0
MAX_FILE_BYTES = 64 * 1024
MAX_LISTING = 500


class FileIndex:
    """Relative paths of a project's files, and the folders above them.

    Built in a worker thread, so a large project never freezes the prompt box: `paths()`
    answers with the last complete listing (waiting up to FIRST_WAIT for the first one)
    and starts a fresh build when that one is older than INDEX_TTL.
    """

    FIRST_WAIT = 1.0

    def __init__(self, root: str) -> None:
        self.root = str(Path(root).resolve())
        self._listing: list[str] | None = None
        self._built_at = 0.0
        self._building: threading.Thread | None = None
        self._lock = threading.Lock()
        self.truncated = False

    def paths(self) -> list[str]:
        """Files, then folders (ending in /), sorted; [] while the first build runs long."""
        with self._lock:
            stale = self._listing is None or time.monotonic() - self._built_at > INDEX_TTL
            if stale and (self._building is None or not self._building.is_alive()):
                self._building = threading.Thread(
                    target=self._build, name="melgui-file-index", daemon=True
                )
                self._building.start()
            building, listing = self._building, self._listing
        if listing is None and building is not None:
            building.join(self.FIRST_WAIT)
            listing = self._listing
        return listing or []

    def _build(self) -> None:
        files: list[str] = []
        folders: set[str] = set()
        truncated = False
        for relative in walk_files(self.root, skip_dirs=NOT_OFFERED_DIRS):
            if relative.endswith(NOT_OFFERED_SUFFIXES):
                continue
            files.append(relative)
            parts = relative.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folders.add("/".join(parts[:depth]) + "/")
            if len(files) >= MAX_INDEXED:
                truncated = True
                break
        listing = sorted(files) + sorted(folders)
        with self._lock:
            self._listing, self._built_at, self.truncated = listing, time.monotonic(), truncated

    def search(self, query: str, limit: int = 50) -> list[str]:
        return fuzzy_rank(query, self.paths(), limit)


def attach(root: str, relative: str) -> FilePart:
    """The part `@relative` sends; raises ValueError with a sentence when it cannot be read."""
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise ValueError(f"{relative} is outside the project folder")
    if target.is_dir():
        return _listing(base, target, relative)
    try:
        size = target.stat().st_size
        with open(target, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {relative}: {exc.strerror or exc}") from exc
    if b"\0" in data[:8192]:
        raise ValueError(f"{relative} is a binary file; only text files can be attached")
    note = ""
    if len(data) > MAX_FILE_BYTES:
        data = data[:MAX_FILE_BYTES]
        note = f"cut: the first {MAX_FILE_BYTES // 1024} KB of {_size(size)} are attached"
    text = data.decode("utf-8", errors="replace")
    if note and "\ufffd" in text[-3:]:
        text = text.rstrip("\ufffd")  # a character cut in half at the cap
    return FilePart(relative, text, note)


def _listing(base: Path, folder: Path, relative: str) -> FilePart:
    inside = folder.relative_to(base).as_posix()
    prefix = "" if inside == "." else inside + "/"
    files = list(walk_files(str(folder)))
    shown = files[:MAX_LISTING]
    note = ""
    if len(files) > MAX_LISTING:
        note = f"cut: the first {MAX_LISTING} of {len(files)} files are listed"
    body = "\n".join(prefix + path for path in shown) or "(no files)"
    return FilePart(relative.rstrip("/") + "/", body, note, "folder")


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{size / 1024:.0f} KB"
