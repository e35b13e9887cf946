"""`melgui exec` as a real process against the scripted relay and OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import (
    ScriptedOpenAI,
    ScriptedRelay,
    delta,
    done,
    http_error,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.exec import json_lines, melgui_exec


def test_json_events_of_a_turn_with_tool_calls(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello world\n")
    scripted_relay.script(
        [
            text("Reading."),
            tool_calls(
                tool_call("read_file", {"path": "a.txt"}, id="c1"),
                tool_call("write_file", {"path": "b.txt", "content": "x"}, id="c2"),
                tool_call("read_file", '{"path": ', id="c3"),
            ),
        ],
        [text("It says hello."), done(usage={"prompt_tokens": 9, "completion_tokens": 3})],
    )
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(tmp_path), "--model", "m1",
        "--role", "worker", "--json", "what is in a.txt?",
        env={"MELIAI_API_KEY": "k-123"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    assert [e["kind"] for e in events] == [
        "text", "usage", "tool_call", "tool_call", "tool_call",
        "tool_result", "tool_result", "tool_result", "text", "usage", "done",
    ]  # fmt: skip
    assert events[1] == {"kind": "usage", "leg": 1, "usage": None}
    assert events[-2] == {
        "kind": "usage",
        "leg": 2,
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }
    assert events[2] == {
        "kind": "tool_call", "id": "c1", "name": "read_file", "arguments": '{"path": "a.txt"}',
    }  # fmt: skip
    results = {e["id"]: e for e in events if e["kind"] == "tool_result"}
    assert results["c1"]["status"] == "ok" and "hello world" in results["c1"]["content"]
    assert results["c2"]["status"] == "denied" and "--approve reads" in results["c2"]["content"]
    assert results["c3"]["status"] == "error" and "not valid JSON" in results["c3"]["content"]
    assert events[-1] == {
        "kind": "done",
        "legs": 2,
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }
    assert not (tmp_path / "b.txt").exists()
    first = scripted_relay.legs_received[0]
    assert first.authorization == "Bearer k-123"
    assert first.json["model"] == "m1" and first.json["tool_role"] == "worker"


def test_plain_output_and_approve_all(scripted_openai: ScriptedOpenAI, tmp_path: Path) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("write_file", {"path": "out.txt", "content": "made"}, id="w"))],
        [text("Wrote "), text("it."), done()],
    )
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--approve", "all", "write it",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Wrote it.\n"
    assert (tmp_path / "out.txt").read_text() == "made"


def test_a_line_on_stderr_comes_after_the_answer_printed_before_it(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    # The server reports far fewer prompt tokens than were sent: the warning that the
    # prompt was cut goes to stderr as the leg ends, right after its last text.
    scripted_openai.models = [{"id": "m", "context_length": 16000}]
    scripted_openai.script([text("The "), text("answer."), done(usage={"prompt_tokens": 5})])
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--model", "m", "--trust", "hi", merged=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout
    said = result.stdout
    assert said.index("The answer.") < said.index("melgui: "), said


def test_server_error_exits_non_zero_with_one_line_reason(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([http_error(401, {"error": {"message": "Invalid API key"}})])
    result = melgui_exec(  # trusted: the restricted-folder line is not part of the reason
        "--url", scripted_relay.base_url, "--folder", str(tmp_path), "--json", "--trust", "hi"
    )
    assert result.returncode == 1
    assert json_lines(result.stdout)[-1]["kind"] == "error"
    assert "Invalid API key" in json_lines(result.stdout)[-1]["message"]
    reason = result.stderr.strip().splitlines()
    assert len(reason) == 1 and "Invalid API key" in reason[0]


def test_usage_errors(tmp_path: Path) -> None:
    result = melgui_exec("--transport", "relay", "--folder", str(tmp_path), "hi")
    assert result.returncode == 2 and "needs --url" in result.stderr
    result = melgui_exec("--url", "http://127.0.0.1:9", "--folder", str(tmp_path / "nope"), "hi")
    assert result.returncode == 2 and "is not a folder" in result.stderr


def test_json_reasoning_events_are_their_own_kind(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [
            delta(reasoning_content="Think "),
            delta(content="Use <think> tags."),
            done(),
        ],
        [delta(content="<think>pondered</think>Answer."), done()],
        [delta(content="<think>pondered</think>Plain."), done()],
    )
    first = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--json", "hi",
    )  # fmt: skip
    second = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--json", "again",
    )  # fmt: skip
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    kinds = [(e["kind"], e.get("text")) for e in json_lines(first.stdout)[:2]]
    assert kinds == [("reasoning", "Think "), ("text", "Use <think> tags.")]
    events = json_lines(second.stdout)
    assert ("reasoning", "pondered") in [(e["kind"], e.get("text")) for e in events]
    assert "".join(e["text"] for e in events if e["kind"] == "text") == "Answer."
    plain = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "plain",
    )  # fmt: skip
    assert plain.stdout == "Plain.\n"  # the plain output is the answer only


def test_pane_tools_are_refused_in_words_through_the_panes_contract(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    """exec has no panes: every pane tool's call, well-formed or not, gets the plain-words
    refusal (NoPanes), not an unknown-tool error or an argument complaint."""
    scripted_openai.script(
        [
            tool_calls(
                tool_call("open_pane", {"layout": "right", "command": "ls"}, id="p1"),
                tool_call("send_keys", {}, id="p2"),
                tool_call("list_panes", {}, id="p3"),
            )
        ],
        [text("No panes here."), done()],
    )
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--role", "orchestrator", "--approve", "all", "open a pane",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    sent = {m["tool_call_id"]: m["content"] for m in scripted_openai.legs_received[1].messages
            if m["role"] == "tool"}  # fmt: skip
    for call_id, name in [("p1", "open_pane"), ("p2", "send_keys"), ("p3", "list_panes")]:
        assert sent[call_id] == (
            f"{name} needs panes, which only the melgui window has; this is a headless "
            "run (melgui exec). Do the work with the other tools."
        )
