"""The walk of one tool call through the real window, from the SSE chunk that carries it
to its result on the next request: the melgui files whose code runs on the way, and
where the call's data is decoded.

    python bench/walk_tool_call.py            # the window (offscreen), a read_file call
    python bench/walk_tool_call.py --files    # and every file, with how often it ran

It drives the real MainWindow against the scripted relay over loopback. A profiler
(sys.setprofile, on the thread the loop runs on) starts at the first event the relay's
parser reads of the answer that asks for the call, and stops when the body of the next
request is built. A file counts when one of its functions runs in between, in one of:

- the call's path: what runs in the asyncio task that read the chunk (the agent's turn:
  the loop, the tool, the listeners it calls);
- the views' frame: what the views did when the session bridge let them hear the
  queued changes and events (SessionBridge.deliver on the stack), which happens once a
  frame, while the call waits on its tool or on the server;
- the rest of the loop's thread meanwhile: Qt's own events (painting, event filters,
  widgets' timers) and other tasks.

The first line also gives all three together, as this walk was first counted. Other
threads (the render thread drawing the chat) are listed apart. Decoding: each
json.loads that runs, named by the melgui functions that asked for it (the innermost
two), and each ask for a call's decoded arguments (ToolCall.decode, which decodes once
and keeps the value) or a stored message (Message.from_json). Not a benchmark: it times
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from melgui.ui.window.main_window import MainWindow
    from tests.fakes import ScriptedRelay

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

PACKAGE = str(ROOT / "melgui") + os.sep

ASKS = {("decode", "events"), ("from_json", "messages")}
BRIDGE = os.path.join("melgui", "ui", "runtime", "bridge.py")


class Walk:
    """What ran between the call's chunk and the next request, file by file."""

    def __init__(self) -> None:
        self.on = False
        self.done = False  # the next request's body is built
        self.finished = False  # and the views' frame after it ran
        self.bodies = 0
        self.files: collections.Counter[str] = collections.Counter()  # the call's path
        self.frame: collections.Counter[str] = collections.Counter()  # the views' frame
        self.meanwhile: collections.Counter[str] = collections.Counter()  # the rest
        self.task: asyncio.Task[Any] | None = None  # the one that read the chunk
        self.delivering = 0  # SessionBridge.deliver calls on the stack
        self.elsewhere: collections.Counter[str] = collections.Counter()
        self.decoded: collections.Counter[str] = collections.Counter()
        self.asked: collections.Counter[str] = collections.Counter()
        self.loop_thread = threading.get_ident()

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if self.finished or event not in ("call", "return"):
            return
        code = frame.f_code
        path = code.co_filename
        if code.co_name == "deliver" and path.endswith(BRIDGE):
            self.delivering += 1 if event == "call" else -1
            # After the request, the views' frame that lets them hear the rest is counted.
            self.finished = self.done and not self.delivering
        if event != "call" or (self.done and not self.delivering):
            return
        on_loop = threading.get_ident() == self.loop_thread
        if not self.on:
            if path.endswith(os.path.join("transports", "relay.py")) and code.co_name == "on_event":
                self.on = True
                self.task = asyncio.current_task()
            else:
                return
        if path.startswith(PACKAGE):
            name = path[len(str(ROOT)) + 1 :]
            if not on_loop:
                self.elsewhere[name] += 1
            elif not self.done and self.task is not None and _current_task() is self.task:
                self.files[name] += 1  # a view heard at once from the call's path counts here
            elif self.delivering:
                self.frame[name] += 1
            else:
                self.meanwhile[name] += 1
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


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no loop running (a Qt event before the loop started)
        return None


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


QUESTION = "What does the README say?"


def script(relay: ScriptedRelay) -> None:
    """The turn walked: a read_file call of README.md, then the answer."""
    from tests.fakes import done, text, tool_call, tool_calls

    call = tool_call("read_file", {"path": "README.md"}, id="r1")
    relay.script([tool_calls(call)], [text("It says hello."), done()])


async def walk_one_call(window: MainWindow, relay: ScriptedRelay) -> Walk:
    """Ask `window` the question (`relay` scripted by `script`, the folder holding a
    README.md) and walk the call; returns once the turn has ended."""
    walk = Walk()
    # The window's own start-up work is done, its tools loaded as a window that runs its
    # agents loads them once it has painted (melgui/ui/app.py): the walk is of a call,
    # not of the first import of the tools' modules.
    window.desk.ready_tools()
    await asyncio.sleep(0.3)
    threading.setprofile(walk.profile)  # threads started from now on (rendering)
    sys.setprofile(walk.stop_after_body)
    try:
        window.chat.submit(QUESTION)
        while len(relay.legs_received) < 2:
            await asyncio.sleep(0.01)
        for _ in range(200):  # the views' frame after the request
            if walk.finished:
                break
            await asyncio.sleep(0.005)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    await window.session.wait_idle()
    return walk


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list every file crossed")
    options = parser.parse_args(argv)
    home = scratch.folder(prefix="melgui-walk-")
    os.environ["MELGUI_CONFIG_DIR"] = os.path.join(home, "config")
    os.environ["MELGUI_DATA_DIR"] = os.path.join(home, "data")
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    from melgui.ui.runtime.qt_loop import QtEventLoop
    from melgui.ui.window.main_window import build_main_window
    from tests.fakes import ScriptedRelay
    from tests.fakes.window import relay_settings

    app = QApplication([])
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    project = Path(home) / "project"
    project.mkdir()
    (project / "README.md").write_text("hello\n")
    with ScriptedRelay() as relay:
        script(relay)
        window = build_main_window(
            str(project), relay_settings(relay), api_key="k", persist_settings=False
        )
        window.show()
        walk = loop.run_until_complete(asyncio.wait_for(walk_one_call(window, relay), 60))
        loop.run_until_complete(window.aclose())
        window.guard.allow()
        window.close()
    everything = walk.files | walk.frame | walk.meanwhile
    print(f"files crossed on the loop's thread, all together: {len(everything)}")
    print(f"  on the call's path: {len(walk.files)}")
    print(f"  in the views' frame meanwhile: {len(walk.frame)}")
    print(f"  the rest of the loop's thread meanwhile: {len(walk.meanwhile)}")
    print(f"files run on other threads meanwhile: {len(walk.elsewhere)}")
    if options.files:
        for title, files in (
            ("on the call's path", walk.files),
            ("in the views' frame", walk.frame),
            ("the rest of the loop's thread", walk.meanwhile),
            ("other threads", walk.elsewhere),
        ):
            print(f"{title}:")
            for name, count in sorted(files.items()):
                print(f"  {name}  ({count})")
    print("decoded (json.loads runs):")
    for where, count in sorted(walk.decoded.items()):
        print(f"  {where}  ×{count}")
    print("decoded values asked for:")
    for where, count in sorted(walk.asked.items()):
        print(f"  {where}  ×{count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
