"""MCP server configuration in the `mcpServers` shape people already have.

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server"], "env": {"KEY": "${KEY}"}},
        "docs": {"url": "https://host/mcp", "headers": {"Authorization": "${DOCS_TOKEN}"}}}}

Claude Desktop and Cursor use `mcpServers`; VS Code uses `servers` (same entries, with a
`type`). Both are read. melgui's own keys per server: `disabled`, `disabledTools`,
`roles` (default every role), `timeout` (seconds per call, default 60), `trusted`
(its tools' annotations may pre-set their approval default) and, for an HTTP server,
`oauth`: `false` (never sign in) or how to sign in (oauth/settings.py). `"type": "sse"`
names an old HTTP+SSE server (one whose streamable HTTP answers 404/405 is found so on
its own).

Files: the user's (`<config dir>/mcp.json`) and the project's (`.melgui/mcp.json`, which
starts nothing until trusted; see trust.py). Values in `env` and `headers` may be
`${VAR}` / `${env:VAR}` (the environment) or `${keyring:NAME}` (the system keyring);
references are resolved only when a server starts, and never written back resolved.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from melgui.core.config.settings import config_dir
from melgui.core.protocol.catalog import ROLES, Role
from melgui.tools.mcp.oauth.settings import OAuthSettings, parse_oauth

USER_FILE = "mcp.json"
PROJECT_FILE = os.path.join(".melgui", "mcp.json")
DEFAULT_TIMEOUT = 60.0
KEYRING_SERVICE = "melgui-mcp"
_REFERENCE = re.compile(r"\$\{(?:(env|keyring):)?([^}]+)\}")

Kind = Literal["stdio", "http"]
Scope = Literal["user", "project", "file"]


class ConfigError(ValueError):
    """A configuration file or entry that cannot be used; the message says why."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    kind: Kind
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    roles: tuple[Role, ...] = ROLES
    timeout: float = DEFAULT_TIMEOUT
    disabled: bool = False
    disabled_tools: frozenset[str] = frozenset()
    trusted: bool = False
    oauth: OAuthSettings = field(default_factory=OAuthSettings)
    scope: Scope = "user"
    source: str = ""  # the file it came from
    problem: str = ""  # why it cannot start, decided when the file was read
    sse: bool = False  # `"type": "sse"`: the legacy HTTP+SSE transport from the start

    @property
    def origin(self) -> str:
        return f"mcp:{self.name}"

    def describe(self) -> str:
        """Where it runs, in a few words (no secrets)."""
        if self.kind == "http":
            return self.url
        return " ".join([self.command, *self.args])


def user_path() -> Path:
    return config_dir() / USER_FILE


def project_path(folder: str) -> Path:
    return Path(folder) / PROJECT_FILE


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{what} must be an object of strings")
    return {str(k): v for k, v in value.items()}


def parse_server(name: str, entry: Any, *, scope: Scope, source: str) -> ServerConfig:
    """One entry; raises ConfigError naming the problem."""
    if not isinstance(entry, dict):
        raise ConfigError(f"server {name!r}: expected an object")
    kind_field = str(entry.get("type") or entry.get("transport") or "")
    url = entry.get("url") or entry.get("serverUrl") or ""
    command = entry.get("command") or ""
    if not isinstance(url, str) or not isinstance(command, str):
        raise ConfigError(f"server {name!r}: command and url must be strings")
    if url and command:
        raise ConfigError(f"server {name!r}: give either command (stdio) or url (HTTP), not both")
    if not url and not command:
        raise ConfigError(f"server {name!r}: needs a command (stdio) or a url (HTTP)")
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"server {name!r}: args must be a list of strings")
    roles = entry.get("roles", list(ROLES))
    if not isinstance(roles, list) or any(r not in ROLES for r in roles):
        raise ConfigError(f"server {name!r}: roles must be a list of {', '.join(ROLES)}")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f"server {name!r}: timeout must be a positive number of seconds")
    disabled_tools = entry.get("disabledTools") or []
    if not isinstance(disabled_tools, list):
        raise ConfigError(f"server {name!r}: disabledTools must be a list of tool names")
    cwd = entry.get("cwd")
    return ServerConfig(
        oauth=_oauth(name, entry.get("oauth", True)),
        name=name,
        kind="http" if url else "stdio",
        command=command,
        args=tuple(args),
        env=_strings(entry.get("env"), f"server {name!r}: env"),
        cwd=str(cwd) if cwd else None,
        url=url,
        headers=_strings(entry.get("headers"), f"server {name!r}: headers"),
        roles=tuple(roles),
        timeout=float(timeout),
        disabled=bool(entry.get("disabled", False)),
        disabled_tools=frozenset(str(t) for t in disabled_tools),
        trusted=bool(entry.get("trusted", False)),
        scope=scope,
        source=source,
        sse=kind_field == "sse" and bool(url),
    )


def _oauth(name: str, value: Any) -> OAuthSettings:
    try:
        return parse_oauth(value)
    except ValueError as exc:
        raise ConfigError(f"server {name!r}: {exc}") from None


def read_entries(path: Path) -> dict[str, Any]:
    """The raw server entries of a file (`mcpServers` or `servers`); {} when it is absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    servers = data.get("mcpServers", data.get("servers", {}))
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers must be an object")
    return servers


def load_file(path: Path, scope: Scope) -> list[ServerConfig]:
    """Every server of one file; an entry that cannot be used is kept with its problem."""
    configs = []
    for name, entry in read_entries(path).items():
        try:
            configs.append(parse_server(str(name), entry, scope=scope, source=str(path)))
        except ConfigError as exc:
            configs.append(
                ServerConfig(str(name), "stdio", scope=scope, source=str(path), problem=str(exc))
            )
    return configs


def resolve(value: str, lookup_keyring: Any = None) -> str:
    """`value` with its references replaced; raises ConfigError naming a missing one."""

    def replace(match: re.Match[str]) -> str:
        source, name = match.group(1) or "env", match.group(2)
        if source == "keyring":
            found = (lookup_keyring or keyring_get)(name)
            if found is None:
                raise ConfigError(f"no secret {name!r} in the system keyring")
            return str(found)
        if name not in os.environ:
            raise ConfigError(f"the environment variable {name} is not set")
        return os.environ[name]

    return _REFERENCE.sub(replace, value)


def keyring_get(name: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, name)
    except Exception:  # no keyring backend: the reference cannot be resolved
        return None


def keyring_set(name: str, value: str) -> bool:
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, name, value)
    except Exception:
        return False
    # Some backends (the null one) accept and forget: only a read-back proves it is kept.
    return keyring_get(name) == value


def is_reference(value: str) -> bool:
    return bool(_REFERENCE.fullmatch(value.strip()))
