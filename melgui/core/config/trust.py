"""One trust decision per folder, kept in melgui's config folder, never in the folder.

A folder is untrusted until the person trusts it (the window's prompt, Settings, or
`melgui exec --trust`). While it is untrusted nothing it supplies runs: no project MCP
servers, no hooks, filters or fsmonitor from any `.git` in it, no worktree setup command,
no hooks from its `.claude/` or `.melgui/` settings (`core/hooks`).

Entries are keyed by a location: `file://` and the folder's real path for a local folder,
so a remote one can later be `ssh://host/path` with an entry of its own. The closest
decision up the folder's parents wins, so subfolders inherit; melgui's worker worktrees
of a project (in the data folder, named after the project's real path) inherit the
project's.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from melgui.core.config.digests import sha256_hex
from melgui.core.config.settings import config_dir, data_dir

TRUST_FILE = "trust.json"
SCHEMA = 1
LOCAL = "file://"
_REMOTE = re.compile(r"[a-z][a-z0-9+.-]*://[^/]+/", re.IGNORECASE)

# What stays off while a folder is untrusted, in the words the window and exec use.
RESTRICTED = (
    "project MCP servers",
    "language servers (they may run the project's code)",
    "git hooks, filters and fsmonitor from the folder's .git",
    "the worktree setup command",
    "the project's hooks",
)


def restricted_line() -> str:
    """One line that says what is off in an untrusted folder."""
    return "Restricted folder: off are " + ", ".join(RESTRICTED) + "."


def remote_location(host: str, path: str) -> str:
    """The key of a folder on another computer, reached over ssh: `ssh://host/path`. It
    is its own entry: trusting `/work` here trusts nothing on `host`, and the reverse."""
    return f"ssh://{host}{posixpath.normpath('/' + path.lstrip('/'))}"


def location(folder: str | os.PathLike[str]) -> str:
    """The key of a folder: a remote location as given (`ssh://host/path`), else
    `file://` and the local folder's real path."""
    if isinstance(folder, str) and _REMOTE.match(folder):
        return folder
    return LOCAL + os.path.realpath(folder)


def _places(key: str) -> list[str]:
    """`key` and the keys of the folders that hold it, closest first."""
    at = key.index("://") + 3
    at = key.find("/", at) if not key.startswith(LOCAL) else at
    head, path = key[:at], PurePosixPath(key[at:] or "/")
    return [head + str(place) for place in (path, *path.parents)]


def worktree_group_name(main: str | os.PathLike[str]) -> str:
    """`<name>-<hash>` of a project's real path: the folder its worker worktrees live in."""
    real = os.path.realpath(main)
    digest = sha256_hex(real.encode("utf-8", "surrogateescape"))[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(real).name).strip("-.") or "project"
    return f"{name[:30]}-{digest}"


@dataclass(frozen=True, slots=True)
class Decision:
    trusted: bool
    key: str  # the location the decision was made for (the folder or an ancestor)


class FolderTrust:
    """Reads and writes trust decisions; every read sees the file as it is now."""

    def __init__(self, path: Path | None = None, worktrees: Path | None = None) -> None:
        self.path = path or config_dir() / TRUST_FILE
        self.worktrees = worktrees or data_dir() / "worktrees"

    def _entries(self) -> dict[str, bool]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            return {}
        return {
            str(key): bool(value.get("trusted"))
            for key, value in folders.items()
            if isinstance(value, dict)
        }

    def _save(self, entries: dict[str, bool]) -> None:
        data = {
            "schema": SCHEMA,
            "folders": {k: {"trusted": v} for k, v in sorted(entries.items())},
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def decision(self, folder: str | os.PathLike[str]) -> Decision | None:
        """The person's decision that covers `folder`, or None when none was made."""
        entries = self._entries()
        if not entries:
            return None
        key = location(folder)
        for place in _places(key):
            if place in entries:
                return Decision(entries[place], place)
        if not key.startswith(LOCAL):
            return None
        return self._worktree_decision(Path(key[len(LOCAL) :]), entries)

    def _worktree_decision(self, real: Path, entries: dict[str, bool]) -> Decision | None:
        root = Path(os.path.realpath(self.worktrees))
        try:
            group = real.relative_to(root).parts[0]
        except (ValueError, IndexError):
            return None
        for key, trusted in entries.items():
            if key.startswith(LOCAL) and worktree_group_name(key[len(LOCAL) :]) == group:
                return Decision(trusted, key)
        return None

    def is_trusted(self, folder: str | os.PathLike[str]) -> bool:
        found = self.decision(folder)
        return found is not None and found.trusted

    def asked(self, folder: str | os.PathLike[str]) -> bool:
        """Whether the person has decided for this folder (or one holding it)."""
        return self.decision(folder) is not None

    def set(self, folder: str | os.PathLike[str], trusted: bool) -> None:
        """Record the person's decision for exactly this folder."""
        entries = self._entries()
        entries[location(folder)] = trusted
        self._save(entries)

    def trust(self, folder: str | os.PathLike[str]) -> None:
        self.set(folder, True)

    def restrict(self, folder: str | os.PathLike[str]) -> None:
        self.set(folder, False)
