"""Import servers from files people already have into melgui's user file.

Claude Desktop's `claude_desktop_config.json`, VS Code's `.vscode/mcp.json` and Cursor's
`.cursor/mcp.json` hold the same entries. Literal values in `env` and `headers` are
secrets more often than not: they go to the system keyring and the file keeps a
`${keyring:<server>/<key>}` reference; without a keyring they become `${VAR}` references
the person sets in the environment. Nothing is written back in clear.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from melgui.tools.mcp.config import ConfigError, is_reference, keyring_set, read_entries, user_path


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already present
    to_set: list[str] = field(default_factory=list)  # environment variables to set


def known_files(folder: str) -> list[Path]:
    """The files an import looks at, existing or not."""
    home = Path.home()
    return [
        Path(platformdirs.user_config_dir("Claude", appauthor=False))
        / "claude_desktop_config.json",
        home / ".cursor" / "mcp.json",
        Path(folder) / ".vscode" / "mcp.json",
        Path(folder) / ".cursor" / "mcp.json",
    ]


def _env_name(server: str, key: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", f"MCP_{server}_{key}".upper())


def import_servers(
    source: Path,
    target: Path | None = None,
    store_secret: Callable[[str, str], bool] = keyring_set,
) -> ImportReport:
    """Add `source`'s servers to `target` (default: the user file); existing names stay."""
    target = target or user_path()
    entries = read_entries(source)
    try:
        document = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    except ValueError as exc:
        raise ConfigError(f"{target}: not valid JSON ({exc})") from None
    servers = document.setdefault("mcpServers", {})
    report = ImportReport()
    for name, entry in entries.items():
        if name in servers or not isinstance(entry, dict):
            report.skipped.append(name)
            continue
        entry = dict(entry)
        for section in ("env", "headers"):
            values = entry.get(section)
            if not isinstance(values, dict):
                continue
            safe: dict[str, str] = {}
            for key, value in values.items():
                value = str(value)
                if is_reference(value):
                    safe[key] = value
                elif store_secret(f"{name}/{key}", value):
                    safe[key] = f"${{keyring:{name}/{key}}}"
                else:
                    variable = _env_name(name, key)
                    safe[key] = f"${{{variable}}}"
                    report.to_set.append(variable)
            entry[section] = safe
        servers[name] = entry
        report.added.append(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(document, indent=2), encoding="utf-8")
    os.replace(tmp, target)
    return report
