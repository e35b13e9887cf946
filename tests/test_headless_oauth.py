"""`melgui exec` with an MCP server that needs an OAuth sign-in: a real server and its own
authorization server on loopback (tests/fakes/oauth_server.py), the sign-in driven through
`$BROWSER` by a stand-in that follows the redirects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from melgui.core.config.secrets import key_file_path
from melgui.tools.mcp.oauth.store import KeptSignIn
from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.exec import ROOT, json_lines, melgui_exec
from tests.fakes.mcp import free_port
from tests.fakes.oauth import browser_env, guarded_server, opened


def run(
    model: ScriptedOpenAI, folder: Path, server: str, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return melgui_exec(
        "--transport", "openai", "--url", model.base_url, "--folder", str(folder),
        "--model", "m", "--no-history", "--approve", "all", "--json",
        "--mcp-url", f"guarded={server}", *args, "go",
        env=env,
    )  # fmt: skip


def call_listing(model: ScriptedOpenAI) -> None:
    model.script(
        [tool_calls(tool_call("mcp__guarded__secret_files", {}, id="c1"))],
        [text("Listed."), done()],
    )


def result_of(completed: subprocess.CompletedProcess[str]) -> dict[str, object]:
    return next(e for e in json_lines(completed.stdout) if e["kind"] == "tool_result")


def test_exec_signs_in_through_the_browser_then_reuses_the_kept_tokens(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env, log = browser_env(tmp_path)
    with guarded_server() as server:
        call_listing(scripted_openai)
        first = run(scripted_openai, tmp_path, server.url, env)
        assert first.returncode == 0, first.stderr
        assert result_of(first)["content"] == "plans.md, budget.xlsx"
        assert len(opened(log)) == 1 and opened(log)[0].startswith(server.issuer + "/authorize?")
        assert server.kinds() == ["register", "authorize", "authorization_code"]
        # Kept in the protected file (no keyring here), never in a config file.
        kept = json.loads(key_file_path().read_text(encoding="utf-8"))
        assert any(name.startswith("mcp-oauth:") for name in kept)
        assert key_file_path().stat().st_mode & 0o077 == 0

        call_listing(scripted_openai)
        second = run(scripted_openai, tmp_path, server.url, env, "--no-sign-in")
        assert second.returncode == 0, second.stderr
        assert result_of(second)["content"] == "plans.md, budget.xlsx"
        assert len(opened(log)) == 1  # no second browser
        assert server.kinds() == ["register", "authorize", "authorization_code"]


def test_an_expired_token_is_refreshed_without_a_browser(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env, log = browser_env(tmp_path)
    with guarded_server() as server:
        call_listing(scripted_openai)
        assert run(scripted_openai, tmp_path, server.url, env).returncode == 0
        # The access token runs out, at the server and in what melgui kept of it.
        server.expire_tokens()
        kept = KeptSignIn(server.url)
        record = kept.load()
        assert record.tokens is not None and record.expires_at is not None
        record.expires_at = time.time() - 1
        kept.save(record)
        call_listing(scripted_openai)
        again = run(scripted_openai, tmp_path, server.url, env, "--no-sign-in")
        assert again.returncode == 0, again.stderr
        assert result_of(again)["content"] == "plans.md, budget.xlsx"
        assert len(opened(log)) == 1
        assert server.kinds()[-1] == "refresh_token"


def test_no_sign_in_fails_fast_with_one_line(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env, log = browser_env(tmp_path)
    with guarded_server() as server:
        result = run(scripted_openai, tmp_path, server.url, env, "--no-sign-in")
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert lines == [
            "melgui: MCP server guarded asks for a sign-in and --no-sign-in forbids one; "
            "sign in first with `melgui mcp login guarded`"
        ]
        assert opened(log) == [] and scripted_openai.legs_received == []
        assert "authorize" not in server.kinds()


def melgui_mcp(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "melgui", "mcp", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )  # fmt: skip


def test_mcp_login_signs_in_ahead_and_logout_signs_out(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env, log = browser_env(tmp_path)
    with guarded_server() as server:
        servers = tmp_path / "servers.json"
        servers.write_text(json.dumps({"mcpServers": {"guarded": {"url": server.url}}}))
        login = melgui_mcp("login", "guarded", "--mcp-config", str(servers), env=env)
        assert login.returncode == 0, login.stderr
        assert login.stdout.startswith("Signed in to guarded")
        assert len(opened(log)) == 1

        call_listing(scripted_openai)
        later = run(scripted_openai, tmp_path, server.url, env, "--no-sign-in")
        assert later.returncode == 0, later.stderr
        assert result_of(later)["content"] == "plans.md, budget.xlsx"

        logout = melgui_mcp("logout", "guarded", "--mcp-config", str(servers), env=env)
        assert (logout.returncode, logout.stdout) == (0, "Signed out of guarded.\n")
        after = run(scripted_openai, tmp_path, server.url, env, "--no-sign-in")
        assert after.returncode == 1 and "asks for a sign-in" in after.stderr
        assert len(opened(log)) == 1


def test_a_client_the_owner_registered_signs_in_with_its_own_id_and_secret(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env, log = browser_env(tmp_path)
    port = free_port()
    with guarded_server("--pre-redirect", f"http://127.0.0.1:{port}/callback") as server:
        servers = tmp_path / "servers.json"
        oauth = {
            "clientId": "melgui-pre",
            "clientSecret": "${env:PRE_SECRET}",
            "callbackPort": port,
        }
        servers.write_text(
            json.dumps({"mcpServers": {"guarded": {"url": server.url, "oauth": oauth}}})
        )
        call_listing(scripted_openai)
        result = melgui_exec(
            "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
            "--model", "m", "--no-history", "--approve", "all", "--json",
            "--mcp-config", str(servers), "go",
            env={**env, "PRE_SECRET": "pre-secret"},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result_of(result)["content"] == "plans.md, budget.xlsx"
        assert [e for e in server.events() if e["kind"] != "grant"] == [
            {"kind": "authorize", "client": "melgui-pre", "scopes": ["files:read"]}
        ]  # no registration: the owner's client
        assert server.kinds()[-1] == "authorization_code" and len(opened(log)) == 1
