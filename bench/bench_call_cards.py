"""What drawing a tool call's card costs in the chat view, this tree beside another one.

A card is drawn the way a live call draws it: added as requested, then running, then
done (an edit) or failed (a command that exited 1), 300 calls into one chat view, in
rounds; the GUI thread's CPU time per card (drawing and laying out), median of rounds.
Then the same for a reopened conversation of 300 calls (load_conversation, drawn whole).
With `--against TREE` (a checkout of another commit) each tree runs in a process of its
own, alternated, and the two are printed side by side with their ratio.

    python bench/bench_call_cards.py [--against /path/to/other/checkout] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import scratch

CARDS = 300


def measure(rounds: int) -> dict[str, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sandbox = scratch.folder(prefix="melgui-bench-")
    os.environ["MELGUI_CONFIG_DIR"] = os.path.join(sandbox, "config")
    os.environ["MELGUI_DATA_DIR"] = os.path.join(sandbox, "data")
    from PySide6.QtWidgets import QApplication

    from melgui.core.agent.session import AgentSession
    from melgui.core.protocol.events import ToolCall
    from melgui.core.protocol.messages import Conversation, Message
    from melgui.core.protocol.tooling import ToolRegistry
    from melgui.core.rules.policy import RulePolicy
    from melgui.core.transports.openai_compat import OpenAITransport
    from melgui.ui.chat.chat_view import ChatView
    from melgui.ui.runtime.bridge import SessionBridge
    from melgui.ui.runtime.theme import apply_theme

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app, "light")

    def call(index: int) -> ToolCall:
        if index % 2:
            arguments = json.dumps({"command": f"pytest -q tests/test_{index}.py"})
            return ToolCall(id=f"c{index}", name="run_command", arguments=arguments)
        arguments = json.dumps(
            {"path": f"src/mod_{index}.py", "old_string": "a = 1", "new_string": "a = 2\nb = 3"}
        )
        return ToolCall(id=f"c{index}", name="edit_file", arguments=arguments)

    def chat_on(conversation: Conversation) -> ChatView:
        session = AgentSession(
            OpenAITransport("http://127.0.0.1:9/v1", None),
            ToolRegistry(),
            RulePolicy(),
            conversation,
            model="bench",
            role="assistant",
            cwd=sandbox,
        )
        chat = ChatView(SessionBridge(session), draw=False)
        chat.resize(1000, 900)
        chat.show()
        app.processEvents()
        return chat

    live: list[float] = []
    reopened: list[float] = []
    for _ in range(rounds):
        chat = chat_on(Conversation())
        started = time.process_time()
        for index in range(CARDS):
            tool = call(index)
            chat.cards.add(tool, "requested")
            chat.cards.set(tool.id, "running")
            chat.cards.set(tool.id, "ok", 0.25, exit_code=1 if index % 2 else None)
            app.processEvents()
        live.append((time.process_time() - started) / CARDS * 1000)
        chat.deleteLater()
        messages: list[Message] = []
        for index in range(CARDS):
            tool = call(index)
            messages.append(Message(role="assistant", content="", tool_calls=(tool,)))
            result = "exit code: 1\nFAILED" if index % 2 else "Edited."
            messages.append(Message(role="tool", content=result, tool_call_id=tool.id))
        chat = chat_on(Conversation(messages))
        started = time.process_time()
        chat.load_conversation(chat.bridge.session.conversation, 0, lazy=False)
        app.processEvents()
        reopened.append((time.process_time() - started) / CARDS * 1000)
        chat.deleteLater()
        app.processEvents()
    return {"live": statistics.median(live), "reopened": statistics.median(reopened)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", type=Path, help="another checkout, measured beside this")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        print(json.dumps(measure(options.rounds)))
        return 0
    here = Path(__file__).resolve().parents[1]
    trees = {"this tree": here, **({"other": options.against} if options.against else {})}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(3):  # alternated, so both see the same load
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--rounds", str(options.rounds)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
            ).stdout
            results[name].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'ms of CPU per card':32}" + "".join(f"{name:>14}" for name in trees) + "   ratio")
    for key, words in (("live", "live (requested → running → end)"), ("reopened", "reopened")):
        medians = [statistics.median(r[key] for r in results[name]) for name in trees]
        ratio = f"   {medians[0] / medians[1]:.2f}" if len(medians) == 2 else ""
        print(f"{words:32}" + "".join(f"{m:14.3f}" for m in medians) + ratio)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
