"""bench/walk_tool_call.py on the real window: one tool call, from the SSE chunk that asks
for it to the next request, runs no view code on its path (the views hear it in their
frame), and crosses fewer files than the 55-60 it once did."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay
from tests.fakes.window import Runner, relay_settings

WALK = Path(__file__).resolve().parents[2] / "bench" / "walk_tool_call.py"


@pytest.fixture
def walk_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("walk_tool_call_under_test", WALK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_a_tool_call_runs_no_view_code_on_its_path(
    walk_module: ModuleType, make_window: Callable[..., MainWindow], run: Runner[Any]
) -> None:
    with ScriptedRelay() as relay:
        walk_module.script(relay)
        window = make_window(relay_settings(relay))
        walk = run(walk_module.walk_one_call(window, relay))
    on_path = set(walk.files)
    views = {name for name in on_path if name.startswith("melgui/ui/")}
    # the bridge queues what the views will hear and asks the window's drawing tick for it
    assert views == {"melgui/ui/runtime/bridge.py", "melgui/ui/runtime/flush_scheduler.py"}
    assert "melgui/tools/files/read_file.py" in on_path and len(on_path) < 55
    assert "melgui/ui/chat/chat_view.py" in walk.frame  # heard in the views' frame
    assert walk.decoded and walk.asked  # where the call's data was decoded
