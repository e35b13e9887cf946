"""A draft rule set tried on a history the store recorded, and the rules it proposes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from melgui.core.rules.rule_trial.commands import RuleTrial
from melgui.core.rules.rule_trial.proposal import propose, with_rules
from melgui.core.rules.rule_trial.replay import Judge, replay
from melgui.core.store import Store

# (tool, command or path, what happened): "auto", "approved", "denied" (by the person)
# or "rule" (denied by a rule, no person asked).
HISTORY: list[list[tuple[str, str, str]]] = [
    [
        ("run_command", "git status", "approved"),
        ("run_command", "git diff", "approved"),
        ("read_file", "src/app.py", "auto"),
        ("run_command", "pytest -q", "approved"),
        ("run_command", "git status", "approved"),
        ("write_file", "src/app.py", "approved"),
        ("run_command", "git push origin main", "denied"),
        ("run_command", "ls -la", "approved"),
    ],
    [
        ("run_command", "git log -3", "approved"),
        ("run_command", "git status", "approved"),
        ("run_command", "pytest -q tests/test_app.py", "approved"),
        ("run_command", "rm -rf build", "denied"),
        ("run_command", "curl https://example.com", "rule"),
        ("write_file", "setup.cfg", "denied"),
        ("run_command", "npm test", "approved"),
        ("run_command", "git diff --stat", "approved"),
    ],
    [
        ("run_command", "git status && git diff", "approved"),
        ("run_command", "npm test", "approved"),
        ("run_command", "rm -f old.log", "approved"),
        ("run_command", "cat README.md", "approved"),
        ("run_command", "git log -3", "approved"),
        ("write_file", "src/app.py", "approved"),
        ("run_command", "ls -la", "approved"),
        ("run_command", "pytest -q", "approved"),
    ],
]


def record(store: Store, folder: str) -> None:
    """The history written through the store's own API, as the journal writes it."""
    for n, calls in enumerate(HISTORY):
        cid = store.create_conversation(folder)
        for i, (tool, text, then) in enumerate(calls):
            key = "command" if tool == "run_command" else "path"
            call = ToolCall(f"c{n}-{i}", tool, json.dumps({key: text}))
            store.calls.requested(cid, call)
            if then == "auto":
                store.calls.decided(cid, call.id, "auto:allow read_file (everywhere)")
            elif then in ("approved", "denied"):
                store.calls.phase(cid, call.id, "waiting")
                store.calls.decided(cid, call.id, then)
            status = "ok" if then in ("auto", "approved") else "denied"
            store.calls.finished(cid, call.id, status, "", 0.1)


def draft_policy(folder: str, *lines: str) -> RulePolicy:
    return RulePolicy(project=folder, book=RuleBook(everywhere=[Rule.parse(t) for t in lines]))


@pytest.fixture
def folder(store: Store, tmp_path: Path) -> str:
    record(store, str(tmp_path))
    return str(tmp_path)


def test_the_draft_is_set_beside_what_happened(store: Store, folder: str) -> None:
    draft = draft_policy(
        folder, "allow run_command: ls", "allow run_command: curl", "deny run_command: rm"
    )
    done = replay(store.calls.recorded(), draft)
    assert len(done.calls) == sum(len(c) for c in HISTORY)
    commands = {r.now.command or r.call.name for r in done.removed_prompts}
    # ls asked twice and allowed now; the rm the person denied is denied without asking
    assert sorted(r.now.command for r in done.removed_prompts) == [
        "ls -la",
        "ls -la",
        "rm -f old.log",
        "rm -rf build",
    ], commands
    assert [(r.now.command, r.then) for r in done.let_run_denied] == [
        ("curl https://example.com", "denied by rule")
    ]
    assert [(r.now.command, r.then) for r in done.now_denied] == [("rm -f old.log", "approved")]


def test_the_last_conversations_only(store: Store, folder: str) -> None:
    assert len(store.calls.recorded(conversations=1)) == len(HISTORY[-1])
    assert store.calls.recorded(conversations=1)[0].arguments == json.dumps(
        {"command": "git status && git diff"}
    )


def test_the_proposal_never_covers_a_denied_call_and_removes_most_prompts(
    store: Store, folder: str
) -> None:
    draft = draft_policy(folder, "deny run_command: rm")
    calls = store.calls.recorded()
    done = replay(calls, draft)
    proposals = propose(done, draft)
    texts = [p.rule.text for p in proposals]
    # `git` alone would cover the denied push, `write_file` the denied write: neither
    assert "allow run_command: git" not in texts and "allow write_file" not in texts
    assert "allow run_command: git status" in texts
    trial = RuleTrial((), folder)
    denied = [r for r in done.calls if r.then.startswith("denied")]
    for proposal in proposals:
        for d in denied:
            command = json.loads(d.call.arguments).get("command")
            if command is not None and proposal.rule.command is not None:
                assert not trial.touches(proposal.rule, command), (proposal.rule.text, command)
            else:
                assert proposal.rule.tool != d.call.name
        assert proposal.covers and all(c.then == "approved" for c in proposal.covers)
    always_approved = [r for r in done.calls if r.then == "approved" and r.now.asks]
    adopted = Judge(with_rules(draft, [p.rule for p in proposals]))
    removed = [r for r in always_approved if adopted(r.call).verdict == "allow"]
    for r in done.calls:
        if r.then.startswith("denied"):
            judgement = adopted(r.call)
            assert judgement.verdict != "allow", r.call.arguments
    assert len(removed) * 2 >= len(always_approved)
    assert len(proposals) < len(always_approved)
    # "git status && git diff" needs two rules: it is covered by both
    both = json.dumps({"command": "git status && git diff"})
    covering = [p.rule.text for p in proposals if any(c.call.arguments == both for c in p.covers)]
    assert len(covering) == 2, covering
    # the draft itself is untouched
    assert [r.text for r in draft.book.everywhere] == ["deny run_command: rm"]


def test_a_call_that_was_not_json_is_judged_without_arguments(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.calls.requested(cid, ToolCall("x", "run_command", "not json"))
    store.calls.decided(cid, "x", "approved")
    done = replay(store.calls.recorded(), draft_policy(str(tmp_path)))
    assert [r.now.verdict for r in done.calls] == ["ask"]
    assert propose(done, draft_policy(str(tmp_path))) == []


def test_a_denied_command_counts_however_its_program_is_quoted(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    for i, (command, then) in enumerate(
        [("git status", "approved"), ("git status", "approved"), ('g"i"t status -s', "denied")]
    ):
        store.calls.requested(
            cid, ToolCall(f"q{i}", "run_command", json.dumps({"command": command}))
        )
        store.calls.decided(cid, f"q{i}", then)
    draft = draft_policy(str(tmp_path))
    assert propose(replay(store.calls.recorded(), draft), draft) == []


def test_a_program_named_by_its_path_is_checked_against_every_denied_command(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    calls = [("./run.sh build", "approved"), ("./run.sh test", "approved")]
    calls.append(("./run.sh deploy", "denied"))
    for i, (command, then) in enumerate(calls):
        store.calls.requested(
            cid, ToolCall(f"p{i}", "run_command", json.dumps({"command": command}))
        )
        store.calls.decided(cid, f"p{i}", then)
    draft = draft_policy(str(tmp_path))
    texts = [p.rule.text for p in propose(replay(store.calls.recorded(), draft), draft)]
    assert texts == ["allow run_command: ./run.sh build", "allow run_command: ./run.sh test"]
