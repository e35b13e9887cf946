"""A call a hook changed back then is recorded with the arguments it ran with, and a draft
tried on the history says which of those it would let run as the model wrote them."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from melgui.core.rules.rule_trial.replay import replay
from melgui.core.store import Store
from melgui.desk.recording import Recording
from tests.core.hooks.test_claude_hooks import claude_project, desk_for
from tests.fakes import ScriptedRelay, done, tool_call, tool_calls


async def test_a_call_a_hook_rewrote_is_stored_and_reported_by_the_replay(
    store: Store, tmp_path: Path
) -> None:
    project = claude_project(tmp_path / "p")
    (project / "src").mkdir()
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "ls src"}))],
            [tool_calls(tool_call("run_command", {"command": "pwd"}))],
            [done()],
        )
        desk = desk_for(project, relay)
        session = desk.session(model="relay-model", role="assistant")
        recording = Recording(store, str(project))
        recording.attach(session)
        session.submit("list src")
        await session.wait_idle()
        await session.aclose()
        await desk.aclose()
        recording.close()
    (edited, plain) = session.thread.calls()
    assert edited.ran_with == {"command": "ls --color=never src"} and plain.ran_with is None
    calls = store.calls.recorded()
    assert [c.ran_arguments for c in calls] == [json.dumps(edited.ran_with), None]
    # A draft allowing `ls` would let the model's own `ls src` run: a hook edited it then.
    book = RuleBook(everywhere=[Rule.parse("allow run_command: ls")])
    done_ = replay(calls, RulePolicy(project=str(project), book=book))
    assert [r.call.arguments for r in done_.let_run_edited] == [json.dumps({"command": "ls src"})]
    assert [r.edited for r in done_.calls] == [True, False]
