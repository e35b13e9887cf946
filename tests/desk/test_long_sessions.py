"""Long sessions against the scripted OpenAI-compatible server: the window is known,
compaction keeps every later request inside it, the instructions and the latest request
go verbatim, and a server that cuts the prompt is named with its fix (issue 19)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from melgui.core.agent.context import answer_reserve
from melgui.core.agent.session import AgentSession
from melgui.core.protocol.loop_events import ContextNotice, HistoryBranched, LoopEvent
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.views.compacted import SUMMARY_HEAD, summary_text, with_summary
from melgui.core.rules.policy import FixedPolicy
from melgui.desk.desk import Desk
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, http_error, text
from tests.fakes.long_session import (
    LongModel,
    is_summary_request,
    openai_settings,
    request_tokens,
    serve_long_model,
    write_notes,
)
from tests.fakes.scenario import HttpReply

RULES = "Always answer in French.\nNever touch the vendor folder.\n"


def make_desk(folder: Path, server: ScriptedOpenAI, **changes: Any) -> Desk:
    return Desk(
        str(folder), openai_settings(server, **changes), api_key=None, plans=lambda t, m: None
    )


def start(desk: Desk, model: str = "m") -> tuple[AgentSession, list[LoopEvent]]:
    session = desk.session(model=model, role="assistant", policy=FixedPolicy("all"))
    events: list[LoopEvent] = []
    session.subscribe(events.append)
    return session, events


async def turn(session: AgentSession, prompt: str) -> None:
    session.submit(prompt)
    await asyncio.wait_for(session.wait_idle(), 20)
    assert session.last_result is not None and session.last_result.outcome == "done"


def request_for(number: int) -> str:
    return f"Please read notes{2 * number}.txt and notes{2 * number + 1}.txt"


def assert_paired(messages: list[dict[str, Any]]) -> None:
    """Each assistant's calls are answered right after it, once each, in order."""
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        assert message["role"] != "tool", f"a result without its call: {message}"
        calls = [call["id"] for call in message.get("tool_calls") or ()]
        answers = [m.get("tool_call_id") for m in messages[index : index + len(calls)]]
        assert answers == calls
        index += len(calls)


async def test_a_conversation_past_the_window_compacts_and_every_later_request_fits(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    write_notes(tmp_path, 16, 1500)
    window = 9000
    with ScriptedOpenAI(models=[{"id": "m", "context_length": window}]) as server:
        serve_long_model(server, LongModel())
        desk = make_desk(tmp_path, server)
        session, events = start(desk)
        for number in range(8):
            await turn(session, request_for(number))
        await desk.aclose()
    assert session.context.window.tokens == window
    assert session.context.window.source == "server"
    summaries = [r for r in server.legs_received if is_summary_request(r)]
    assert summaries, "the conversation never compacted"
    first = summaries[0]
    assert "tools" not in first.json
    assert request_for(0) in first.messages[-1]["content"]  # the older part went to the model
    compactions = [e for e in events if isinstance(e, HistoryBranched)]
    assert compactions and all(e.reason == "compaction" for e in compactions)
    assert "summarised" in compactions[0].note
    after = server.legs_received[server.legs_received.index(first) + 1 :]
    legs = [r for r in after if not is_summary_request(r)]
    assert legs
    for request in legs:
        assert request_tokens(request) <= window - answer_reserve(window) * 0.5
        assert RULES.strip() in request.messages[0]["content"]  # the instructions, verbatim
        assert_paired(request.messages)
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        assert users[-1].startswith("Please read") and users[-1] in {
            request_for(n) for n in range(8)
        }
    final = legs[-1].messages
    assert [m["content"] for m in final if m["role"] == "user"][-1] == request_for(7)
    assert any(m["content"].startswith(SUMMARY_HEAD) for m in final if m["role"] == "user")
    # The summary the server wrote is the one the later legs carry.
    assert summary_text(session.conversation.messages) is not None
    notices = [e for e in events if isinstance(e, ContextNotice)]
    assert all(e.level == "info" for e in notices)


async def test_a_server_that_reports_neither_window_nor_usage(tmp_path: Path) -> None:
    write_notes(tmp_path, 2, 1500)
    with ScriptedOpenAI(models=[{"id": "m"}]) as server:
        model = LongModel()
        model.report_usage = False
        serve_long_model(server, model)
        desk = make_desk(tmp_path, server)
        session, events = start(desk)
        await turn(session, request_for(0))
        await desk.aclose()
    window = session.context.window
    assert (window.tokens, window.source) == (8192, "guess")
    assert window.label == "8,192 (a guess)"
    assert not session.context.calibrated
    assert session.context.last_prompt_tokens is None
    assert session.loop.usage.prompt_tokens == 0
    assert not [e for e in events if isinstance(e, ContextNotice)]


async def test_a_per_model_setting_wins_over_the_guess(tmp_path: Path) -> None:
    with ScriptedOpenAI(models=[{"id": "m"}]) as server:
        desk = make_desk(tmp_path, server, context_windows={"m": 20000})
        window = await desk.context_window("m")
        await desk.aclose()
    assert (window.tokens, window.source) == (20000, "setting")


async def test_ollama_api_show_gives_num_ctx_or_its_small_default(tmp_path: Path) -> None:
    with ScriptedOpenAI(models=[{"id": "qwen3", "owned_by": "library"}]) as server:
        server.routes[("POST", "/api/show")] = HttpReply(
            200,
            {
                "parameters": "temperature 0.7\nnum_ctx 16384",
                "model_info": {"qwen3.context_length": 40960},
            },
        )
        desk = make_desk(tmp_path, server)
        window = await desk.context_window("qwen3")
        server.routes[("POST", "/api/show")] = HttpReply(
            200, {"parameters": "temperature 0.7", "model_info": {"qwen3.context_length": 40960}}
        )
        desk.settings.context_windows = {}
        desk.connection.generation += 1  # a reconnect asks again
        default = await desk.context_window("qwen3")
        await desk.aclose()
    shows = [r for r in server.requests if r.path == "/api/show"]
    assert shows and shows[0].json == {"model": "qwen3"}
    assert (window.tokens, window.source, window.server) == (16384, "server", "ollama")
    assert (default.tokens, default.source, default.server) == (4096, "guess", "ollama")
    assert "40,960" in default.detail


async def test_llama_cpp_props_and_lm_studio_model_info(tmp_path: Path) -> None:
    with ScriptedOpenAI(models=[{"id": "m"}]) as llama, ScriptedOpenAI(models=[{"id": "m"}]) as lms:
        llama.routes[("GET", "/props")] = HttpReply(
            200, {"default_generation_settings": {"n_ctx": 12288}}
        )
        lms.routes[("GET", "/api/v0/models/m")] = HttpReply(
            200, {"id": "m", "max_context_length": 131072, "loaded_context_length": 8192}
        )
        first = make_desk(tmp_path, llama)
        second = make_desk(tmp_path, lms)
        from_llama = await first.context_window("m")
        from_lms = await second.context_window("m")
        await first.aclose()
        await second.aclose()
    assert (from_llama.tokens, from_llama.server) == (12288, "llamacpp")
    assert (from_lms.tokens, from_lms.server) == (8192, "lmstudio")


async def test_a_switch_to_a_smaller_window_compacts_before_the_next_leg(tmp_path: Path) -> None:
    write_notes(tmp_path, 12, 1500)
    models = [{"id": "big", "context_length": 100_000}, {"id": "small", "context_length": 7000}]
    with ScriptedOpenAI(models=models) as server:
        serve_long_model(server, LongModel())
        desk = make_desk(tmp_path, server)
        session, events = start(desk, "big")
        for number in range(4):
            await turn(session, request_for(number))
        assert not [r for r in server.legs_received if is_summary_request(r)]
        before = len(server.legs_received)
        session.loop.model = "small"
        await turn(session, request_for(4))
        await desk.aclose()
    after = server.legs_received[before:]
    assert is_summary_request(after[0]), "the first request after the switch was not the summary"
    assert after[0].json["model"] == "small"
    for request in after[1:]:
        assert request_tokens(request) <= 7000
        assert_paired(request.messages)
    assert session.context.window.tokens == 7000
    assert any(isinstance(e, HistoryBranched) and e.reason == "compaction" for e in events)


async def test_a_server_that_cuts_the_prompt_gets_a_warning_with_its_fix(tmp_path: Path) -> None:
    write_notes(tmp_path, 2, 3000)
    with ScriptedOpenAI(models=[{"id": "llama3"}]) as server:
        server.routes[("POST", "/api/show")] = HttpReply(
            200, {"parameters": "num_ctx 32768", "model_info": {}}
        )
        model = LongModel()
        model.cut_to = 512  # what Ollama reports after keeping only the end of the prompt
        serve_long_model(server, model)
        desk = make_desk(tmp_path, server, model="llama3")
        session, events = start(desk, "llama3")
        await turn(session, request_for(0))
        await desk.aclose()
    warnings = [e for e in events if isinstance(e, ContextNotice) and e.level == "warning"]
    assert warnings, "no truncation warning"
    assert "read only 512 tokens" in warnings[0].text
    assert "OLLAMA_CONTEXT_LENGTH" in warnings[0].text
    assert not session.context.calibrated  # a cut prompt does not calibrate


async def test_a_server_that_refuses_stream_options_is_asked_again_without(tmp_path: Path) -> None:
    with ScriptedOpenAI() as server:
        refusal = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
        server.script(
            [http_error(400, refusal)],
            [text("Hello."), done()],
            [text("Again."), done()],
        )
        desk = make_desk(tmp_path, server)
        session, _ = start(desk)
        await turn(session, "hi")
        await turn(session, "again")
        await desk.aclose()
    legs = server.legs_received
    assert "stream_options" in legs[0].json
    assert "stream_options" not in legs[1].json and "stream_options" not in legs[2].json
    assert [m.content for m in session.conversation.messages if m.role == "assistant"] == [
        "Hello.",
        "Again.",
    ]


async def test_compact_on_demand_and_edit_the_summary(tmp_path: Path) -> None:
    (tmp_path / ".melgui").mkdir()
    (tmp_path / ".melgui" / "instructions.md").write_text("Use tabs.\n")
    (tmp_path / "CLAUDE.md").write_text("Be brief.\n")
    write_notes(tmp_path, 8, 500)
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 100_000}]) as server:
        serve_long_model(server, LongModel())
        desk = make_desk(tmp_path, server)
        session, events = start(desk)
        for number in range(3):
            await turn(session, request_for(number))
        session.request_compaction()
        await asyncio.wait_for(session.wait_idle(), 20)
        assert is_summary_request(server.legs_received[-1])
        text_now = summary_text(session.conversation.messages)
        assert text_now is not None and "## Goal" in text_now
        session.branch(with_summary(session.conversation.messages, "## Goal\nEdited."), "edit")
        await turn(session, request_for(3))
        await desk.aclose()
    last = server.legs_received[-1].messages
    assert "Be brief." in last[0]["content"] and "Use tabs." in last[0]["content"]
    assert "CLAUDE.md" in last[0]["content"]
    assert any(m["content"] == SUMMARY_HEAD + "## Goal\nEdited." for m in last)
    users = [m["content"] for m in last if m["role"] == "user"]
    assert users[-2:] == [request_for(2), request_for(3)]  # the last two turns whole
    assert [e.reason for e in events if isinstance(e, HistoryBranched)] == ["compaction", "edit"]


async def test_the_relay_gets_the_project_instructions_as_a_system_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    with ScriptedRelay() as relay:
        relay.script([text("ok"), done()])
        settings = openai_settings(relay, connection="relay", relay_url=relay.url)  # type: ignore[arg-type]
        desk = Desk(str(tmp_path), settings, api_key="k", plans=lambda t, m: None)
        session, _ = start(desk, "relay-model")
        await turn(session, "hi")
        await desk.aclose()
    sent = relay.legs_received[0].messages
    assert sent[0]["role"] == "system" and RULES.strip() in sent[0]["content"]
    assert sent[1:] == [{"role": "user", "content": "hi"}]
    assert session.context.window.tokens is None  # the relay says nothing: unknown


def test_elided_results_keep_head_tail_and_pairing() -> None:
    from melgui.core.agent.compaction import elide, split
    from melgui.core.protocol.events import ToolCall

    big = "A" * 3000 + "MIDDLE" + "Z" * 3000
    messages = [
        Message.system("sys"),
        Message.user("one"),
        Message.assistant("", (ToolCall("c1", "read_file", '{"path": "x"}'),)),
        Message.tool_result("c1", big),
        Message.user("two"),
        Message.assistant("done"),
        Message.user("three"),
    ]
    plan = split(messages)
    assert plan.prefix == messages[:1]
    assert [m.content for m in plan.tail if m.role == "user"] == ["two", "three"]
    old, count = elide(plan.old)
    assert count == 1
    result = old[-1]
    assert result.tool_call_id == "c1" and result.content.startswith("A" * 800)
    assert result.content.endswith("Z" * 400) and "MIDDLE" not in result.content
    assert "read_file" in result.content
    assert not Conversation([*plan.prefix, *old, *plan.tail]).repair_pairing()


async def test_a_request_too_large_for_any_compaction_is_named_once(tmp_path: Path) -> None:
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 4000}]) as server:
        serve_long_model(server, LongModel())
        desk = make_desk(tmp_path, server)
        session, events = start(desk)
        await turn(session, "Summarise this: " + "word " * 8000)
        await turn(session, "And again, shorter.")
        await desk.aclose()
    warnings = [e.text for e in events if isinstance(e, ContextNotice) and e.level == "warning"]
    assert len(warnings) == 1, warnings
    assert "larger than the model's window of 4,000 tokens" in warnings[0]
    users = [m.content for m in session.conversation.messages if m.role == "user"]
    assert users[-1] == "And again, shorter." and users[0].startswith("Summarise this: word")
