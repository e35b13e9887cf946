"""A remote folder's language-server diagnostics, from the language server on the remote
host (pylsp with pyflakes, as the local diagnostics tests use), through a local command
that behaves like a container's exec (tests/remote/local_target.py): an edit there that
introduces an error gets it in its result (what the model reads next) and on its card, as
a local folder's does; the `diagnostics` tool lists it there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.remote.fixtures import turn_there
from tests.remote.local_target import box_host

PYTHON_BIN = Path(sys.executable).parent
EXPECTED = "app.py:2:20: error: undefined name 'nam' (pyflakes)"

needs_pylsp = pytest.mark.skipif(
    not (PYTHON_BIN / "pylsp").exists(), reason="pylsp is not installed (pip install .[test])"
)


@needs_pylsp
async def test_an_edit_there_gets_the_language_servers_errors_from_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the host there finds pylsp on its PATH (the test's environment is the box's)
    monkeypatch.setenv("PATH", os.pathsep.join([str(PYTHON_BIN), os.environ.get("PATH", "")]))
    box = tmp_path / "box"
    box.mkdir()
    (box / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    here = tmp_path / "here"  # the window's own folder: untrusted, no server runs here
    here.mkdir()
    edit = {"path": "app.py", "old_string": "+ name", "new_string": "+ nam"}
    with ScriptedRelay() as relay, box_host(tmp_path / "run"):
        relay.script(
            [tool_calls(tool_call("edit_file", edit, id="e1"))],
            [tool_calls(tool_call("diagnostics", {}, id="d1"))],
            [text("fixed"), done()],
        )
        modes = {"edit_file": "auto", "diagnostics": "auto"}
        finished, desk = await turn_there(tmp_path, box, relay, modes=modes, limit=100)
    edited, listed = finished
    assert edited.status == "ok" and "nam" in (box / "app.py").read_text()
    assert EXPECTED in edited.content and "[Diagnostics from pylsp: 1 new" in edited.content
    assert any(EXPECTED in note for note in edited.notes)  # on the call's card
    sent = [m for m in relay.legs_received[1].messages if m.get("role") == "tool"]
    assert EXPECTED in sent[0]["content"]  # what the model read next
    assert EXPECTED in listed.content  # the diagnostics tool, answered there
    assert not desk.diagnostics_for(str(box)).servers  # nothing ran here


async def test_a_remote_folders_language_servers_wait_for_the_persons_trust(
    tmp_path: Path,
) -> None:
    from melgui.core.config.settings import RemoteHost
    from melgui.core.config.trust import FolderTrust
    from melgui.remote.connect import folder_key
    from melgui.remote.hosts import RemoteHosts, target_of

    box = tmp_path / "box"
    box.mkdir()
    runtime = tmp_path / "run"
    command = f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={tmp_path / 'box-data'}"
    host = RemoteHost(name="box", target=command, folder=str(box))
    argv = [sys.executable, "-m", "melgui", "host", "--bridge"]
    key = folder_key(target_of(host))
    with box_host(runtime):
        hosts = RemoteHosts([host], host_argv=argv)
        hosts.every_mcp.add("box")  # as a remote folder's window makes its own
        try:
            place = await hosts.place("box")
            assert place.options["diagnostics"] is False  # not trusted yet
            hosts.set_trusted("box", True)  # the trust bar's Trust folder
            assert place.options["diagnostics"] is True
            assert FolderTrust().is_trusted(key) is False  # the bar records it, not this
        finally:
            await hosts.aclose()
        FolderTrust().trust(key)
        again = RemoteHosts([host], host_argv=argv)
        again.every_mcp.add("box")
        try:
            assert (await again.place("box")).options["diagnostics"] is True
        finally:
            await again.aclose()
        configured = RemoteHosts([host], host_argv=argv)  # a host the person configured
        try:
            FolderTrust().restrict(key)
            assert (await configured.place("box")).options["diagnostics"] is True
        finally:
            await configured.aclose()
