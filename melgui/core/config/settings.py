"""The app's configuration: one typed model, saved atomically as JSON in the user config dir.

Environment variables override the file: any field as `MELGUI_<FIELD>` (e.g.
`MELGUI_CONNECTION=relay`), and `OPENAI_BASE_URL` for the OpenAI-compatible base URL.
API keys are not settings: they live in the system keyring (see `melgui.core.config.secrets`).
`MELGUI_CONFIG_DIR` / `MELGUI_DATA_DIR` move the config and data folders (tests use them).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from melgui.core.config.settings_env import BadVariable, OverriddenByEnvironment
from melgui.core.protocol.catalog import DEFAULT_MODES, Mode, Role

APP_NAME = "melgui"
SCHEMA_VERSION = 2
SETTINGS_FILE = "settings.json"

ConnectionKind = Literal["relay", "openai", "local"]
Theme = Literal["light", "dark", "system"]


@dataclass(frozen=True, slots=True)
class Preset:
    """A known OpenAI-compatible server: where it is and which key it takes."""

    id: str
    label: str
    base_url: str
    key_env: str | None  # the environment variable holding its key, if any
    needs_key: bool = True


PRESETS: dict[str, Preset] = {
    preset.id: preset
    for preset in (
        Preset("meliai", "Meliai API", "https://api.meliai.ai/v1", "MELIAI_API_KEY"),
        Preset("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        Preset("ollama", "Ollama (local)", "http://127.0.0.1:11434/v1", None, needs_key=False),
        Preset("lmstudio", "LM Studio (local)", "http://127.0.0.1:1234/v1", None, needs_key=False),
        Preset(
            "llamacpp",
            "llama.cpp server (local)",
            "http://127.0.0.1:8080/v1",
            None,
            needs_key=False,
        ),
    )
}


def preset_for_url(base_url: str) -> Preset | None:
    """The preset whose base URL this is (ignoring a trailing slash), or None."""
    wanted = base_url.rstrip("/")
    return next((p for p in PRESETS.values() if p.base_url == wanted), None)


def config_dir() -> Path:
    """Where settings live: $MELGUI_CONFIG_DIR, else the platform's user config dir."""
    override = os.environ.get("MELGUI_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Where conversations and stores live: $MELGUI_DATA_DIR, else the user data dir."""
    override = os.environ.get("MELGUI_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


class RemoteHost(BaseModel):
    """A machine workers and terminals can run on (Settings.hosts)."""

    name: str
    """How panes, spawn_agent (a task starting `@name `) and list_panes call it."""
    target: str
    """`ssh://[user@]host[:port][/abs/folder]`, or a command that runs a program there
    with its stdio: `docker exec -i devbox`, `podman exec -i box`, `kubectl exec -i pod --`."""
    folder: str = ""
    """The folder there workers and terminals start in (absolute); empty: the ssh URL's
    path."""
    sandbox: bool | None = None
    """run_command there in bubblewrap (refused in plain words when it has none); None:
    that machine's own setting."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment for commands and terminals there, on top of the remote user's."""
    mcp_servers: list[str] = Field(default_factory=list)
    """Names of servers in the person's MCP configuration (`mcp.json`) that start there,
    in melgui's host on that machine (docs/host-protocol.md)."""
    loop_there: bool = False
    """Run a worker's loop there too, so it goes on while this machine sleeps. Your model
    key is then sent to that machine, once per worker, and kept in the memory of melgui's
    host there (never on its disk). Off: the loop and the key stay here and only tool
    calls go there."""


class Settings(OverriddenByEnvironment):
    """Everything a person configures in the Settings dialog. The environment's values
    override the ones it is made with (the saved file's): see settings_env.py."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True, populate_by_name=True)

    schema_version: int = SCHEMA_VERSION
    """Version of this file's shape, for migrations."""
    connection: ConnectionKind = "local"
    """Which transport the agent uses: the Mel relay, an OpenAI-compatible server, or local."""
    relay_url: str = ""
    """Base URL of the Mel relay, e.g. https://relay.example.com."""
    relay_stream_path: str = "/v1/agent/stream"
    """Path of the relay's streaming endpoint."""
    openai_base_url: str = Field(
        default=PRESETS["meliai"].base_url,
        validation_alias=AliasChoices(
            "openai_base_url", "MELGUI_OPENAI_BASE_URL", "OPENAI_BASE_URL"
        ),
    )
    """Base URL of the OpenAI-compatible server (ends in /v1 for most servers)."""
    model: str = ""
    """Model id sent with each leg; empty means the server's first tool-capable model."""
    send_reasoning: list[str] = Field(default_factory=list)
    """Connections (relay, or an OpenAI-compatible preset id / "custom") that send the
    model's earlier reasoning back with each leg; off for every connection by default."""
    role: Role = "assistant"
    """Tool set of a new conversation: assistant, worker or orchestrator."""
    approval_modes: dict[str, Mode] = Field(default_factory=lambda: dict(DEFAULT_MODES))
    """Per tool: run without asking ("auto") or ask a person ("ask")."""
    language_servers: dict[str, list[str]] = Field(default_factory=dict)
    """The language server per language ("python": ["pylsp"]); [] turns one off. Unset:
    the first installed of core/lsp/servers.py's list."""
    rules: list[str] = Field(default_factory=list)
    """Approval rules for every project, one per line: "allow run_command: git status",
    "deny run_command: rm", "allow write_file", "allow mcp:<server>/<tool>"."""
    project_rules: dict[str, list[str]] = Field(default_factory=dict)
    """Approval rules per project folder (kept here, not in the project, so an agent that
    writes the project cannot grant itself permissions)."""
    sandbox_commands: bool = False
    """Run run_command inside a bubblewrap sandbox (Linux): the project writable, the rest
    read-only, melgui's config and keys hidden."""
    sandbox_network: bool = False
    """Let sandboxed commands use the network."""
    sandbox_without_asking: bool = True
    """With the sandbox on, run commands the rules do not cover without asking."""
    command_timeout: float = Field(default=120.0, gt=0, le=24 * 3600)
    """Seconds before run_command kills the command."""
    web_search_url: str = ""
    """Base URL of a SearXNG instance for web_search; empty: web search is off."""
    theme: Theme = "light"
    """Window colours: light, dark, or "system" to follow the desktop's colour scheme."""
    local_model_path: str = ""
    """GGUF file for the local connection; empty: the model shipped with melgui[local]."""
    checkpoints: bool = True
    """Snapshot the project before and after each call that can change files (undo)."""
    compaction_preview: bool = True
    """Before a compaction (manual or automatic) show what it would cut and keep, and let
    the person keep items; off: compact without asking (an unattended run goes on)."""
    checkpoint_keep_days: float = Field(default=30.0, gt=0)
    """Checkpoints older than this many days are pruned."""
    checkpoint_max_mb: float = Field(default=2048.0, gt=0)
    """Total size of a project's checkpoints; the oldest go first beyond it."""
    checkpoint_file_cap_mb: float = Field(default=20.0, gt=0)
    """Files bigger than this are left out of checkpoints (and named in the call card)."""
    context_windows: dict[str, int] = Field(default_factory=dict)
    """Per model id: its context window in tokens, when the server does not say."""
    connection_models: dict[str, str] = Field(default_factory=dict)
    """The model last chosen on each connection (see connection_key), so a switch back
    brings it back and a switch away never sends it to another server."""
    acp_agents: list[str] = Field(default_factory=list)
    """ACP agent commands of your own (beside the known ones: gemini --experimental-acp,
    opencode acp, …): offered in "New agent pane…", and opened as agent panes by open_pane.
    `name: command` names the agent for rules (`acp:name/…`)."""
    open_pane_acp: bool = True
    """open_pane opens a command that starts a known ACP agent as an agent pane (off: as a
    terminal, as before)."""
    worker_worktrees: bool = True
    """Worker agents in a git project start in their own worktree and branch (outside the
    project folder); off: they work in the project folder itself."""
    worker_carry_changes: bool = False
    """A new worker's worktree gets the main folder's uncommitted changes."""
    worktree_copy: dict[str, list[str]] = Field(default_factory=dict)
    """Per project folder: files or globs (relative, e.g. ".env", ".venv") copied into each
    new worker worktree, which git leaves without ignored files."""
    worktree_setup: dict[str, str] = Field(default_factory=dict)
    """Per project folder: a shell command run in each new worker worktree (e.g.
    "npm ci"); its output goes with the spawn_agent result."""
    worktree_setup_timeout: float = Field(default=600.0, gt=0, le=24 * 3600)
    """Seconds before the setup command is stopped."""
    merge_test_command: dict[str, str] = Field(default_factory=dict)
    """Per project folder: a shell command the merge queue runs on each worker's branch,
    rebased, before merging it (e.g. "pytest -q"); it must exit 0."""
    merge_test_timeout: float = Field(default=1800.0, gt=0, le=24 * 3600)
    """Seconds before the merge queue's test command is stopped (and counts as failed)."""
    merge_test_failure: Literal["send_back", "stop"] = "send_back"
    """When a branch fails the tests in the merge queue: its worker gets the output as a
    new task and the queue goes on ("send_back"), or the queue stops for you ("stop")."""
    focus_chat_keys: str = "Ctrl+`"
    """Keys that take the keyboard from a terminal pane back to the chat (never sent to the
    program running there)."""
    signal_desktop: bool = True
    """A desktop notification when an agent not in front needs you (approval, turn end)."""
    signal_taskbar: bool = True
    """The taskbar's urgency hint for the same moments."""
    signal_badges: bool = True
    """A count on a pane's header and tab until you look at it."""
    signal_approval_count: bool = True
    """The count of approvals waiting, from any pane, on the "waiting" line."""
    signal_turn_end: bool = True
    """A finished or failed turn signals too (approvals always do, unless all are off)."""
    signal_bell: bool = True
    """A terminal pane's bell (BEL) signals too."""
    hosts: list[RemoteHost] = Field(default_factory=list)
    """Other machines workers and terminals can run on (ssh URLs or container commands),
    each with its own folder, sandbox, environment and MCP servers."""

    @field_validator("approval_modes", mode="before")
    @classmethod
    def _complete_modes(cls, value: Any) -> Any:
        # A file written before a tool existed still gets that tool's default.
        if isinstance(value, dict):
            return {**DEFAULT_MODES, **value}
        return value

    def to_file_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class SettingsError(Exception):
    """The settings file could not be read or written; the message is for people."""


SettingsMigration = Callable[[dict[str, Any]], dict[str, Any]]
# Format N -> N+1, applied in order to an older file when it is read. Format 1 is the
# first; add an entry here (and raise SCHEMA_VERSION) when a field changes meaning.


def _rules_from_saved_approvals(data: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: saved tools and run_command prefixes became rule lines (scopes, deny)."""
    rules = list(data.get("rules") or [])
    rules += [f"allow {name}" for name in data.pop("saved_tools", None) or []]
    prefixes = data.pop("saved_command_prefixes", None) or []
    rules += [f"allow run_command: {prefix}" for prefix in prefixes]
    data["rules"] = list(dict.fromkeys(rules))
    return data


MIGRATIONS: dict[int, SettingsMigration] = {1: _rules_from_saved_approvals}


def migrate_settings(
    data: dict[str, Any],
    *,
    migrations: dict[int, SettingsMigration] = MIGRATIONS,
    current: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """An older file's values brought up to format `current`, one step at a time."""
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SettingsError(f"schema_version must be a positive integer, not {version!r}")
    for step in range(version, current):
        data = {**migrations[step](dict(data)), "schema_version": step + 1}
    return data


def _set_aside(file: Path, label: str) -> Path:
    """Copy `file` beside itself, never over an earlier copy; a copy identical to it that
    is already there is kept instead (a newer file is read again at every start)."""
    content = file.read_bytes()
    for number in range(1, 1000):
        suffix = f".{label}" if number == 1 else f".{label}-{number}"
        target = file.with_name(file.name + suffix)
        if not target.exists():
            target.write_bytes(content)
            return target
        if target.read_bytes() == content:
            return target
    raise SettingsError(f"Cannot set {file} aside: too many earlier copies")


def load_settings(
    path: str | os.PathLike[str] | None = None, *, notices: list[str] | None = None
) -> Settings:
    """Settings from the JSON file (defaults when it does not exist) plus the environment.

    An older file is migrated. A file written by a newer melgui is copied aside first
    (once), so saving later never truncates what that melgui wrote; `notices` gets a line
    about it. The settings it holds that this melgui knows are used, or the defaults when
    one of them is a value this melgui rejects. A corrupt or invalid file (of this format
    or older) raises SettingsError with a one-line message.
    """
    file = Path(path) if path is not None else settings_path()
    data: dict[str, Any] = {}
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise SettingsError(f"Cannot read settings {file}: {exc.strerror}") from exc
    if text.strip():
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"Settings file {file} is not valid JSON: {exc.msg}") from exc
        if not isinstance(loaded, dict):
            raise SettingsError(f"Settings file {file} does not hold a JSON object")
        data = loaded
    version = data.get("schema_version", 1)
    newer = isinstance(version, int) and version > SCHEMA_VERSION
    if newer:
        try:
            kept = _set_aside(file, f"newer-format-{version}")
        except OSError as exc:
            raise SettingsError(f"Cannot keep a copy of {file}: {exc.strerror}") from exc
        data = {key: value for key, value in data.items() if key in Settings.model_fields}
        data["schema_version"] = SCHEMA_VERSION
    data = migrate_settings(data)
    try:
        settings, rejected = Settings(**data), ""
    except BadVariable as exc:
        raise SettingsError(f"Invalid settings: {exc}") from exc
    except ValidationError as exc:
        if not newer:
            raise SettingsError(f"Invalid settings in {file}: {_first_error(exc)}") from exc
        # Valid for the melgui that wrote it, and kept for it: no reason to "fix" anything.
        rejected = _first_error(exc)
        try:
            settings = Settings()
        except ValidationError as again:  # the environment's values, then
            raise SettingsError(f"Invalid settings: {_first_error(again)}") from again
    if newer and notices is not None:
        uses = (
            f"this melgui cannot use them ({rejected}) and starts from its defaults."
            if rejected
            else "this melgui uses the settings it understands."
        )
        notices.append(
            f"Settings {file} were written by a newer melgui (format {version}; this "
            f"one reads up to {SCHEMA_VERSION}). They are kept unchanged in {kept}; {uses}"
        )
    return settings


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "settings"
    return f"{where}: {first['msg']}"


def save_settings(settings: Settings, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the settings atomically (temp file + os.replace); returns the path written."""
    file = Path(path) if path is not None else settings_path()
    text = json.dumps(settings.to_file_json(), indent=2, sort_keys=True) + "\n"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, file)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SettingsError(f"Cannot save settings to {file}: {exc.strerror}") from exc
    return file
