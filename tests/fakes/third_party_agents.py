"""The third-party ACP agents the tests run, each configured offline for a started
`ScriptedOpenAI` in a temporary HOME, returned as a `ThirdPartyAgent` (argv, env, cwd).

- OpenCode (npm `opencode-ai`, `opencode acp`): one custom provider on the
  `@ai-sdk/openai-compatible` package it bundles, speaking /v1/chat/completions. Its update
  check, model-catalog fetch, LSP downloads, sharing, default plugins and the npm install
  of its plugin SDK are turned off. It asks the model for a session title beside the first
  turn: `answer_titles(server)` answers those outside the script.
- Codex (npm `@zed-industries/codex-acp`): a custom model provider in CODEX_HOME's
  config.toml. Codex speaks only the Responses API (`wire_api = "chat"` is refused), which
  the scripted server plays on /v1/responses.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.scenario import done, text
from tests.fakes.scripted_server import RecordedRequest, ScriptedOpenAI
from tests.fakes.third_party_acp import ThirdPartyAgent, pinned_version, require_binary

PROVIDER = "scripted"
API_KEY = "sk-scripted"
OPENCODE_PACKAGE = "opencode-ai"
CODEX_PACKAGE = "@zed-industries/codex-acp"
# What OpenCode would otherwise reach for on the network, or read from the machine.
OPENCODE_OFFLINE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    # Any npm fetch it still tried would fail at once instead of reaching a registry.
    "npm_config_offline": "true",
}
PLUGIN_SDK = "@opencode-ai/plugin"


def opencode_version() -> str:
    return pinned_version(OPENCODE_PACKAGE)


def codex_version() -> str:
    return pinned_version(CODEX_PACKAGE)


def git_project(root: Path) -> Path:
    """An empty git repository under `root`, the agents' project folder."""
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def home_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


def opencode_agent(
    server: ScriptedOpenAI,
    root: Path,
    model: str = "gpt-test",
    permission: dict[str, Any] | None = None,
) -> ThirdPartyAgent:
    """`opencode acp` configured for `server` only, in a git project under `root`.

    The project is a git repository because OpenCode takes the repository's top as its
    worktree (outside one it takes `/`, and names files relative to that)."""
    binary = require_binary("opencode", OPENCODE_PACKAGE)
    home, project = root / "opencode-home", git_project(root)
    config_dir = home / ".config" / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "autoupdate": False,
        "share": "disabled",
        "model": f"{PROVIDER}/{model}",
        "small_model": f"{PROVIDER}/{model}",
        "enabled_providers": [PROVIDER],
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": server.base_url, "apiKey": API_KEY},
                "models": {model: {"name": f"Scripted {model}", "tool_call": True}},
            }
        },
        # Edits and commands ask the client, so the permission path is exercised.
        "permission": permission or {"edit": "ask", "bash": "ask", "webfetch": "deny"},
    }
    (config_dir / "opencode.json").write_text(json.dumps(config, indent=2))
    settle_plugin_dependencies(config_dir)
    env = {**home_env(home), **OPENCODE_OFFLINE_ENV}
    return ThirdPartyAgent("opencode", (str(binary), "acp"), env, project, home)


def settle_plugin_dependencies(config_dir: Path) -> None:
    """Mark the config folder's plugin SDK as installed: at start OpenCode otherwise runs
    an npm install of `@opencode-ai/plugin` there, from the registry. It skips that when
    node_modules exists and package-lock.json already lists every dependency."""
    (config_dir / "node_modules").mkdir(exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {PLUGIN_SDK: "*"}}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


def opencode_warnings(agent: ThirdPartyAgent) -> list[str]:
    """The WARN and ERROR lines of OpenCode's own log in the agent's HOME; a network fetch it
    tried (npm_config_offline makes one fail at once) shows up here."""
    logs = sorted((agent.home / ".local" / "share" / "opencode" / "log").glob("*.log"))
    lines = (line for log in logs for line in log.read_text(errors="replace").splitlines())
    return [line for line in lines if "level=WARN" in line or "level=ERROR" in line]


def is_title_request(request: RecordedRequest) -> bool:
    """OpenCode's side request for a session title (sent alongside the first turn)."""
    first = request.messages[0] if request.messages else {}
    return "title generator" in str(first.get("content", ""))


def answer_titles(server: ScriptedOpenAI, title: str = "Scripted session") -> None:
    """Answer every title request, whenever it comes, outside the scripted legs."""
    server.on(is_title_request, [text(title), done()])


def turn_requests(server: ScriptedOpenAI) -> list[RecordedRequest]:
    """The model requests of the agent's turns (title requests left out)."""
    return [r for r in server.legs_received if not is_title_request(r)]


def codex_agent(server: ScriptedOpenAI, root: Path, model: str = "gpt-test") -> ThirdPartyAgent:
    """`codex-acp` with one model provider, `server` (Responses API), in a git project
    under `root`; no update check, analytics or web search."""
    binary = require_binary("codex-acp", CODEX_PACKAGE)
    home, project = root / "codex-home", git_project(root)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""model = "{model}"
model_provider = "{PROVIDER}"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[model_providers.{PROVIDER}]
name = "Scripted"
base_url = "{server.base_url}"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
"""
    )
    env = {**home_env(home), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": API_KEY}
    return ThirdPartyAgent("codex", (str(binary),), env, project, home)
