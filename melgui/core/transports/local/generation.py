"""One leg of the local model, run in a worker thread.

`run_leg` emits events through a callback (the transport forwards them to the event
loop) and checks a cancel flag before every prompt chunk and every sampled token, so a
cancelled leg stops within one token.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCalls,
    Usage,
    WireEntry,
)
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.http.think_tags import Piece, ThinkTagSplitter
from melgui.core.transports.local.model import LoadedModel
from melgui.core.transports.local.plan import CallPlan, arguments_grammar, plan_leg
from melgui.core.transports.local.project import files_note, project_files, with_known_paths
from melgui.core.transports.local.prompt import (
    CALL_PREFIX,
    IM_END,
    IM_START,
    MESSAGE_HEAD,
    call_head,
    decision_grammar,
    parse_call_head,
    render_prompt,
    shrink_history,
)
from melgui.core.transports.project_instructions import project_instructions_text


@dataclass(frozen=True, slots=True)
class LocalProgress:
    """A status line for the person (reading a long prompt); not a stream event."""

    text: str


Emit = Callable[[StreamEvent | WireEntry | LocalProgress], None]

PREFILL_CHUNK = 64
PROGRESS_FROM = 256  # prompt tokens to read before the status bar shows progress
# Measured on SmolLM2-135M: call requests led 'message' by >= 3.8 logits, chat by <= 1.4.
MESSAGE_BIAS = 2.5
ANSWER_RESERVE = 512  # context tokens kept free for the answer when history is cut
ANSWER_TOKENS = 1024  # a small model that loops stops here (finish_reason "length")
TEXT_SAMPLING: dict[str, Any] = {
    "temperature": 0.2,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
}


# Greedy arguments: measured on SmolLM2-135M, they name the file the user named more often.
CALL_SAMPLING: dict[str, Any] = {**TEXT_SAMPLING, "temperature": 0.0}


class LegCancelled(Exception):
    """The consumer went away; the leg stops without another event."""


class _LegRun:
    def __init__(self, model: LoadedModel, cancelled: threading.Event, emit: Emit) -> None:
        self.llama = model.llama
        self.model = model
        self.cancelled = cancelled
        self.emit = emit
        self.sampled = 0
        self.prompt_tokens = 0
        self.files: list[str] | None = None
        self.project_note = ""
        self.llama_cpp = importlib.import_module("llama_cpp")

    def note(self, text: str) -> None:
        self.emit(WireEntry("note", text, time.time()))

    def _stop_check(self, _ids: Any, _logits: Any) -> bool:
        self.sampled += 1
        return self.cancelled.is_set()

    def tokenize(self, text: str) -> list[int]:
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def prefill(self, tokens: list[int]) -> None:
        """Evaluate all but the last prompt token in small chunks, checking cancel.

        llama.cpp then finds this prefix in its cache and evaluates only the rest.
        """
        llama = self.llama
        cached = 0
        for old, new in zip(llama.input_ids[: llama.n_tokens].tolist(), tokens, strict=False):
            if old != new:
                break
            cached += 1
        cached = min(cached, len(tokens) - 1)
        llama.n_tokens = cached
        end = len(tokens) - 1
        report = end - cached >= PROGRESS_FROM
        for start in range(cached, end, PREFILL_CHUNK):
            if self.cancelled.is_set():
                raise LegCancelled
            if report:
                percent = 100 * (start - cached) // (end - cached)
                self.emit(LocalProgress(f"Local model: reading the conversation… {percent}%"))
            llama.eval(tokens[start : min(start + PREFILL_CHUNK, end)])
        if report:
            self.emit(LocalProgress(f"Local model ready: {self.model.file_name}"))

    def complete(
        self, prompt: str, max_tokens: int, grammar: str | None, **sampling: Any
    ) -> Iterator[tuple[str, str | None]]:
        """(text piece, finish_reason) pairs of one completion of `prompt`."""
        tokens = self.tokenize(prompt)
        self.prefill(tokens)
        stops = self.llama_cpp.StoppingCriteriaList([self._stop_check])
        chunks = self.llama.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            stream=True,
            stop=[IM_END, IM_START],
            stopping_criteria=stops,
            grammar=self.llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)
            if grammar
            else None,
            **sampling,
        )
        try:
            for chunk in chunks:
                if self.cancelled.is_set():
                    raise LegCancelled
                choice = chunk["choices"][0]
                yield choice.get("text") or "", choice.get("finish_reason")
        finally:
            chunks.close()
        if self.cancelled.is_set():
            raise LegCancelled

    def prefers_call(self, prompt: str) -> bool:
        """Whether the model would rather open a call than a message, by next-token logits.

        Small models rarely begin with 'message:' unprompted; MESSAGE_BIAS evens that out.
        """
        tokens = self.tokenize(prompt)
        self.prefill(tokens)
        if self.cancelled.is_set():
            raise LegCancelled
        self.llama.eval(tokens[-1:])
        # With logits_all off, llama.cpp keeps only the last position's logits.
        numpy = importlib.import_module("numpy")  # comes with llama-cpp-python, not the app
        logits = numpy.ctypeslib.as_array(
            self.llama._ctx.get_logits(), shape=(self.llama.n_vocab(),)
        )
        call = self.first_token(CALL_PREFIX)
        message = self.first_token(MESSAGE_HEAD)
        margin = float(logits[call] - logits[message])
        self.note(f"local decision: call leads message by {margin:+.2f} logits")
        return margin > MESSAGE_BIAS

    def first_token(self, text: str) -> int:
        return int(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)[0])

    def room(self, prompt: str) -> int:
        return self.model.n_ctx - len(self.tokenize(prompt)) - 1

    def usage(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.sampled,
            total_tokens=self.prompt_tokens + self.sampled,
        )

    def run(self, request: LegRequest, plan: CallPlan) -> StreamEvent:
        # Small models invent paths: show them the files and hold read paths to them.
        self.files = project_files(request.cwd) if self.model.small else None
        project = project_instructions_text(request.cwd)  # AGENTS.md & co (issue 19)
        self.project_note = f"\n\n{project}" if project else ""
        prompt = self.fitted_prompt(request.messages, plan)
        if prompt is None:
            return StreamError(
                f"The conversation ({self.prompt_tokens} tokens) does not fit the local "
                f"model's context of {self.model.n_ctx} tokens; start a new conversation."
            )
        if not plan.callable:
            return self.text(prompt + MESSAGE_HEAD if plan.tools else prompt)
        if len(plan.callable) == 1 and not plan.allow_message:
            return self.call(prompt, plan.callable[0])
        names = [tool.name for tool in plan.callable]
        grammar = decision_grammar(names, allow_message=False)
        if plan.allow_message:
            try:
                wants_call = self.prefers_call(prompt)
            except AttributeError:  # no such llama-cpp internal: the grammar chooses
                grammar = decision_grammar(names, allow_message=True)
            else:
                if not wants_call:
                    self.note("local model chose: 'message:'")
                    return self.text(prompt + MESSAGE_HEAD)
        pieces = self.complete(prompt, 32, grammar, temperature=0.0)
        head = "".join(text for text, _ in pieces)
        self.note(f"local model chose: {head.strip()!r}")
        name = parse_call_head(head)
        tool = next((tool for tool in plan.callable if tool.name == name), None)
        if tool is None:
            return self.text(prompt + MESSAGE_HEAD)
        return self.call(prompt, tool)

    def fitted_prompt(self, messages: list[dict[str, Any]], plan: CallPlan) -> str | None:
        """The prompt, with long contents cut and old exchanges dropped until it fits."""
        budget = self.model.n_ctx - min(ANSWER_RESERVE, self.model.n_ctx // 4)
        history: list[dict[str, Any]] | None = messages
        while history is not None:
            prompt = render_prompt(
                history,
                plan.tools,
                with_tools=bool(plan.tools),
                context=(files_note(self.files) if self.files is not None else "")
                + self.project_note,
            )
            self.prompt_tokens = len(self.tokenize(prompt))
            if self.prompt_tokens <= budget:
                if history is not messages:
                    self.note(f"local prompt shortened to fit: {len(history)} messages")
                self.note(f"local prompt: {self.prompt_tokens} tokens, {self.model.file_name}")
                return prompt
            history = shrink_history(history)
        return None

    def text(self, prompt: str) -> StreamEvent:
        finish: str | None = None
        limit = min(self.room(prompt), ANSWER_TOKENS)
        tags = ThinkTagSplitter()  # a reasoning model's <think>…</think> stays apart
        for piece, reason in self.complete(prompt, limit, None, **TEXT_SAMPLING):
            if piece:
                self._emit_pieces(tags.feed(piece))
            finish = reason or finish
        self._emit_pieces(tags.flush())
        return Done(usage=self.usage(), finish_reason=finish or "stop")

    def _emit_pieces(self, pieces: list[Piece]) -> None:
        for kind, text in pieces:
            self.emit(ReasoningDelta(text) if kind == "reasoning" else TextDelta(text))

    def call(self, prompt: str, tool: ToolDef) -> StreamEvent:
        prompt += call_head(tool.name)
        gbnf = arguments_grammar(with_known_paths(tool, self.files), required_only=self.model.small)
        pieces = list(self.complete(prompt, self.room(prompt), gbnf, **CALL_SAMPLING))
        arguments = "".join(text for text, _ in pieces).strip()
        try:
            json.loads(arguments)
        except ValueError:
            return StreamError(
                f"The local model's call of {tool.name} was cut off before its arguments "
                "were complete.",
                retryable=True,
            )
        call = ToolCall(f"call_{uuid.uuid4().hex[:24]}", tool.name, arguments)
        return ToolCalls((call,), usage=self.usage())


def run_leg(
    model: LoadedModel,
    request: LegRequest,
    cancelled: threading.Event,
    emit: Emit,
    max_tool_rounds: int,
) -> None:
    """Run one leg to its end event (none when cancelled); one leg per model at a time."""
    plan = plan_leg(request, max_tool_rounds)
    if isinstance(plan, str):
        emit(StreamError(plan))
        return
    while not model.lock.acquire(timeout=0.05):
        if cancelled.is_set():
            return
    try:
        leg = _LegRun(model, cancelled, emit)
        end = leg.run(request, plan)
    except LegCancelled:
        return
    except Exception as exc:  # llama.cpp failures must end the leg, not the app
        end = StreamError(f"The local model failed: {exc}")
    finally:
        model.lock.release()
    emit(end)
