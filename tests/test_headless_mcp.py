"""`melgui exec` with MCP servers: the test server and a real one from PyPI, end to end
against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.tools.mcp.config import user_path
from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines, melgui_exec
from tests.fakes.mcp import fake_entry
from tests.fakes.oauth import browser_env, opened


def servers_file(path: Path, **entries: object) -> Path:
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


def openai(server: ScriptedOpenAI, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return melgui_exec(
        "--transport", "openai", "--url", server.base_url, "--folder", str(folder),
        "--model", "m", *args,
    )  # fmt: skip


def test_an_mcp_call_runs_pairs_and_names_its_server(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = servers_file(tmp_path / "servers.json", fake=fake_entry())
    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__echo", {"text": "from mcp"}, id="m1"))],
        [text("Echoed."), done()],
    )
    result = openai(
        scripted_openai, tmp_path, "--mcp-config", str(config), "--approve", "all", "--json", "go"
    )
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    call = next(e for e in events if e["kind"] == "tool_call")
    answer = next(e for e in events if e["kind"] == "tool_result")
    assert call["server"] == "fake" and call["name"] == "mcp__fake__echo"
    assert answer == {
        "kind": "tool_result", "id": "m1", "status": "ok", "content": "from mcp", "server": "fake",
    }  # fmt: skip
    first, second = scripted_openai.legs_received
    offered = next(t for t in first.json["tools"] if t["function"]["name"] == "mcp__fake__echo")
    assert offered["function"]["description"] == "Echo the text back."
    assert offered["function"]["parameters"]["required"] == ["text"]
    reply = second.json["messages"][-1]
    assert (reply["role"], reply["tool_call_id"], reply["content"]) == ("tool", "m1", "from mcp")


def test_mcp_calls_are_denied_by_default_headless(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = servers_file(tmp_path / "servers.json", fake=fake_entry())
    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__echo", {"text": "x"}, id="m1"))], [done()]
    )
    result = openai(scripted_openai, tmp_path, "--mcp-config", str(config), "--json", "go")
    assert result.returncode == 0, result.stderr
    answer = next(e for e in json_lines(result.stdout) if e["kind"] == "tool_result")
    assert answer["status"] == "denied" and answer["server"] == "fake"


def test_no_mcp_and_an_untrusted_project_file_start_nothing(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / ".melgui").mkdir()
    servers_file(tmp_path / ".melgui" / "mcp.json", proj=fake_entry())
    user = user_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    servers_file(user, mine=fake_entry(), broken=fake_entry("--fail-start"))
    try:
        scripted_openai.script([text("a"), done()], [text("b"), done()])
        result = openai(scripted_openai, tmp_path, "hi")
        assert result.returncode == 0, result.stderr
        assert "is not trusted yet, so its servers did not start" in result.stderr
        assert "MCP server broken: failed: " in result.stderr and "nonexistent.db" in result.stderr
        names = scripted_openai.legs_received[0].tool_names
        assert "mcp__mine__echo" in names and not [n for n in names if "proj" in n]
        result = openai(scripted_openai, tmp_path, "--no-mcp", "hi")
        assert result.returncode == 0, result.stderr
        assert not [n for n in scripted_openai.legs_received[1].tool_names if n.startswith("mcp")]
    finally:
        user.unlink()


@pytest.fixture(scope="session")
def time_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcp-server-time from PyPI, in a venv of its own made here (needs PyPI, nothing else)."""
    venv = tmp_path_factory.mktemp("mcp-time") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "mcp-server-time"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return venv / "bin" / "mcp-server-time"


def test_a_real_server_from_pypi_end_to_end(
    scripted_openai: ScriptedOpenAI, tmp_path: Path, time_server: Path
) -> None:
    config = servers_file(
        tmp_path / "servers.json",
        time={"command": str(time_server), "args": ["--local-timezone", "UTC"]},
    )
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    scripted_openai.script(
        [tool_calls(tool_call("mcp__time__convert_time", arguments, id="t1"))],
        [text("It is 21:00 in Tokyo."), done()],
    )
    result = openai(
        scripted_openai, tmp_path, "--mcp-config", str(config), "--approve", "all", "--json",
        "noon UTC in Tokyo?",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    answer = next(e for e in events if e["kind"] == "tool_result")
    assert answer["id"] == "t1" and answer["status"] == "ok" and answer["server"] == "time"
    assert "Asia/Tokyo" in answer["content"] and "21:00" in answer["content"]
    names = scripted_openai.legs_received[0].tool_names
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(names)
    reply = scripted_openai.legs_received[1].json["messages"][-1]
    assert reply["tool_call_id"] == "t1" and "21:00" in reply["content"]


def test_a_trusted_servers_read_only_tool_runs_under_approve_reads(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = servers_file(
        tmp_path / "servers.json", fake=fake_entry(trusted=True), plain=fake_entry()
    )
    scripted_openai.script(
        [
            tool_calls(
                tool_call("mcp__fake__echo", {"text": "read"}, id="m1"),
                tool_call("mcp__fake__fail", {}, id="m2"),
                tool_call("mcp__plain__echo", {"text": "x"}, id="m3"),
            )
        ],
        [done()],
    )
    result = openai(scripted_openai, tmp_path, "--mcp-config", str(config), "--json", "go")
    assert result.returncode == 0, result.stderr
    answers = {e["id"]: e for e in json_lines(result.stdout) if e["kind"] == "tool_result"}
    # echo claims readOnlyHint on a trusted server; fail does not; plain is not trusted
    assert answers["m1"]["status"] == "ok" and answers["m1"]["content"] == "read"
    assert answers["m2"]["status"] == "denied"
    assert answers["m3"]["status"] == "denied"


def test_sampling_is_refused_in_exec_unless_a_flag_allows_it(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = servers_file(tmp_path / "servers.json", fake=fake_entry())
    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__ask_model", {}, id="a1"))],
        [text("Refused."), done()],
    )
    args = ("--mcp-config", str(config), "--approve", "all", "--json", "--no-history")
    result = openai(scripted_openai, tmp_path, *args, "ask")
    assert result.returncode == 0, result.stderr
    answer = next(e for e in json_lines(result.stdout) if e["kind"] == "tool_result")
    assert answer["content"] == (
        "refused: melgui exec refuses sampling requests unless run with --mcp-sampling allow"
    )
    assert len(scripted_openai.legs_received) == 2  # no leg for the server

    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__ask_model", {}, id="a2"))],
        [text("Forty-two.")],  # the server's leg
        [text("It said so."), done()],
    )
    result = openai(scripted_openai, tmp_path, *args, "--mcp-sampling", "allow", "ask")
    assert result.returncode == 0, result.stderr
    answer = next(e for e in json_lines(result.stdout) if e["kind"] == "tool_result")
    assert answer["content"] == "the model (m) said: Forty-two."
    sampled = scripted_openai.legs_received[3].json
    assert sampled["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "What is six times seven?"},
    ]
    assert "tools" not in sampled or not sampled["tools"]


def test_exec_json_shows_an_mcp_calls_progress(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = servers_file(tmp_path / "servers.json", fake=fake_entry())
    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__steps", {"count": 3, "pause": 0.1}, id="s1"))],
        [text("Stepped."), done()],
    )
    args = ("--mcp-config", str(config), "--approve", "all", "--json", "--no-history")
    result = openai(scripted_openai, tmp_path, *args, "step")
    assert result.returncode == 0, result.stderr
    reports = [e for e in json_lines(result.stdout) if e["kind"] == "progress"]
    assert reports == [
        {"kind": "progress", "id": "s1", "progress": float(n), "total": 3.0,
         "message": f"step {n} of 3", "server": "fake"}
        for n in (1, 2, 3)
    ]  # fmt: skip


def test_exec_declines_a_servers_address_in_words_and_opens_it_only_when_allowed(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    """URL-mode elicitation: the address and the server's words on stderr; the browser
    ($BROWSER, the stand-in that logs what it opened) only with --mcp-open-urls."""
    config = servers_file(tmp_path / "servers.json", fake=fake_entry())
    browser, log = browser_env(tmp_path)
    page = "http://127.0.0.1:9/checkout"  # nothing listens: the stand-in logs, then fails
    for _ in range(2):
        scripted_openai.script(
            [tool_calls(tool_call("mcp__fake__pay", {"url": page}, id="p1"))],
            [text("Paid?"), done()],
        )
    args = ("--mcp-config", str(config), "--approve", "all", "--json", "--no-history")
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--model", "m", *args, "pay", env=browser,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    answer = next(e for e in json_lines(result.stdout) if e["kind"] == "tool_result")
    assert answer["content"] == "decline"
    assert (
        f"melgui: MCP server fake asks you to open {page}: Pay the deposit for table 7. — "
        "declined; run with --mcp-open-urls to open such addresses"
    ) in result.stderr
    assert opened(log) == []
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--model", "m", *args, "--mcp-open-urls", "pay", env=browser,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    answer = next(e for e in json_lines(result.stdout) if e["kind"] == "tool_result")
    assert answer["content"] == "accept"
    assert opened(log) == [page]
