"""The container form: `melgui exec --via 'docker exec -i box' --folder /abs/path`, tested
with a local command that behaves like one (tests/remote/local_target.py)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import melgui_exec
from tests.remote.fixtures import exec_in_box
from tests.remote.local_target import box_host


def test_exec_through_a_command_that_gives_the_target(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    folder = tmp_path / "in-the-box"
    folder.mkdir()
    runtime = tmp_path / "run"
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "made.txt", "content": "boxed"}, id="w"))],
        [text("Made."), done()],
    )
    with box_host(runtime):
        result = exec_in_box(
            scripted_relay.base_url, tmp_path, folder, "--approve", "all", "make it"
        )
        assert (runtime / "melgui" / "host.json").exists()  # the tools ran in the box's host
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Made.\n"
    assert (folder / "made.txt").read_text() == "boxed"


def test_a_target_that_cannot_be_reached_says_why(tmp_path: Path) -> None:
    result = melgui_exec(
        "--url", "http://127.0.0.1:9", "--via", "false", "--folder", "/work", "hi",
        env={"MELIAI_API_KEY": "k"},
    )  # fmt: skip
    assert result.returncode == 1
    # No host command given: melgui first looks there for its install, and says why not.
    assert result.stderr.strip() == (
        "melgui: cannot reach false: the command ended (exit status 1) before it answered"
    )
