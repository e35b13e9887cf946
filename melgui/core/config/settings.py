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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from melgui.core.protocol.catalog import DEFAULT_MODES, Mode, Role

APP_NAME = "melgui"
SCHEMA_VERSION = 1
SETTINGS_FILE = "settings.json"

ConnectionKind = Literal["relay", "openai", "local"]
Theme = Literal["light", "dark"]


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


class Settings(BaseSettings):
    """Everything a person configures in the Settings dialog."""

    model_config = SettingsConfigDict(
        env_prefix="MELGUI_",
        extra="ignore",
        validate_assignment=True,
        populate_by_name=True,
    )

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
    role: Role = "assistant"
    """Tool set of a new conversation: assistant, worker or orchestrator."""
    approval_modes: dict[str, Mode] = Field(default_factory=lambda: dict(DEFAULT_MODES))
    """Per tool: run without asking ("auto") or ask a person ("ask")."""
    saved_tools: list[str] = Field(default_factory=list)
    """Tools a person chose to always allow (saved)."""
    saved_command_prefixes: list[str] = Field(default_factory=list)
    """run_command prefix rules a person saved; they match simple commands only."""
    command_timeout: float = Field(default=120.0, gt=0, le=24 * 3600)
    """Seconds before run_command kills the command."""
    web_search_url: str = ""
    """Base URL of a SearXNG instance for web_search; empty: web search is off."""
    theme: Theme = "light"
    """Window colours."""
    local_model_path: str = ""
    """GGUF file for the local connection; empty: the model shipped with melgui[local]."""

    @field_validator("approval_modes", mode="before")
    @classmethod
    def _complete_modes(cls, value: Any) -> Any:
        # A file written before a tool existed still gets that tool's default.
        if isinstance(value, dict):
            return {**DEFAULT_MODES, **value}
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment overrides the saved file (passed as init values).
        return (env_settings, init_settings)

    def to_file_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class SettingsError(Exception):
    """The settings file could not be read or written; the message is for people."""


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Settings from the JSON file (defaults when it does not exist) plus the environment.

    A corrupt or invalid file raises SettingsError with a one-line message.
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
    try:
        return Settings(**data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        raise SettingsError(f"Invalid settings in {file}: {where}: {first['msg']}") from exc


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
