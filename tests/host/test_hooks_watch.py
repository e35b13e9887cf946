"""Which hooks a folder has, as the host tells views whose loops run elsewhere (a remote
folder's): the events and matchers of its hooks files, told again only when they change
(hooks/watch, hooks/changed: docs/host-protocol.md, "Hooks there"). Over a real host
process: a hooks file a call writes is told before that call's result."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from melgui.core.hooks.there import HooksSummary
from melgui.core.hooks.watch import HooksWatch
from tests.fakes.host_process import HostProcess, runtime_dir


def settings(folder: Path, matcher: str, command: str = "true") -> Path:
    path = folder / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hook = {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    return path


def test_a_folder_is_told_again_only_when_its_events_or_matchers_change(tmp_path: Path) -> None:
    watch = HooksWatch()
    none = watch.watch(str(tmp_path))
    assert none.hooks == () and watch.changed() == []
    settings(tmp_path, "Bash")
    ((folder, bash),) = watch.changed()
    assert folder == str(tmp_path) and bash.version > none.version
    assert bash.wants("PreToolUse", ("Bash", "run_command"))
    assert not bash.wants("PreToolUse", ("Read", "read_file"))
    assert not bash.wants("PostToolUse", ("Bash", "run_command"))
    assert watch.changed() == []
    settings(tmp_path, "Bash", "exit 0")  # another command, the same point: nothing to tell
    assert watch.changed() == []
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    ((_, broken),) = watch.changed()
    assert broken.hooks == () and "not valid JSON" in broken.problems[0]


def test_a_file_put_back_with_its_old_mtime_and_size_is_read_again(tmp_path: Path) -> None:
    """`cp -p` of a backup, a restore: the stamp's change time and inode tell it."""
    path = settings(tmp_path, "Edit")
    before = os.stat(path)
    watch = HooksWatch()
    assert watch.watch(str(tmp_path)).wants("PreToolUse", ("Edit",))
    settings(tmp_path, "Grep")  # as long as "Edit"
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    ((_, now),) = watch.changed()
    assert now.wants("PreToolUse", ("Grep",)) and not now.wants("PreToolUse", ("Edit",))


def test_a_summary_goes_over_the_wire_and_back() -> None:
    summary = HooksSummary(7, (("PreToolUse", "Edit|Write"), ("Stop", "")), ("a problem",))
    back = HooksSummary.from_json(json.loads(json.dumps(summary.to_json())))
    assert back == summary
    assert back.wants("Stop", ("",)) and back.wants("PreToolUse", ("Write", "write_file"))
    assert not back.wants("PreToolUse", ("Bash",))


async def test_a_hooks_file_a_call_writes_is_told_before_the_calls_result(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    written = json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}})
    with runtime_dir() as runtime:
        host = HostProcess(runtime).start()
        try:
            watching, other = await host.client(), await host.client("another view")
            heard: list[tuple[str, dict[str, Any]]] = []
            heard_there: list[str] = []
            watching.on_notification = lambda method, params: heard.append((method, params))
            other.on_notification = lambda method, params: heard_there.append(method)
            first = await watching.call("hooks/watch", folder=str(box))
            await other.call("tools/attach", since=0)  # hears results, watches no hooks
            run = {"call_id": "v/1", "folder": str(box), "name": "write_file",
                   "arguments": {"path": ".claude/settings.json", "content": written}}  # fmt: skip
            await watching.call("tools/run", **run)
            async with asyncio.timeout(30):
                while not any(method == "tools/result" for method, _ in heard):
                    await asyncio.sleep(0.02)
            refused = await _error_of(watching.call("hooks/watch", folder=str(tmp_path / "no")))
            await watching.aclose()
            await other.aclose()
        finally:
            host.stop()
    assert first["summary"]["hooks"] == []
    assert [method for method, _ in heard] == ["hooks/changed", "tools/result"]
    changed = heard[0][1]
    assert changed["folder"] == str(box) and changed["host"] == first["host"]
    summary = HooksSummary.from_json(changed["summary"])
    assert summary.hooks == (("Stop", ""),) and summary.version > first["summary"]["version"]
    assert heard_there == ["tools/result"]
    assert "is not a folder on this host" in refused


async def _error_of(asking: Any) -> str:
    try:
        await asking
    except Exception as exc:
        return str(exc)
    return ""
