"""A minimal headless melgui for crash tests, killed with SIGKILL by test_crash.py.

The real pieces: RelayTransport, run_command, AgentSession, the store and its Journal
(through start_recording, the call `melgui exec` makes). Prints one JSON line with the
conversation id and any notices, then the turn runs.

    python -m tests.core.store.crash_app --url URL --folder DIR [--resume ID | --continue] PROMPT
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.rules.policy import FixedPolicy
from melgui.core.store import open_store
from melgui.core.transports.relay import RelayTransport
from melgui.desk.recording import start_recording
from melgui.tools.commands.run_command import RUN_COMMAND_TOOL
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


async def run(options: argparse.Namespace) -> int:
    store = open_store()
    recording = start_recording(
        store,
        options.folder,
        model="scripted",
        role="assistant",
        resume_id=options.resume,
        continue_latest=options.continue_latest,
    )
    print(
        json.dumps({"conversation": recording.conversation_id, "notices": recording.notices}),
        flush=True,
    )
    workspace = Workspace(options.folder)

    async def command(arguments: dict[str, Any]) -> ToolOutcome:
        return await RUN_COMMAND_TOOL.run(ToolContext(workspace, ToolSettings()), arguments)

    transport = RelayTransport(options.url, "test-key")
    session = AgentSession(
        transport,
        ToolRegistry({"run_command": command}),
        FixedPolicy("all"),
        recording.conversation,
        model="scripted",
        role="assistant",
        cwd=options.folder,
        wire=recording.record_wire,
    )
    recording.attach(session)
    try:
        session.submit(options.prompt)
        await session.wait_idle()
    finally:
        await session.aclose()
        await transport.aclose()
        recording.close()
        store.close()
    result = session.last_result
    print(json.dumps({"outcome": result.outcome if result else None}), flush=True)
    return 0 if result is not None and result.outcome == "done" else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--resume")
    parser.add_argument("--continue", dest="continue_latest", action="store_true")
    parser.add_argument("prompt")
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
