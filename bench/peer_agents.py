"""The agents bench_peers.py runs on the same work: melgui's `melgui exec` and the
headless modes of the agents people pick instead, from npm, pinned in bench/peers
(`npm install --prefix bench/peers`). Each is set up offline, in a HOME of its own, for a
scripted server on loopback that speaks its API:

- melgui: `melgui exec --transport openai` (Chat Completions), `--approve all`;
- OpenCode: `opencode run`, one custom provider (Chat Completions), everything allowed;
- Codex: `codex exec`, a custom model provider (the Responses API), no sandbox;
- Claude Code: `claude -p` with ANTHROPIC_BASE_URL (Anthropic Messages), the file
  tools allowed.

Each names its tools and their arguments its own way: `Step`s (read a file, grep, edit
a line) become each agent's own tool call (`call_for`). Codex offers only a shell:
its reads, greps and edits are `cat`, `rg` and `sed -i`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
BIN = PEERS / "node_modules" / ".bin"
API_KEY = "sk-scripted"
MODEL = "gpt-test"
Api = Literal["chat", "responses", "messages"]


@dataclass(frozen=True)
class Step:
    """One tool call of a scripted turn, in words every agent's tools can do."""

    kind: Literal["read", "grep", "edit"]
    path: str = ""  # relative to the project
    pattern: str = ""
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class Agent:
    name: str
    api: Api
    binary: Path | None  # None: melgui, run by this interpreter
    tree: Path = ROOT  # melgui's checkout (another one measures it side by side)

    @property
    def melgui(self) -> bool:
        return self.binary is None

    @property
    def package(self) -> str:
        return {
            "opencode": "opencode-ai",
            "codex": "@openai/codex",
            "claude": "@anthropic-ai/claude-code",
        }.get(self.name, "melgui")

    def missing(self) -> str:
        """Why the agent cannot run here, or ""."""
        if self.binary is None:
            return ""
        if not self.binary.exists():
            return f"not installed: run `npm install --prefix bench/peers` ({self.package})"
        return ""

    def version(self) -> str:
        if self.binary is None:
            commit = subprocess.run(
                ["git", "-C", str(self.tree), "rev-parse", "--short", "HEAD"],
                capture_output=True, text=True,
            ).stdout.strip()  # fmt: skip
            return f"{self.tree} at {commit or 'an unknown commit'}"
        lock = json.loads((PEERS / "package-lock.json").read_text())
        return str(lock["packages"][f"node_modules/{self.package}"]["version"])


AGENTS = (
    Agent("melgui", "chat", None),
    Agent("opencode", "chat", BIN / "opencode"),
    Agent("codex", "responses", BIN / "codex"),
    Agent("claude", "messages", BIN / "claude"),
)


def base_agent(tree: Path) -> Agent:
    """melgui from another checkout (e.g. main's), measured beside this one."""
    return Agent("base", "chat", None, tree.resolve())


def home_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


# What OpenCode would otherwise reach for on the network (as tests/fakes sets it up).
OPENCODE_OFFLINE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "npm_config_offline": "true",
}
CLAUDE_OFFLINE_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def prepare_home(agent: Agent, home: Path, base_url: str, server_url: str) -> dict[str, str]:
    """Write the agent's configuration for the scripted server under `home`; its
    environment (on top of this process's, less any real key)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith(("ANTHROPIC_", "OPENAI_"))
    }
    env.update(home_env(home))
    if agent.melgui:
        env.update(OPENAI_API_KEY=API_KEY, PYTHONPATH=str(agent.tree))
    elif agent.name == "opencode":
        config_dir = home / ".config" / "opencode"
        config_dir.mkdir(parents=True, exist_ok=True)
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": base_url, "apiKey": API_KEY},
            "models": {MODEL: {"name": "Scripted", "tool_call": True}},
        }
        config = {
            "autoupdate": False,
            "share": "disabled",
            "model": f"scripted/{MODEL}",
            "small_model": f"scripted/{MODEL}",
            "enabled_providers": ["scripted"],
            "provider": {"scripted": provider},
            # `opencode run` refuses what would ask; it takes a temporary folder's
            # files for an outside directory's.
            "permission": {
                "edit": "allow",
                "bash": "allow",
                "read": "allow",
                "external_directory": "allow",
                "webfetch": "deny",
            },
        }
        (config_dir / "opencode.json").write_text(json.dumps(config))
        # Its plugin SDK marked installed: else it runs `npm install` there at start.
        (config_dir / "node_modules").mkdir(exist_ok=True)
        lock = {
            "lockfileVersion": 3,
            "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}},
        }
        (config_dir / "package-lock.json").write_text(json.dumps(lock))
        env.update(OPENCODE_OFFLINE_ENV)
    elif agent.name == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\nmodel_provider = "scripted"\n'
            'check_for_update_on_startup = false\nweb_search = "disabled"\n\n'
            "[analytics]\nenabled = false\n\n"
            f'[model_providers.scripted]\nname = "Scripted"\nbase_url = "{base_url}"\n'
            'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
        )
        env.update(CODEX_HOME=str(codex_home), SCRIPTED_API_KEY=API_KEY)
    elif agent.name == "claude":
        env.update(CLAUDE_OFFLINE_ENV, ANTHROPIC_BASE_URL=server_url, ANTHROPIC_API_KEY=API_KEY)
    return env


def argv(agent: Agent, prompt: str, base_url: str) -> list[str]:
    """The command that runs one turn of `prompt` in the project (the cwd)."""
    if agent.melgui:
        return [
            sys.executable, "-m", "melgui", "exec", "--transport", "openai", "--url", base_url,
            "--model", MODEL, "--approve", "all", prompt,
        ]  # fmt: skip
    assert agent.binary is not None
    binary = str(agent.binary)
    if agent.name == "opencode":
        return [binary, "run", prompt]
    if agent.name == "codex":
        return [
            binary, "exec", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", prompt,
        ]  # fmt: skip
    return [binary, "-p", prompt, "--allowedTools", "Read,Grep,Edit,Bash"]


def call_for(agent: Agent, step: Step, project: Path) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) of `step` as `agent` offers it."""
    absolute = str(project / step.path)
    name = "melgui" if agent.melgui else agent.name
    if step.kind == "read":
        if name == "melgui":
            return "read_file", {"path": step.path}
        if name == "opencode":
            return "read", {"filePath": absolute}
        if name == "claude":
            return "Read", {"file_path": absolute}
        return "exec_command", {"cmd": f"cat {shlex.quote(step.path)}"}
    if step.kind == "grep":
        if name == "melgui":
            return "grep", {"pattern": step.pattern}
        if name == "opencode":
            return "grep", {"pattern": step.pattern, "path": str(project)}
        if name == "claude":
            return "Grep", {"pattern": step.pattern, "path": str(project), "output_mode": "content"}
        return "exec_command", {"cmd": f"rg -n {shlex.quote(step.pattern)}"}
    if name == "melgui":
        return "edit_file", {"path": step.path, "old_string": step.old, "new_string": step.new}
    if name == "opencode":
        patch = (
            f"*** Begin Patch\n*** Update File: {absolute}\n@@\n-{step.old}\n+{step.new}\n"
            "*** End Patch"
        )
        return "apply_patch", {"patchText": patch}
    if name == "claude":
        return "Edit", {"file_path": absolute, "old_string": step.old, "new_string": step.new}
    script = f"s/^{step.old}$/{step.new}/"
    return "exec_command", {"cmd": f"sed -i {shlex.quote(script)} {shlex.quote(step.path)}"}


def tool_results(api: Api, body: Any) -> int:
    """How many tool results a request carries: the step of the turn it asks for."""
    if not isinstance(body, dict):
        return 0
    if api == "responses":
        items = body.get("input") or []
        return sum(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
    messages = body.get("messages") or []
    if api == "chat":
        return sum(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
    return sum(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for m in messages
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for block in m["content"]
    )
