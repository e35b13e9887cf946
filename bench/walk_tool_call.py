"""The walk of one tool call through the real window, from the SSE chunk that carries it
to its result on the next request: the melgui files whose code runs on the way, and
where the call's data is decoded.

    python bench/walk_tool_call.py            # the window (offscreen), a read_file call
    python bench/walk_tool_call.py --files    # and every file, with how often it ran

It drives the real MainWindow against the scripted relay over loopback. A profiler
(sys.setprofile, on the thread the loop runs on) starts at the first event the relay's
parser reads of the answer that asks for the call, and stops when the body of the next
request is built. A file counts when one of its functions runs in between; other
threads (the render thread drawing the chat) are listed apart. Decoding: each json.loads
that runs, named by the melgui functions that asked for it (the innermost two), and
each ask for a call's decoded arguments (ToolCall.decode, which decodes once and keeps
the value) or a stored message (Message.from_json). Not a benchmark: it times nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PACKAGE = str(ROOT / "melgui") + os.sep

ASKS = {("decode", "events"), ("from_json", "messages")}


class Walk:
    """What ran between the call's chunk and the next request, file by file."""

    def __init__(self) -> None:
        self.on = False
        self.done = False
        self.bodies = 0
        self.files: collections.Counter[str] = collections.Counter()
        self.elsewhere: collections.Counter[str] = collections.Counter()
        self.decoded: collections.Counter[str] = collections.Counter()
        self.asked: collections.Counter[str] = collections.Counter()
        self.loop_thread = threading.get_ident()

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or self.done:
            return
        code = frame.f_code
        path = code.co_filename
        if not self.on:
            if path.endswith(os.path.join("transports", "relay.py")) and code.co_name == "on_event":
                self.on = True
            else:
                return
        if path.startswith(PACKAGE):
            name = path[len(str(ROOT)) + 1 :]
            if threading.get_ident() == self.loop_thread:
                self.files[name] += 1
            else:
                self.elsewhere[name] += 1
            if code.co_name == "request_body":
                self.bodies += 1
        module = Path(path).stem if not path.endswith("__init__.py") else Path(path).parent.name
        if (code.co_name, module) == ("loads", "json"):
            self.decoded[f"json.loads <- {' <- '.join(_askers(frame, 2))}"] += 1
        elif (code.co_name, module) in ASKS:
            self.asked[f"{module}.{code.co_name} <- {' <- '.join(_askers(frame, 1))}"] += 1

    def stop_after_body(self, frame: FrameType, event: str, arg: Any) -> None:
        self.profile(frame, event, arg)
        if self.bodies and frame.f_code.co_name == "request_body" and event == "return":
            self.done = True


def _askers(frame: FrameType, count: int) -> list[str]:
    """The innermost `count` melgui functions on the stack above `frame`."""
    found: list[str] = []
    caller = frame.f_back
    while caller is not None and len(found) < count:
        path = caller.f_code.co_filename
        if path.startswith(PACKAGE) and caller.f_code.co_name != "loads":
            found.append(f"{path[len(str(ROOT)) + 1 :]}:{caller.f_code.co_name}")
        caller = caller.f_back
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list every file crossed")
    options = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="melgui-walk-")
    os.environ["MELGUI_CONFIG_DIR"] = os.path.join(home, "config")
    os.environ["MELGUI_DATA_DIR"] = os.path.join(home, "data")
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    from melgui.ui.runtime.qt_loop import QtEventLoop
    from melgui.ui.window.main_window import build_main_window
    from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
    from tests.fakes.window import relay_settings

    app = QApplication([])
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    project = Path(home) / "project"
    project.mkdir()
    (project / "README.md").write_text("hello\n")
    walk = Walk()
    with ScriptedRelay() as relay:
        call = tool_call("read_file", {"path": "README.md"}, id="r1")
        relay.script([tool_calls(call)], [text("It says hello."), done()])
        window = build_main_window(
            str(project), relay_settings(relay), api_key="k", persist_settings=False
        )
        window.show()

        async def scenario() -> None:
            await asyncio.sleep(0.3)  # the window's own start-up work is done
            sys.setprofile(walk.stop_after_body)
            window.chat.submit("What does the README say?")
            while len(relay.legs_received) < 2:
                await asyncio.sleep(0.01)
            sys.setprofile(None)
            await window.session.wait_idle()

        threading.setprofile(walk.profile)  # threads started from now on (rendering)
        loop.run_until_complete(asyncio.wait_for(scenario(), 60))
        threading.setprofile(None)
        loop.run_until_complete(window.aclose())
        window.guard.allow()
        window.close()
    print(f"files crossed on the loop's thread: {len(walk.files)}")
    print(f"files run on other threads meanwhile: {len(walk.elsewhere)}")
    if options.files:
        for name, count in sorted(walk.files.items()):
            print(f"  {name}  ({count})")
        for name, count in sorted(walk.elsewhere.items()):
            print(f"  [other thread] {name}  ({count})")
    print("decoded (json.loads runs):")
    for where, count in sorted(walk.decoded.items()):
        print(f"  {where}  ×{count}")
    print("decoded values asked for:")
    for where, count in sorted(walk.asked.items()):
        print(f"  {where}  ×{count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
