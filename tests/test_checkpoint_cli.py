"""`melgui exec` records checkpoints through the Desk; `melgui checkpoints list|show|restore`
lists and restores them, as real processes against the scripted relay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from melgui.core.store import Store
from melgui.core.store.paths import database_path
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import fingerprint, make_project

ROOT = Path(__file__).resolve().parents[1]


def melgui(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MELGUI_DATA_DIR": str(data),
        "MELIAI_API_KEY": "k",
    }
    return subprocess.run(
        [sys.executable, "-m", "melgui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_exec_records_and_the_cli_lists_and_restores(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    git_before = fingerprint(project / ".git")
    data = tmp_path / "data"
    command = "printf new > src/app.py && rm README.md"
    scripted_relay.script(
        [tool_calls(tool_call("run_command", {"command": command}, id="c1"))],
        [text("done"), done()],
    )
    result = melgui(
        "exec", "--url", scripted_relay.base_url, "--folder", str(project), "--model", "m",
        "--approve", "all", "change things", data=data,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (project / "src" / "app.py").read_text() == "new"

    listing = melgui("checkpoints", "list", "--json", "--folder", str(project), data=data)
    assert listing.returncode == 0, listing.stderr
    [record] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert record["tool"] == "run_command" and record["call_id"] == "c1"
    assert record["files"] == [
        {"path": "README.md", "status": "D"},
        {"path": "src/app.py", "status": "M"},
    ]

    with Store.open(database_path(data)) as store:
        [conversation] = store.conversations(str(project))
    mine = melgui(
        "checkpoints", "list", "--json", "--conversation", conversation.id,
        "--folder", str(project), data=data,
    )  # fmt: skip
    assert [json.loads(line)["id"] for line in mine.stdout.splitlines()] == [record["id"]]
    other = melgui(
        "checkpoints", "list", "--conversation", "nope", "--folder", str(project), data=data
    )
    assert other.returncode == 0 and other.stdout == ""

    shown = melgui("checkpoints", "show", str(record["id"]), "--folder", str(project), data=data)
    assert "+new" in shown.stdout and "-print('hello')" in shown.stdout

    (project / "src" / "app.py").write_text("mine")  # edited again since: a conflict
    refused = melgui(
        "checkpoints", "restore", str(record["id"]), "--folder", str(project), data=data
    )
    assert refused.returncode == 1 and "src/app.py" in refused.stderr
    assert not (project / "README.md").exists()  # nothing restored

    restored = melgui(
        "checkpoints", "restore", str(record["id"]), "--conflicts", "before",
        "--folder", str(project), data=data,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    assert (project / "README.md").read_text() == "# demo\n"
    assert fingerprint(project / ".git") == git_before
    assert "melgui checkpoints restore" in restored.stdout
