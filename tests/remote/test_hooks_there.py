"""A remote folder's own hooks run there, by melgui's host, through a local command that
behaves like a container's exec (tests/remote/local_target.py): Claude Code's documented
hooks file in the folder there judges the loop's calls as a local folder's does, only
while the folder is trusted; the person's own hooks run here; a hook there is killed at
its timeout with its children; and a link dropped while a hook runs still gives the call
exactly one result, saying why in plain words when no answer came."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

from melgui.core.config.settings import config_dir
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.protocol.events import ToolCall
from melgui.remote.connect import folder_key
from melgui.remote.link import Link
from melgui.remote.remote_tools import RemoteTools
from tests.core.hooks.test_claude_hooks import DATA, tool_results
from tests.fakes import ScriptedRelay, done, tool_call, tool_calls
from tests.remote.fixtures import box_link, make_link, turn_there, until
from tests.remote.local_target import box_host, box_target, host_pid

LIMIT = 60.0


def project_there(folder: Path) -> Path:
    """Claude Code's documented hooks (tests/data/claude_hooks) in the folder there; no
    trust recorded here (the calls' options carry it)."""
    hooks = folder / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(DATA / "settings.json", folder / ".claude" / "settings.json")
    for script in ("bash_command_validator.py", "rewrite_input.py"):
        shutil.copy(DATA / script, hooks / script)
    return folder


def write_hooks(folder: Path, event: str, command: str, timeout: float = 30) -> None:
    """A project hooks file (`.melgui/hooks.json`) with one command for `event`."""
    hook = {"type": "command", "command": command, "timeout": timeout}
    (folder / ".melgui").mkdir(exist_ok=True)
    block = {"hooks": {event: [{"matcher": "", "hooks": [hook]}]}}
    (folder / ".melgui" / "hooks.json").write_text(json.dumps(block))


class CountingLink(Link):
    """The real link, counting the points it sends there (`hooks/run`) by event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.points: list[str] = []

    async def run_hooks(
        self, call_id: str, folder: str, event: str, names: list[str], payload: dict[str, Any]
    ) -> dict[str, Any]:
        self.points.append(event)
        return await super().run_hooks(call_id, folder, event, names, payload)


def counting_link(tmp_path: Path, box: Path) -> CountingLink:
    made = make_link(tmp_path, box)
    return CountingLink(made.target, made.host_argv, heartbeat=made.heartbeat,
                        dead_after=made.dead_after, backoff=made.backoff)  # fmt: skip


async def test_the_documented_validator_there_blocks_a_command_and_the_model_reads_why(
    tmp_path: Path,
) -> None:
    box = project_there(tmp_path / "box")
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "grep -r TODO ."}))], [done()]
        )
        (call,), _desk = await turn_there(tmp_path, box, relay)
        host = host_pid(tmp_path / "run")
    assert call.status == "denied"
    assert "Use 'rg' (ripgrep) instead of 'grep'" in call.content
    assert "Use 'rg' (ripgrep) instead of 'grep'" in tool_results(relay, 1)[0]
    validator = next(r for r in call.hooks if "bash_command_validator" in r.command)
    assert validator.exit_code == 2 and validator.effect.startswith("denied")
    assert validator.matcher == "Bash"
    assert validator.origin.startswith(".claude/settings.json on ")  # where it ran
    # The logging hook ran there, in the folder there ($CLAUDE_PROJECT_DIR there).
    assert (box / "bash-command-log.txt").read_text() == "grep -r TODO . - No description\n"
    assert not (tmp_path / "here" / "bash-command-log.txt").exists()
    assert host is not None


async def test_a_hook_there_rewrites_a_command_and_runs_in_the_folder_as_the_hosts_child(
    tmp_path: Path,
) -> None:
    box = project_there(tmp_path / "box")
    (box / "src").mkdir()
    (box / "src" / "a.txt").write_text("a\n")
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script([tool_calls(tool_call("run_command", {"command": "ls src"}))], [done()])
        write_hooks(box, "PostToolUse", 'echo "$PPID $(pwd)" > ran-by.txt')
        (call,), _desk = await turn_there(tmp_path, box, relay)
        host = host_pid(tmp_path / "run")
    assert call.status == "ok" and "a.txt" in call.content
    rewrite = next(r for r in call.hooks if "rewrite_input" in r.command)
    assert "rewrote the input" in rewrite.effect
    ran = json.loads(rewrite.stdout)["hookSpecificOutput"]["updatedInput"]
    assert ran == {"command": "ls --color=never src"}
    # The project's .melgui/hooks.json there: its hook's parent is melgui's host there.
    parent, cwd = (box / "ran-by.txt").read_text().split()
    assert int(parent) == host and cwd == str(box)


async def test_an_untrusted_folders_hooks_do_not_run_there(tmp_path: Path) -> None:
    box = project_there(tmp_path / "box")
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "grep -r TODO . || true"}))],
            [done()],
        )
        (call,), _desk = await turn_there(tmp_path, box, relay, trusted=False)
    assert call.status == "ok" and call.hooks == ()
    assert not (box / "bash-command-log.txt").exists()


async def test_an_allow_there_answers_a_question_but_never_overrides_a_deny_rule(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (box / "keep.txt").write_text("kept\n")
    allow = {"hookSpecificOutput": {"permissionDecision": "allow",
                                    "permissionDecisionReason": "fine here"}}  # fmt: skip
    write_hooks(box, "PreToolUse", f"echo '{json.dumps(allow)}'")
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "rm keep.txt"}, id="c1"),
                        tool_call("run_command", {"command": "echo asked-nobody"}, id="c2"))],
            [done()],
        )  # fmt: skip
        (removed, echoed), _desk = await turn_there(
            tmp_path, box, relay, rules=["deny run_command: rm"], modes={"run_command": "ask"}
        )
    assert removed.status == "denied" and (box / "keep.txt").read_text() == "kept\n"
    assert removed.hooks[0].effect.startswith("allowed")  # it ran, and its allow lost
    assert echoed.status == "ok" and "asked-nobody" in echoed.content  # answered, no question


async def test_the_persons_own_hooks_run_here_beside_the_folders_there(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    write_hooks(box, "PreToolUse", "echo there > there.txt")
    keep = 'cat > "$MELGUI_PROJECT_DIR/own.json"; '
    keep += 'echo "$MELGUI_REMOTE_FOLDER" > "$MELGUI_PROJECT_DIR/where"'
    own = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": keep},
        {"type": "command", "command": "echo 'not in this folder' >&2; exit 2"},
    ]}]}}  # fmt: skip
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "hooks.json").write_text(json.dumps(own))
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("write_file", {"path": "w.txt", "content": "x"}))], [done()]
        )
        (call,), _desk = await turn_there(tmp_path, box, relay)
    here = tmp_path / "here"
    assert call.status == "denied" and "not in this folder" in call.content
    assert not (box / "w.txt").exists()
    # The person's ran here, in the stand-in folder, told the path there in its JSON.
    sent = json.loads((here / "own.json").read_text())
    assert sent["cwd"] == str(box) and sent["tool_input"]["file_path"] == str(box / "w.txt")
    assert (here / "where").read_text().strip() == where(tmp_path, box)
    assert (box / "there.txt").read_text() == "there\n"  # and the folder's, there
    there = [r.origin for r in call.hooks if " on " in r.origin]
    assert len(call.hooks) == 3 and there == [f".melgui/hooks.json on {where(tmp_path, box)}"]


def where(tmp_path: Path, box: Path) -> str:
    """How the person is told the folder there (its key: the command and the path)."""
    return folder_key(box_target(tmp_path / "run", tmp_path / "data", box))


def hooks_there(tmp_path: Path, box: Path, link: Any) -> Hooks:
    """The hooks of a conversation in `box` there, as the desk makes them (none here)."""
    tools = RemoteTools(link, str(box), options={"diagnostics": True})
    here = tmp_path / "here"
    here.mkdir(exist_ok=True)
    return Hooks(HookFiles(str(here), project_files=False), cwd=str(box),
                 there=tools.hooks_there())  # fmt: skip


async def test_a_hook_there_is_killed_with_its_children_at_its_timeout(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    write_hooks(box, "PreToolUse", "sleep 60 & echo $! > child; sleep 60", timeout=1)
    async with box_link(tmp_path, box) as link:
        call = ToolCall("c1", "run_command", json.dumps({"command": "ls"}))
        before = await asyncio.wait_for(
            hooks_there(tmp_path, box, link).before_call(call, {"command": "ls"}), LIMIT
        )
    (run,) = before.runs
    assert run.timed_out and "timed out after 1 s" in run.problem
    assert before.verdict is None  # a hook's failure does not judge the call
    child = int((box / "child").read_text())
    assert not _alive(child)


async def test_a_link_dropped_while_a_hook_runs_there_still_gives_its_answer_once(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    deny = {"hookSpecificOutput": {"permissionDecision": "deny",
                                   "permissionDecisionReason": "not today"}}  # fmt: skip
    write_hooks(box, "PreToolUse", f"echo ran >> runs; sleep 1.5; echo '{json.dumps(deny)}'")
    async with box_link(tmp_path, box) as link:
        call = ToolCall("c1", "run_command", json.dumps({"command": "ls"}))
        hooks = hooks_there(tmp_path, box, link)
        judging = asyncio.ensure_future(hooks.before_call(call, {"command": "ls"}))
        await until(lambda: (box / "runs").exists())
        pid = link.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # the link's process (ssh's place) dies mid-hook
        before = await asyncio.wait_for(judging, LIMIT)
        reconnects = link.reconnects
    assert reconnects >= 1
    assert before.verdict == "deny" and before.reason == "not today"
    assert (box / "runs").read_text() == "ran\n"  # it ran once there


async def test_a_host_that_dies_while_a_hook_runs_denies_the_call_in_plain_words(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    write_hooks(box, "PreToolUse", "echo $$ > pid; echo ran >> runs; exec sleep 30")
    runtime = tmp_path / "run"
    with box_host(runtime):
        link = make_link(tmp_path, box)
        await link.open()
        try:
            call = ToolCall("c1", "run_command", json.dumps({"command": "ls"}))
            hooks = hooks_there(tmp_path, box, link)
            judging = asyncio.ensure_future(hooks.before_call(call, {"command": "ls"}))
            await until(lambda: (box / "runs").exists())
            pid = host_pid(runtime)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)  # melgui's host there dies mid-hook
            before = await asyncio.wait_for(judging, LIMIT)
            after = await hooks.after_call(call, {"command": "ls"}, "ok", "")
        finally:
            await link.aclose()
    assert before.verdict == "deny"
    assert "stopped while the project's PreToolUse hooks ran" in before.reason
    assert "the call was not run without their answer" in before.reason
    (run,) = before.runs
    assert run.problem and run.effect.startswith("denied: ")
    assert (box / "runs").read_text() == "ran\n"  # never sent again to the new host
    assert after.runs == ()  # the new host: no PostToolUse hook configured, none ran
    os.kill(int((box / "pid").read_text()), signal.SIGKILL)  # outlived its killed host


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


async def test_a_closing_conversation_does_not_wait_for_a_reconnect_to_run_session_end(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    write_hooks(box, "SessionEnd", "echo ended >> ends")
    async with box_link(tmp_path, box) as link:
        hooks = hooks_there(tmp_path, box, link)
        link.host_argv = ["false"]  # every reconnect fails from now on
        pid = link.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await until(lambda: link.state.startswith("reconnecting"))
        said = await asyncio.wait_for(hooks.session_ended(), 5)
    (run,) = said.runs
    assert "did not run: the link is down (reconnecting to" in run.problem
    assert not said.blocked and not (box / "ends").exists()


async def test_a_point_for_a_folder_that_is_not_there_is_answered_at_once(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    async with box_link(tmp_path, box) as link:
        gone = str(tmp_path / "gone")
        ran = await asyncio.wait_for(link.run_hooks("h/1", gone, "Stop", [""], {}), 10)
        call = await asyncio.wait_for(link.run_call("c/1", gone, "list_dir", {}), 10)
    assert ran["status"] == "error" and "is not a folder on this host" in ran["content"]
    assert ran["content"].startswith("the project's Stop hooks did not run: ")
    assert call["status"] == "error" and "is not a folder on this host" in call["content"]


# -- which points are sent there ---------------------------------------------------------

BASH_ONLY = {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "echo \"$(cat)\" >> judged"}]}]}  # fmt: skip


async def test_a_point_no_hook_there_matches_is_not_sent_there(tmp_path: Path) -> None:
    """Hooks only for PreToolUse on Bash: a read, every PostToolUse, the prompt and the
    turn's end send nothing there; the command's PreToolUse runs there, once."""
    box = tmp_path / "box"
    (box / ".claude").mkdir(parents=True)
    (box / ".claude" / "settings.json").write_text(json.dumps({"hooks": BASH_ONLY}))
    (box / "a.txt").write_text("alpha\n")
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"))],
            [tool_calls(tool_call("run_command", {"command": "echo hi"}, id="c1"))],
            [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r2"))],
            [done()],
        )
        link = counting_link(tmp_path, box)
        (read, ran, again), _desk = await turn_there(tmp_path, box, relay, link=link)
    assert link.points == ["PreToolUse"]  # the command's, and nothing else
    assert read.status == again.status == ran.status == "ok"
    assert read.hooks == () and again.hooks == ()
    (run,) = ran.hooks
    assert run.matcher == "Bash" and run.exit_code == 0
    judged = [json.loads(line) for line in (box / "judged").read_text().splitlines()]
    assert [j["tool_input"] for j in judged] == [{"command": "echo hi"}]


async def test_a_hooks_file_a_call_writes_there_judges_the_next_call(tmp_path: Path) -> None:
    """The model writes a PreToolUse hook that refuses commands: the very next command
    is refused by it (the host told the view before the write's result)."""
    box = tmp_path / "box"
    box.mkdir()
    refuse = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no commands here' >&2; exit 2"}]}]}}  # fmt: skip
    written = {"path": ".claude/settings.json", "content": json.dumps(refuse)}
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "echo before"}, id="c0"))],
            [tool_calls(tool_call("write_file", written, id="w1"))],
            [tool_calls(tool_call("run_command", {"command": "touch made"}, id="c1"))],
            [done()],
        )
        link = counting_link(tmp_path, box)
        (before, write, refused), _desk = await turn_there(tmp_path, box, relay, link=link)
    assert before.status == "ok" and write.status == "ok"
    assert refused.status == "denied" and "no commands here" in refused.content
    assert not (box / "made").exists()
    assert link.points == ["PreToolUse"]  # none before the file, its own after


async def test_a_hooks_file_edited_by_hand_there_is_honoured_once_the_host_looks(
    tmp_path: Path,
) -> None:
    """Edited by a person (no call of this view): the host looks every second and tells
    the view; from then on the new hook's points are sent and run there."""
    box = tmp_path / "box"
    (box / ".claude").mkdir(parents=True)
    (box / ".claude" / "settings.json").write_text(json.dumps({"hooks": BASH_ONLY}))
    with box_host(tmp_path / "run"):
        link = counting_link(tmp_path, box)
        await link.open()
        try:
            hooks = hooks_there(tmp_path, box, link)
            call = ToolCall("c1", "read_file", json.dumps({"path": "a.txt"}))
            first = await hooks.after_call(call, {"path": "a.txt"}, "ok", "alpha")
            watched = link.hooks_known(str(box))
            post = {"PostToolUse": [{"hooks": [{"type": "command", "command": "echo p >> post"}]}]}
            edited = {"hooks": {**BASH_ONLY, **post}}
            (box / ".claude" / "settings.json").write_text(json.dumps(edited))
            started = asyncio.get_running_loop().time()
            await until(lambda: _wants(link, box, "PostToolUse", ("Read", "read_file")))
            took = asyncio.get_running_loop().time() - started
            second = await hooks.after_call(call, {"path": "a.txt"}, "ok", "alpha")
        finally:
            await link.aclose()
    assert watched is not None and not watched.wants("PostToolUse", ("Read",))
    assert first.runs == () and link.points == ["PostToolUse"]  # the second point only
    assert took < 10  # the host looks every second (plenty of room for a loaded machine)
    assert [r.exit_code for r in second.runs] == [0] and (box / "post").read_text() == "p\n"


def _wants(link: Link, box: Path, event: Any, names: tuple[str, ...]) -> bool:
    known = link.hooks_known(str(box))
    return known is not None and known.wants(event, names)


async def test_a_hooks_file_written_while_the_link_was_down_judges_the_next_call(
    tmp_path: Path,
) -> None:
    """A command writes a hooks file there while the link is down: its result comes
    back with the reconnect, and by then the view knows the new hook (it asks again on
    every reconnect, before the results it missed)."""
    box = tmp_path / "box"
    box.mkdir()
    refuse = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no commands here' >&2; exit 2"}]}]}}  # fmt: skip
    (tmp_path / "refuse.json").write_text(json.dumps(refuse))
    writes = f"touch started; sleep 1; mkdir -p .claude; cp {tmp_path / 'refuse.json'} "
    writes += ".claude/settings.json; touch written"
    with box_host(tmp_path / "run"):
        link = counting_link(tmp_path, box)
        await link.open()
        argv = link.host_argv
        try:
            hooks = hooks_there(tmp_path, box, link)
            tools = RemoteTools(link, str(box), options={"diagnostics": True})
            first = ToolCall("c1", "run_command", json.dumps({"command": writes}))
            assert (await hooks.before_call(first, {"command": writes})).runs == ()
            running = asyncio.ensure_future(tools.run("run_command", {"command": writes}))
            await until(lambda: (box / "started").exists())
            link.host_argv = ["false"]  # no reconnect until the call has ended there
            pid = link.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            await until(lambda: (box / "written").exists())
            link.host_argv = argv
            outcome = await asyncio.wait_for(running, LIMIT)
            second = ToolCall("c2", "run_command", json.dumps({"command": "touch made"}))
            judged = await hooks.before_call(second, {"command": "touch made"})
        finally:
            await link.aclose()
    assert outcome.status == "ok" and link.reconnects >= 1
    assert judged.verdict == "deny" and "no commands here" in judged.reason
    assert link.points == ["PreToolUse"]  # the second call's only
