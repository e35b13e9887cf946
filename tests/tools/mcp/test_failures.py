"""Servers that fail: at start, mid-call (crash), by hanging, flooding stderr, sending
garbage; stop mid-call; and no process left behind."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from melgui.core.runtime.processes import signal_state
from melgui.tools.mcp import stdio
from melgui.tools.mcp.config import ServerConfig
from melgui.tools.mcp.protocol_log import MAX_LINES, LineLog
from tests.fakes.mcp import alive, fake_stdio, http_server, running, sign_in_server


async def logged(log: LineLog, text: str) -> bool:
    """Whether `text` reaches the log within a few seconds (a tap task writes it)."""
    for _ in range(250):
        if text in log.text():
            return True
        await asyncio.sleep(0.02)
    return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_server_that_fails_to_start_says_why_and_the_others_work(tmp_path: Path) -> None:
    broken = fake_stdio("broken", "--fail-start")
    missing = ServerConfig("missing", "stdio", command="/nonexistent/mcp-server")
    async with running(str(tmp_path), broken, fake_stdio("good"), missing) as manager:
        state = manager.servers["broken"].state
        assert state.status == "failed"
        assert "cannot open the database /nonexistent.db" in state.line()
        assert manager.servers["missing"].state.line().startswith("failed: command not found")
        assert manager.servers["good"].state.status == "ready"
        names = {t.name for t in manager.bridge.catalog.added()}
        assert "mcp__good__echo" in names and not any("broken" in n for n in names)
        outcome = await manager.bridge.registry.run("mcp__good__echo", {"text": "still here"})
        assert outcome.content == "still here"


async def test_a_crash_mid_call_gives_an_error_result_and_a_failed_state(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        server = manager.servers["fake"]
        assert server.process is not None
        pid = server.process.pid
        outcome = await manager.bridge.registry.run("mcp__fake__crash", {})
        assert outcome.status == "error"
        assert "closed the connection during crash" in outcome.content
        assert "about to crash: goodbye" in outcome.content  # its last words
        for _ in range(100):
            if server.state.status == "failed":
                break
            await asyncio.sleep(0.05)
        assert server.state.status == "failed" and "exited (code 3)" in server.state.line()
        assert not alive(pid)
        assert manager.bridge.catalog.get("mcp__fake__echo") is None  # withdrawn
        again = await manager.bridge.registry.run("mcp__fake__echo", {"text": "x"})
        assert again.status == "error"
        await manager.restart("fake")
        assert server.state.status == "ready"
        back = await manager.bridge.registry.run("mcp__fake__echo", {"text": "back"})
        assert back.content == "back"


async def test_a_hung_call_times_out_with_a_clear_error_and_a_cancel(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio(timeout=1.0)) as manager:
        outcome = await manager.bridge.registry.run("mcp__fake__hang", {})
        assert outcome.status == "error"
        assert "did not answer hang within 1 s" in outcome.content
        assert await logged(manager.servers["fake"].log, '"method":"notifications/cancelled"')
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "alive"})
        assert echo.content == "alive"


async def test_stop_mid_call_sends_cancelled_and_the_server_goes_on(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        task = asyncio.ensure_future(manager.bridge.registry.run("mcp__fake__hang", {}))
        server = manager.servers["fake"]
        assert await logged(server.stderr, "hanging now")  # the server is in the call
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the call was not cancelled")
        assert await logged(server.log, '"method":"notifications/cancelled"')
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "fine"})
        assert echo.content == "fine"


async def test_a_stderr_flood_is_bounded_and_the_call_answers(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        outcome = await manager.bridge.registry.run("mcp__fake__flood", {"lines": 20000})
        assert outcome.content == "flooded"
        stderr = manager.servers["fake"].stderr
        for _ in range(200):
            if any("noise line 19999" in line for line in stderr.tail(1)):
                break
            await asyncio.sleep(0.02)
        assert len(stderr.lines) == MAX_LINES and stderr.dropped >= 20000 - MAX_LINES
        assert "earlier lines dropped" in stderr.text()


async def test_a_malformed_message_is_logged_and_the_session_goes_on(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        outcome = await manager.bridge.registry.run("mcp__fake__garble", {})
        assert (outcome.status, outcome.content) == ("ok", "after garbage")
        assert "malformed message from the server: 'this is not json'" in (
            manager.servers["fake"].stderr.text()
        )
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "ok"})
        assert echo.content == "ok"


async def test_servers_get_default_signals_their_own_group_and_leave_nothing(
    tmp_path: Path,
) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under a launcher
    try:
        async with running(str(tmp_path), fake_stdio(env={"MCP_FAKE_MARK": "m7"})) as manager:
            server = manager.servers["fake"]
            assert server.process is not None
            pid = server.process.pid
            masks = signal_state(pid)
            assert masks["SigIgn"] & (1 << (signal.SIGINT - 1)) == 0
            assert masks["SigBlk"] == 0
            assert os.getpgid(pid) == pid != os.getpgid(0)
            who = await manager.bridge.registry.run("mcp__fake__whoami", {})
            assert who.content == f"mark=m7 cwd={tmp_path}"  # env added, project folder
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not group_alive(pid)


async def test_tools_list_changed_is_honoured(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        assert manager.bridge.catalog.get("mcp__fake__extra") is None
        await manager.bridge.registry.run("mcp__fake__grow", {})
        for _ in range(200):
            if manager.bridge.catalog.get("mcp__fake__extra") is not None:
                break
            await asyncio.sleep(0.02)
        outcome = await manager.bridge.registry.run("mcp__fake__extra", {})
        assert outcome.content == "extra tool"


async def test_secrets_never_reach_the_logs(tmp_path: Path) -> None:
    os.environ["MCP_TEST_SECRET"] = "sk-very-secret-123"
    try:
        config = fake_stdio(env={"MCP_FAKE_MARK": "${MCP_TEST_SECRET}"})
        async with running(str(tmp_path), config) as manager:
            who = await manager.bridge.registry.run("mcp__fake__whoami", {})
            assert "sk-very-secret-123" in who.content  # the server got it...
            log = manager.servers["fake"].log.text()
            assert "sk-very-secret-123" not in log and "•••" in log  # ...the log shows none
    finally:
        del os.environ["MCP_TEST_SECRET"]


async def test_a_missing_reference_fails_the_server_in_one_line(tmp_path: Path) -> None:
    config = fake_stdio(env={"TOKEN": "${MCP_NOT_SET_ANYWHERE}"})
    async with running(str(tmp_path), config) as manager:
        assert manager.servers["fake"].state.line() == (
            "failed: the environment variable MCP_NOT_SET_ANYWHERE is not set"
        )


async def test_a_server_refusing_the_given_token_says_so_in_one_line(tmp_path: Path) -> None:
    with sign_in_server() as url:
        given = ServerConfig("docs", "http", url=url, headers={"Authorization": "Bearer old"})
        async with running(str(tmp_path), given) as manager:
            assert manager.servers["docs"].state.line() == (
                "failed: this server refused the Authorization in `headers` and asks for an "
                'OAuth sign-in; remove that header (and any "oauth": false) to sign in'
            )


async def test_servers_left_running_are_killed_at_exit(tmp_path: Path) -> None:
    """A shutdown that ran out of time leaves no server behind (the atexit hook)."""
    async with running(str(tmp_path), fake_stdio()) as manager:
        process = manager.servers["fake"].process
        assert process is not None and group_alive(process.pid)
        stdio._kill_leftovers()  # what interpreter exit runs
        await asyncio.wait_for(process.process.wait(), 10)
        assert not group_alive(process.pid)


async def test_a_reply_over_the_line_limit_is_an_error_at_once_naming_its_size(
    tmp_path: Path,
) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        chars = stdio.LINE_LIMIT + 1024 * 1024
        outcome = await manager.bridge.registry.run("mcp__fake__big", {"chars": chars})
        assert outcome.status == "error"
        assert "the server's message is" in outcome.content
        assert "MiB, over the 32 MiB limit" in outcome.content
        assert "did not answer" not in outcome.content
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "still here"})
        assert echo.content == "still here"


async def test_a_reply_nested_too_deep_is_an_error_at_once(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        outcome = await manager.bridge.registry.run("mcp__fake__deep", {})
        assert outcome.status == "error"
        assert "malformed message from the server" in outcome.content
        assert "did not answer" not in outcome.content
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "still here"})
        assert echo.content == "still here"


async def test_an_http_server_that_goes_away_quotes_its_log_not_a_stderr(
    tmp_path: Path,
) -> None:
    with http_server() as url:
        config = ServerConfig("web", "http", url=url)
        async with running(str(tmp_path), config) as manager:
            server = manager.servers["web"]
            assert server.state.status == "ready"
            outcome = await manager.bridge.registry.run("mcp__web__vanish", {})
            assert outcome.status == "error"
            assert "stderr" not in outcome.content
            assert "about to vanish: goodbye" in outcome.content  # what it logged last
            assert "Its log ended with" in outcome.content
            assert "stderr" not in server.state.line()


async def test_an_old_http_sse_server_is_reached_through_the_sse_transport(
    tmp_path: Path,
) -> None:
    with http_server(legacy=True) as url:
        config = ServerConfig("old", "http", url=url)
        async with running(str(tmp_path), config) as manager:
            server = manager.servers["old"]
            assert server.state.status == "ready", server.state.line()
            assert "trying the HTTP+SSE transport" in server.stderr.text()
            outcome = await manager.bridge.registry.run("mcp__old__echo", {"text": "over sse"})
            assert outcome.content == "over sse"
        # Named as such ("type": "sse"), it is reached the old way at once.
        config = ServerConfig("old", "http", url=url, sse=True)
        async with running(str(tmp_path), config) as manager:
            server = manager.servers["old"]
            assert server.state.status == "ready", server.state.line()
            assert "trying the HTTP+SSE transport" not in server.stderr.text()
