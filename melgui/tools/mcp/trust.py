"""Trust of project MCP files: keyed by the file's real path and the SHA-256 of its bytes.

A project's `.melgui/mcp.json` comes with the folder (a cloned repository can carry
one), so none of its servers start until the person trusted exactly that content; any
change asks again. A remote folder's file is kept under its URL
(`ssh://host/p/.melgui/mcp.json`) with the digest its host there sent. The user's own
file and one named with `--mcp-config` need no trust.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from melgui.core.config.settings import config_dir

TRUST_FILE = "mcp-trust.json"


def digest(path: Path) -> str | None:
    import hashlib  # OpenSSL's library: loaded when first used

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / TRUST_FILE

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def is_trusted(self, file: Path) -> bool:
        current = digest(file)
        return current is not None and self._read().get(os.path.realpath(file)) == current

    def is_trusted_as(self, key: str, sha256: str) -> bool:
        """A file elsewhere (a remote folder's, `key` its URL), trusted with this content."""
        return self._read().get(key) == sha256

    def trust(self, file: Path) -> None:
        """Trust `file` as it is now."""
        current = digest(file)
        if current is None:
            raise FileNotFoundError(str(file))
        self.trust_as(os.path.realpath(file), current)

    def trust_as(self, key: str, sha256: str) -> None:
        """Trust a file under `key` (a local file's real path, or a remote file's URL) with
        the content whose SHA-256 is `sha256`."""
        entries = self._read()
        entries[key] = sha256
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)

    def revoke(self, file: Path) -> None:
        entries = self._read()
        if entries.pop(os.path.realpath(file), None) is not None:
            self.path.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
