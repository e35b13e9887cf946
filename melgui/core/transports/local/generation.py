"""One leg of the local model, run in a worker thread.

`run_leg` emits events through a callback (the transport forwards them to the event
loop). The engine streams every prompt batch and every sampled token through
`_Completion`, which checks a cancel flag each time, so a cancelled leg stops within one
token (or one prompt batch).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from melgui.core.config.project_instructions import project_instructions_text
from melgui.core.protocol import bounded_json
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
from melgui.core.transports.local.patterns import with_known_patterns
from melgui.core.transports.local.plan import (
    CUE_BIAS,
    CallPlan,
    arguments_grammar,
    cued_tools,
    only_arguments,
    plan_leg,
)
from melgui.core.transports.local.project import (
    files_note,
    named_files,
    project_files,
    with_known_paths,
)
from melgui.core.transports.local.prompt import (
    MESSAGE_HEAD,
    call_head,
    decision_grammar,
    parse_call_head,
    render_prompt,
    shrink_history,
)


@dataclass(frozen=True, slots=True)
class LocalProgress:
    """A status line for the person (reading a long prompt); not a stream event."""

    text: str


@dataclass(slots=True)
class LegTimes:
    """Where a leg's seconds went; not a stream event. Reading prompts is up to each
    completion's first token (with the engine's grammar set-up and batches a count
    left running), generating from there to its last token (grammar-constrained
    sampling included), building grammars what melgui spent writing them."""

    prompt: float = 0.0
    grammar: float = 0.0
    generation: float = 0.0
    read: int = 0  # prompt tokens read, not taken from the cache (as first counted)
    generated: int = 0
    sampled_calls: int = 0  # calls whose arguments the model wrote
    given_calls: int = 0  # calls whose grammar admitted one value: not sampled

    def line(self) -> str:
        return (
            f"local leg: prompt {self.prompt:.2f} s ({self.read} tokens read), grammar "
            f"{self.grammar:.3f} s, generation {self.generation:.2f} s "
            f"({self.generated} tokens)"
        )


Emit = Callable[[StreamEvent | WireEntry | LocalProgress | LegTimes], None]

PROGRESS_FROM = 256  # prompt tokens to read before the status bar shows progress
# Measured on SmolLM2-135M: call requests led 'message' by >= 3.8 logits, chat by <= 1.4.
# The decision adds this much to the logit of 'message' and takes the larger.
MESSAGE_BIAS = 2.5
ANSWER_RESERVE = 512  # context tokens kept free for the answer when history is cut
# A call's arguments stop here: a schema-exact grammar ends well before, and without the
# bound a model looping inside a string ran to the end of the context (minutes).
CALL_TOKENS = 1536
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
# A small model's answer after a tool result: greedy, and each word of the result a
# little likelier (a copy bias). SmolLM2-135M otherwise wrote a fluent answer that did
# not say what the file said.
COPY_BIAS = 1.0
COPY_WORDS = 200
RESULT_ANSWER_TOKENS = 200
RESULT_WORD = re.compile(r"[A-Za-z]{3,}|\d{2,}")  # no punctuation, no line numbers


# An answer in words: it does not open with JSON, a code fence or a call head
# ("functions."), which SmolLM2-135M wrote as answers after reading a file.
WORDS_GRAMMAR = r"""root ::= first rest
first ::= [^{\[`f\x00-\x20] | "f" [^u]
rest ::= [^\x00]*
"""
JSON_WORDS = ("json", "yaml", "toml")


def copy_bias(request: LegRequest | None) -> list[list[Any]]:
    """Logit biases toward the words of the tool results that end the conversation
    (each word as written and after a space: the two ways it is tokenized)."""
    results: list[str] = []
    for message in reversed(request.messages if request is not None else []):
        if message.get("role") != "tool":
            break
        results.append(str(message.get("content") or ""))
    words = dict.fromkeys(w for text in results for w in RESULT_WORD.findall(text))
    return [[form, COPY_BIAS] for word in list(words)[:COPY_WORDS] for form in (word, " " + word)]


def last_user_text(request: LegRequest) -> str:
    users = [m for m in request.messages if m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


def asks_for_json(request: LegRequest | None) -> bool:
    """Whether the last user message asks for a structured answer (JSON and the like)."""
    if request is None:
        return False
    return any(word in last_user_text(request).lower() for word in JSON_WORDS)


class LegCancelled(Exception):
    """The consumer went away; the leg stops without another event."""


class EngineError(Exception):
    """The engine refused a request; the message is its own."""

    def __init__(self, message: str, kind: str = "", prompt_tokens: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.prompt_tokens = prompt_tokens


class _Completion:
    """One streamed completion: the engine calls `chunk` for every prompt batch and token.

    `chunk` never raises (it runs inside the engine); it returns True to stop the engine.
    """

    def __init__(self, leg: _LegRun, on_text: Callable[[str], None] | None, count_only: bool):
        self.leg = leg
        self.on_text = on_text
        self.count_only = count_only
        self.texts: list[str] = []
        self.finish: str | None = None
        self.error: EngineError | None = None
        self.prompt_tokens = 0
        self.first_token: float | None = None  # perf_counter of the first text
        self.timings: dict[str, Any] = {}  # the engine's, from the last chunk

    def chunk(self, data: Any) -> bool:
        try:
            return self._chunk(data)
        except Exception as exc:  # an emit that failed: stop, and say so after the call
            self.error = EngineError(f"{type(exc).__name__}: {exc}")
            return True

    def _chunk(self, data: dict[str, Any]) -> bool:
        if "error" in data:
            raw = data["error"]
            error: dict[str, Any] = raw if isinstance(raw, dict) else {"message": str(raw)}
            self.error = EngineError(
                str(error.get("message", error)),
                str(error.get("type", "")),
                int(error.get("n_prompt_tokens", 0) or 0),
            )
            return True
        progress = data.get("prompt_progress")
        if progress:
            self.prompt_tokens = int(progress.get("total", 0))
            self._report(progress)
            if self.count_only:
                return True
            return self.leg.cancelled.is_set()
        choice = (data.get("choices") or [{}])[0]
        text = choice.get("text") or ""
        self.timings = data.get("timings") or self.timings
        if text:
            self.leg.model.generated += 1
            self.first_token = self.first_token or time.perf_counter()
            if self.leg.reported:  # a count may have reported reading: say it is over
                self.leg.reported = False
                self.leg.emit(LocalProgress(f"Local model ready: {self.leg.model.file_name}"))
        self.finish = choice.get("finish_reason") or self.finish
        usage = data.get("usage")
        if usage:
            self.prompt_tokens = int(usage.get("prompt_tokens", self.prompt_tokens))
            self.leg.sampled += int(usage.get("completion_tokens", 0))
        if self.leg.cancelled.is_set():
            return True
        if text:
            self.texts.append(text)
            if self.on_text is not None:
                self.on_text(text)
        return False

    def _report(self, progress: dict[str, Any]) -> None:
        total, cached = int(progress.get("total", 0)), int(progress.get("cache", 0))
        leg = self.leg
        if leg.reading is None:  # the first look at this prompt: is it long to read?
            leg.reading = (cached, total) if total - cached >= PROGRESS_FROM else (total, total)
            leg.times.read += total - cached
        start, end = leg.reading
        if end != total:  # another prompt (a shortened one): judge it anew
            leg.reading = None
            self._report(progress)
            return
        if end - start < PROGRESS_FROM:
            return
        percent = 100 * max(int(progress.get("processed", 0)) - start, 0) // (end - start)
        if percent >= 100:
            return
        leg.reported = True
        leg.emit(LocalProgress(f"Local model: reading the conversation… {percent}%"))


class _LegRun:
    def __init__(self, model: LoadedModel, cancelled: threading.Event, emit: Emit) -> None:
        self.server = model.server
        self.model = model
        self.cancelled = cancelled
        self.emit = emit
        self.sampled = 0
        self.prompt_tokens = 0
        self.request: LegRequest | None = None
        self.files: list[str] | None = None
        self.complete_files = False
        self.project_note = ""
        self._counts: dict[str, int] = {}
        self.reading: tuple[int, int] | None = None  # (cached, total) when a prompt was new
        self.reported = False  # reading progress was shown and not yet ended
        self.times = LegTimes()

    def note(self, text: str) -> None:
        self.emit(WireEntry("note", text, time.time()))

    def _run(self, body: dict[str, Any], completion: _Completion) -> _Completion:
        if self.cancelled.is_set():
            raise LegCancelled
        body = {**body, "stream": True, "return_progress": True, "cache_prompt": True}
        started = time.perf_counter()
        self.server.handle_completions(body, completion.chunk)
        ended = time.perf_counter()
        first = completion.first_token or ended
        self.times.prompt += first - started
        self.times.generation += ended - first
        self.times.generated += int(completion.timings.get("predicted_n") or 0)
        if self.cancelled.is_set():
            raise LegCancelled
        return completion

    def count(self, prompt: str) -> int:
        """How many tokens `prompt` is, as the engine reads it (it stops before reading)."""
        if prompt not in self._counts:
            completion = _Completion(self, None, count_only=True)
            self._run({"prompt": prompt, "n_predict": 1}, completion)
            error = completion.error
            if error is not None and error.kind != "exceed_context_size_error":
                raise error
            self._counts[prompt] = error.prompt_tokens if error else completion.prompt_tokens
        return self._counts[prompt]

    def complete(
        self,
        prompt: str,
        max_tokens: int,
        grammar: str | None,
        on_text: Callable[[str], None] | None = None,
        **sampling: Any,
    ) -> tuple[str, str | None]:
        """(text, finish_reason) of one completion of `prompt`; pieces go to `on_text`."""
        body: dict[str, Any] = {
            "prompt": prompt,
            "n_predict": max_tokens,
            "stop": self.model.chat.stops,
            **sampling,
        }
        if grammar:
            body["grammar"] = grammar
        completion = self._run(body, _Completion(self, on_text, count_only=False))
        if completion.error is not None:
            raise completion.error
        return "".join(completion.texts), completion.finish

    def room(self, prompt: str) -> int:
        return self.model.n_ctx - self.count(prompt) - 1

    def usage(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.sampled,
            total_tokens=self.prompt_tokens + self.sampled,
        )

    def run(self, request: LegRequest, plan: CallPlan) -> StreamEvent:
        self.request = request
        # Small models invent paths: show them the files and hold read paths to them.
        self.files = project_files(request.cwd) if self.model.small else None
        self.complete_files = self.files is not None
        if self.model.small and self.files is None:  # a big project: the first ones
            self.files = project_files(request.cwd, truncate=True)
        project = project_instructions_text(request.cwd)  # AGENTS.md & co
        self.project_note = f"\n\n{project}" if project else ""
        prompt = self.fitted_prompt(request.messages, plan)
        if prompt is None:
            return StreamError(
                f"The conversation ({self.prompt_tokens} tokens) does not fit the local "
                f"model's context of {self.model.n_ctx} tokens; start a new conversation."
            )
        if not plan.callable:
            worded = self.model.small or not plan.tools  # the prompt lists no tools
            return self.text(prompt if worded else prompt + MESSAGE_HEAD)
        if len(plan.callable) == 1 and not plan.allow_message:
            return self.call(prompt, plan.callable[0])
        names = [tool.name for tool in plan.callable]
        # Small models rarely begin with 'message:' unprompted; the bias evens that out.
        bias: list[list[Any]] = [["message", MESSAGE_BIAS]] if plan.allow_message else []
        if self.model.small:
            cued = cued_tools(request, plan.callable, self.files)
            bias += [[name, CUE_BIAS] for name in cued]
        started = time.perf_counter()
        grammar = decision_grammar(names, allow_message=plan.allow_message)
        self.times.grammar += time.perf_counter() - started
        head, _ = self.complete(prompt, 32, grammar, temperature=0.0, logit_bias=bias)
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
        # The file list serves calls; when nothing may be called, or it does not fit,
        # the prompt goes without it.
        listing = files_note(self.files) if self.files is not None and plan.callable else ""
        while history is not None:
            prompt = render_prompt(
                history,
                plan.tools,
                # A small model that may not call tools gets a plain chat: shown
                # tools, it answered with more calls or invented JSON.
                with_tools=bool(plan.tools) and (bool(plan.callable) or not self.model.small),
                context=listing + self.project_note,
                chat=self.model.chat,
                compact=self.model.small,
            )
            self.prompt_tokens = self.count(prompt)
            if self.prompt_tokens <= budget:
                if history is not messages:
                    self.note(f"local prompt shortened to fit: {len(history)} messages")
                self.note(f"local prompt: {self.prompt_tokens} tokens, {self.model.file_name}")
                return prompt
            history = shrink_history(history)
            if history is None and listing:
                history, listing = messages, ""
        return None

    def text(self, prompt: str) -> StreamEvent:
        limit = min(self.room(prompt), ANSWER_TOKENS)
        tags = ThinkTagSplitter()  # a reasoning model's <think>…</think> stays apart

        def forward(piece: str) -> None:
            self._emit_pieces(tags.feed(piece))

        grammar = WORDS_GRAMMAR if self.model.small and not asks_for_json(self.request) else None
        bias = copy_bias(self.request) if self.model.small else []
        sampling = {**CALL_SAMPLING, "logit_bias": bias} if bias else TEXT_SAMPLING
        if bias:  # past this, a small model's answer to a result only rambles on
            limit = min(limit, RESULT_ANSWER_TOKENS)
        _, finish = self.complete(prompt, limit, grammar, forward, **sampling)
        self._emit_pieces(tags.flush())
        return Done(usage=self.usage(), finish_reason=finish or "stop")

    def _emit_pieces(self, pieces: list[Piece]) -> None:
        for kind, text in pieces:
            self.emit(ReasoningDelta(text) if kind == "reasoning" else TextDelta(text))

    def call(self, prompt: str, tool: ToolDef) -> StreamEvent:
        prompt += call_head(tool.name)
        started = time.perf_counter()
        files, complete = self.files, self.complete_files
        if tool.must_exist == "file" and files and self.request is not None:
            # The file the person named by its path is the one a small model should read.
            named = named_files(last_user_text(self.request), files)
            files, complete = (named, True) if named else (files, complete)
        known = with_known_paths(tool, files, complete=complete)
        if self.model.small and files and self.request is not None:
            request = last_user_text(self.request)
            known = with_known_patterns(known, request, self.request.cwd, files)
        given = only_arguments(known, required_only=self.model.small)
        if given is not None:  # nothing to sample: each forced token would cost a step
            self.times.grammar += time.perf_counter() - started
            self.times.given_calls += 1
            self.note(f"local call of {tool.name}: its grammar admits only {given}")
            return self._tool_calls(tool, given)
        grammar = arguments_grammar(known, required_only=self.model.small)
        self.times.grammar += time.perf_counter() - started
        limit = min(self.room(prompt), CALL_TOKENS)
        text, _ = self.complete(prompt, limit, grammar, **CALL_SAMPLING)
        self.times.sampled_calls += 1
        arguments = text.strip()
        try:
            bounded_json.loads(arguments)
        except ValueError:
            return StreamError(
                f"The local model's call of {tool.name} was cut off before its arguments "
                "were complete.",
                retryable=True,
            )
        return self._tool_calls(tool, arguments)

    def _tool_calls(self, tool: ToolDef, arguments: str) -> ToolCalls:
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
    leg = _LegRun(model, cancelled, emit)
    try:
        end = leg.run(request, plan)
    except LegCancelled:
        return
    except Exception as exc:  # engine failures must end the leg, not the app
        end = StreamError(f"The local model failed: {exc}")
    finally:
        model.lock.release()
    if leg.reported:  # it read a long prompt and sampled nothing (a call given whole)
        emit(LocalProgress(f"Local model ready: {model.file_name}"))
    emit(leg.times)
    emit(end)
