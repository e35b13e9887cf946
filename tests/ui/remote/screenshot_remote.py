"""Renders docs/remote-folder.png: the real window on a remote folder over a real sshd (a
second local user; needs root), with a terminal pane running there and a worker on a second
host (a local command that behaves like `docker exec -i devbox`), driven by the scripted
relay as orchestrator.

    python -m tests.ui.remote.screenshot_remote [OUTPUT.png]
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")  # not the person's own history
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import RemoteHost, Settings  # noqa: E402
from melgui.remote.connect import HOST_COMMAND_ENV  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.remote.remote_side import stand_in_for  # noqa: E402
from melgui.ui.panes.terminal.pane import TerminalPane  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls  # noqa: E402
from tests.remote.local_target import box_host  # noqa: E402
from tests.remote.remote_python import REMOTE_PYTHON, remote_python_path  # noqa: E402
from tests.remote.sshd import TestSshServer, add_host_block, remove_host_block  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
ALIAS = "buildbox"
SHELL = r"""G='\033[1;32m'; R='\033[0m'
printf "${G}$(id -un)@${ALIAS}${R}:$(pwd)\$ ls\n"; ls --color=always
printf "${G}$(id -un)@${ALIAS}${R}:$(pwd)\$ python3 -m pytest -q\n"
printf "\033[32m........................\033[0m                 [100%%]\n"
printf "\033[1;32m24 passed\033[0m in 1.93s\n"
PS1="\[\033[1;32m\]\u@${ALIAS}\[\033[0m\]:\w\$ " exec bash --norc --noprofile -i
"""


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [
            text(
                "On **devbox** (`docker exec -i devbox`), in `/work`:\n\n"
                "| check | result |\n|---|---|\n| lint | clean |\n| build | ok |\n\n"
                "The container's toolchain builds it; nothing to fix."
            ),
            done(),
        ]
    return [
        text("Running the checks here."),
        tool_calls(tool_call("run_command", {"command": "ls"})),
    ]


async def _wait(condition: Callable[[], object], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("screenshot scenario did not reach its state")
        await asyncio.sleep(0.02)


def main(output: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    gate = threading.Event()
    workdir = Path(tempfile.mkdtemp(prefix="melgui-screenshot-sshd-"))
    with TestSshServer.start(workdir) as server, ScriptedRelay() as relay:
        paths = remote_python_path(workdir)
        argv = ["env", f"PYTHONPATH={':'.join(paths)}", REMOTE_PYTHON, "-m", "melgui", "host"]
        os.environ[HOST_COMMAND_ENV] = shlex.join(argv)
        remove_host_block(ALIAS)
        add_host_block(ALIAS, server._block_lines())
        server.aliases.append(ALIAS)  # taken out again when the server stops
        project = server.home / "shop"
        project.mkdir()
        for name in ("app.py", "models.py", "README.md"):
            (project / name).write_text("# demo\n")
        (project / "tests").mkdir()
        (project / "shell.sh").write_text(SHELL.replace("${ALIAS}", ALIAS))
        server.give(project)
        box = workdir / "devbox-work"
        box.mkdir()
        runtime = workdir / "devbox-run"
        relay.on(lambda r: r.tool_role == "worker", _worker)
        relay.script(
            [
                text("A terminal on the build box, and a worker in the devbox container."),
                tool_calls(
                    tool_call("open_pane", {"layout": "right", "command": "bash shell.sh"}),
                    tool_call("spawn_agent", {"layout": "down", "task": "@devbox run the checks"}),
                ),
            ],
            [
                hold(gate),
                text(
                    "- **pane 1** — a shell on `buildbox`, in `~/shop`: 24 passed\n"
                    "- **pane 2** — a worker on **devbox**: lint and build clean\n\n"
                    "The loop and the key stay on this machine; the tools ran there."
                ),
                done(),
            ],
        )
        hosts = [
            RemoteHost(
                name="devbox",
                target=f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={workdir / 'devbox-data'}",
                folder=str(box),
            )
        ]
        settings = Settings(
            connection="relay", relay_url=relay.url, model="mel-default", role="orchestrator",
            hosts=hosts,
        )  # fmt: skip
        settings.approval_modes.update(
            {"open_pane": "auto", "spawn_agent": "auto", "run_command": "auto"}
        )
        url = f"ssh://{ALIAS}{project}"
        with box_host(runtime):
            window = build_main_window(
                stand_in_for(url), settings, api_key="demo", persist_settings=False
            )
            window.remote.open_folder(url)
            window.resize(1500, 860)
            window.show()
            window.resizeDocks([window.side_panel.dock], [330], Qt.Orientation.Horizontal)
            manager = window.pane_manager

            async def scenario() -> None:
                window.bridge.submit("Run the tests on the build box and the checks in devbox.")
                await _wait(lambda: isinstance(manager.pane(2), AgentPane))
                worker = manager.pane(2)
                assert isinstance(worker, AgentPane)
                await _wait(lambda: worker.state.name == "idle" and worker.latest_reply())
                gate.set()
                await _wait(lambda: not window.bridge.busy and window.session.loop.legs == 2)
                terminal = manager.pane(1)
                assert isinstance(terminal, TerminalPane)
                await _wait(lambda: "24 passed" in terminal.emulator.text())
                terminal.view.setFocus()
                await asyncio.sleep(0.5)

            loop.run_until_complete(asyncio.wait_for(scenario(), 240))
            app.processEvents()
            output.parent.mkdir(parents=True, exist_ok=True)
            window.grab().save(str(output))
            print(f"wrote {output}")
            loop.run_until_complete(window.aclose())
            window.close()
    asyncio.set_event_loop(None)
    loop.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "remote-folder.png")
