"""Single tool calls a view sends to the host, for a loop that runs elsewhere (a remote
folder: the loop and the model connection stay on the person's machine, the tools run
here). Idempotent by call id, results kept until acknowledged:

    calls = ToolCalls()
    calls.run("v1/3", "/srv/p", "read_file", {"path": "a"})   # {"state": "started"}
    calls.run("v1/3", ...)                                     # {"state": "running"}: never twice
    calls.on_result = send                                     # {"seq": 1, "call_id": "v1/3", ...}
    calls.since(0)                                             # results not acknowledged yet
    calls.ack(through=1)

A call id is the view's (unique per call it makes); a call id this host has seen is never
run again, whether it is running, finished or acknowledged. Results are numbered per host
(`host_id` names this host's life): a view reattaching says the last number it has and
gets every result after it, exactly once per reattach; a view that hears a result again
(a lost acknowledgement) drops it by its call id.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, Protocol, cast

from melgui.core.config.settings import Settings, SettingsError, load_settings
from melgui.core.hooks.config import EVENTS
from melgui.core.hooks.there import HooksSummary, ProjectHooks
from melgui.core.hooks.watch import HooksWatch
from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL, EDITING_TOOLS, ProjectDiagnostics
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import RUNNING_CALL, HookEvent, ToolOutcome, ToolRegistry
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.restore import Choice
from melgui.core.store.checkpoints.sent import record_to_json, undone_by
from melgui.core.store.checkpoints.shadow import GitError
from melgui.core.store.checkpoints.versions import conflict_versions
from melgui.desk.kit import WorkspaceKit
from melgui.desk.mcp.for_loops_elsewhere import MCP_SERVERS, HostedMcp, project_entries
from melgui.desk.rewind import call_records
from melgui.host import wire
from melgui.host.wire import RpcError

log = logging.getLogger(__name__)

Result = dict[str, Any]
State = Literal["started", "running", "done", "acknowledged"]
TIDY_EVERY = 200  # checkpoints of a folder between two prunes of it (cheap when none is due)


def outcome_to_json(outcome: ToolOutcome) -> dict[str, Any]:
    return {
        "content": outcome.content,
        "status": outcome.status,
        "parts": [dataclasses.asdict(part) for part in outcome.parts],
    }


def outcome_from_json(data: dict[str, Any]) -> ToolOutcome:
    from melgui.core.protocol.tooling import ResultPart

    parts = tuple(ResultPart(**part) for part in data.get("parts") or ())
    content = str(data.get("content", ""))
    if data.get("status") == "error":
        return ToolOutcome(content, "error", parts)
    return ToolOutcome(content, "ok", parts)


class ToolCalls:
    """The calls views sent this host: running, finished and not yet acknowledged, and the
    ids of every call it has taken (so none runs twice)."""

    def __init__(self, settings: Callable[[], Settings] | None = None) -> None:
        self.host_id = uuid.uuid4().hex[:12]
        self._settings = settings or _load_settings
        self._registries: dict[str, ToolRegistry] = {}
        self._kits: list[WorkspaceKit] = []
        self._mcp: dict[str, HostedMcp] = {}  # by registry key: the servers its calls reach
        self._retired: list[asyncio.Task[None]] = []  # server sets being stopped
        self._checkpoints: dict[str, Checkpointer] = {}  # by folder, kept in this host's data
        self._since_tidy: dict[str, int] = {}  # by folder: checkpoints since old ones went
        self._running: dict[str, asyncio.Task[None]] = {}
        self._diagnostics: dict[str, ProjectDiagnostics] = {}  # by folder
        self.hooks = HooksWatch()  # the project's hooks of folders here, and what they have
        # (folder, its servers described): a server's state changed after they started
        self.on_mcp: Callable[[str, list[dict[str, Any]]], None] | None = None
        self._results: dict[str, Result] = {}  # by call id, not acknowledged yet
        self._acknowledged: set[str] = set()
        self._seq = 0
        self.on_result: Callable[[Result], None] | None = None
        # (folder, what its hooks are now): a watched folder's hooks changed (check_hooks)
        self.on_hooks: Callable[[str, HooksSummary], None] | None = None

    def settings(self) -> Settings:
        """This machine's melgui settings, as they are now."""
        return self._settings()

    # -- what a view asks ----------------------------------------------------------------

    def run(
        self,
        call_id: str,
        folder: str,
        name: str,
        arguments: dict[str, Any],
        options: dict[str, Any] | None = None,
        checkpoint: dict[str, Any] | None = None,
    ) -> State:
        """Start the call, unless this host has seen its id: then say where it is.
        `options`: the view's settings for this machine (`sandbox`, `env`, `mcp_servers`:
        the entries of the MCP servers that run here for it). `checkpoint` (`{call,
        summary, source}`): snapshot the folder here before the call and after it."""
        state = self.state(call_id)
        if state is not None:
            return state
        registry, servers = self._registry(folder, options or {})
        guard = self.guard(folder, name, checkpoint)
        diagnostics = self._diagnostics_of(folder) if (options or {}).get("diagnostics") else None
        running = self._run(call_id, registry, servers, name, arguments, guard, diagnostics)
        task = asyncio.get_running_loop().create_task(running)
        self._running[call_id] = task
        return "started"

    def run_hooks(
        self,
        call_id: str,
        folder: str,
        event: HookEvent,
        names: list[str],
        payload: dict[str, Any],
    ) -> State:
        """Run the project's hooks of `folder` here for one point of a loop elsewhere
        (`hooks/run`): a call like any other, never run twice, its result kept until
        acknowledged, its `outcome.hooks` the runs (hooks/there.py)."""
        state = self.state(call_id)
        if state is not None:
            return state
        running = self._run_hooks(call_id, self.hooks.project(folder), event, names, payload)
        self._running[call_id] = asyncio.get_running_loop().create_task(running)
        return "started"

    async def _run_hooks(
        self,
        call_id: str,
        hooks: ProjectHooks,
        event: HookEvent,
        names: list[str],
        payload: dict[str, Any],
    ) -> None:
        sent: dict[str, Any] = {"content": "", "status": "ok", "parts": []}
        try:
            sent["hooks"] = await hooks.run(event, names, payload)
        except asyncio.CancelledError:
            sent.update(status="error", content="the hooks were cancelled")
        except Exception as exc:  # a hook's fault is the point's answer, never the host's end
            log.exception("hooks of %s failed", event)
            sent.update(status="error", content=f"the hooks failed on the host: {exc}")
        self._finish(call_id, "hooks/run", sent)

    def state(self, call_id: str) -> State | None:
        if call_id in self._running:
            return "running"
        if call_id in self._results:
            return "done"
        if call_id in self._acknowledged:
            return "acknowledged"
        return None

    def since(self, seq: int) -> list[Result]:
        """The results not acknowledged yet that are numbered after `seq`, in order."""
        return sorted((r for r in self._results.values() if r["seq"] > seq), key=_seq_of)

    def running(self) -> list[str]:
        return list(self._running)

    def ack(self, *, through: int | None = None, calls: list[str] | None = None) -> int:
        """Forget results the view has: every one numbered up to `through`, and `calls`."""
        gone = [
            call_id
            for call_id, result in self._results.items()
            if (through is not None and result["seq"] <= through) or call_id in (calls or ())
        ]
        for call_id in gone:
            del self._results[call_id]
            self._acknowledged.add(call_id)
        return len(gone)

    def cancel(self, call_id: str) -> bool:
        """Stop a running call (its result says it was cancelled, and is kept as any other)."""
        task = self._running.get(call_id)
        if task is None:
            return False
        task.cancel()
        return True

    def busy(self) -> bool:
        return bool(self._running)

    # -- running -------------------------------------------------------------------------

    def _registry(
        self, folder: str, options: dict[str, Any]
    ) -> tuple[ToolRegistry, HostedMcp | None]:
        # `diagnostics` says what runs after a call, not which registry runs it
        keyed = {k: v for k, v in options.items() if k != "diagnostics"}
        key = json.dumps([folder, keyed], sort_keys=True)
        registry = self._registries.get(key)
        if registry is None:
            settings = self._settings()
            if isinstance(options.get("sandbox"), bool):
                settings = settings.model_copy(update={"sandbox_commands": options["sandbox"]})
            env = options.get("env")
            given = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
            kit = WorkspaceKit(folder, settings, None, _no_plan, env=given)  # kept on a rebuild
            self._kits.append(kit)
            registry = self._registries[key] = kit.registry()
            entries = options.get("mcp_servers")
            trusted = options.get("project_mcp")  # the project's file, as it was trusted
            if isinstance(trusted, str):
                entries = {**(entries if isinstance(entries, dict) else {}),
                           **project_entries(folder, trusted)}  # fmt: skip
            if isinstance(entries, dict) and entries:
                hosted = self._mcp[key] = HostedMcp(folder, registry, entries, env=given)
                hosted.on_change = lambda servers: self._mcp_changed(folder, servers)
            if isinstance(trusted, str):
                self._retire(folder, options)
        return registry, self._mcp.get(key)

    def _mcp_changed(self, folder: str, servers: list[dict[str, Any]]) -> None:
        if self.on_mcp is not None:
            self.on_mcp(folder, servers)

    async def restart_mcp(
        self, folder: str, options: dict[str, Any], name: str
    ) -> list[dict[str, Any]]:
        """Start server `name` of the folder's set for `options` again (the MCP panel's
        Restart there); the set's servers as they are then. KeyError: no such server."""
        _registry, servers = self._registry(folder, options)
        if servers is None:
            raise KeyError(name)
        return await servers.restart(name)

    def _retire(self, folder: str, options: dict[str, Any]) -> None:
        """The servers started for the same options before the project's file was trusted
        are stopped: its view's calls carry the new options from now on (the same
        servers run again in the new set, with the project's)."""
        before = {k: v for k, v in options.items() if k not in ("project_mcp", "diagnostics")}
        key = json.dumps([folder, before], sort_keys=True)
        self._registries.pop(key, None)  # made again, servers and all, if asked again
        old = self._mcp.pop(key, None)
        if old is not None:
            self._retired.append(asyncio.get_running_loop().create_task(old.aclose()))

    async def _run(
        self,
        call_id: str,
        registry: ToolRegistry,
        servers: HostedMcp | None,
        name: str,
        arguments: dict[str, Any],
        guard: contextlib.AbstractAsyncContextManager[None],
        diagnostics: ProjectDiagnostics | None = None,
    ) -> None:
        token = RUNNING_CALL.set(("remote", call_id, name))
        after: dict[str, Any] | None = None
        try:
            async with guard:
                if name == DIAGNOSTICS_TOOL.name:
                    outcome = await _diagnostics_tool(diagnostics, arguments)
                else:
                    outcome = await _outcome(registry, servers, name, arguments)
            if diagnostics is not None:
                after = await _after(diagnostics, call_id, name, arguments, outcome)
        except asyncio.CancelledError:
            outcome = ToolOutcome.error(f"{name} was cancelled.")
        except Exception as exc:  # a tool's fault is the call's result, never the host's end
            log.exception("tool %s failed", name)
            outcome = ToolOutcome.error(f"{name} failed on the host: {exc}")
        finally:
            RUNNING_CALL.reset(token)
        sent = outcome_to_json(outcome)
        if after is not None:  # the language servers' new errors after an edit here
            sent["after"] = after
        self._finish(call_id, name, sent)

    def check_hooks(self) -> None:
        """Tell (`on_hooks`) the watched folders whose hooks changed: after each call
        here, before its result (a hooks file it wrote is known before the view's next
        point), and whenever the host looks (every second, after an agent's write)."""
        if self.on_hooks is not None and self.hooks.watching():
            for folder, summary in self.hooks.changed():
                self.on_hooks(folder, summary)

    def _finish(self, call_id: str, name: str, sent: dict[str, Any]) -> None:
        """A call's result: numbered, kept until acknowledged, told to the views."""
        self.check_hooks()
        self._running.pop(call_id, None)
        self._seq += 1
        result = {"seq": self._seq, "call_id": call_id, "name": name, "outcome": sent}
        self._results[call_id] = result
        if self.on_result is not None:
            self.on_result(result)

    def _diagnostics_of(self, folder: str) -> ProjectDiagnostics:
        """The folder's language servers here (a view's options asked for them: this
        machine's installed servers, or its settings' `language_servers`)."""
        found = self._diagnostics.get(folder)
        if found is None:
            found = self._diagnostics[folder] = ProjectDiagnostics(
                folder, trusted=lambda: True, configured=lambda: self._settings().language_servers
            )
        return found

    # -- checkpoints of the folders here -------------------------------------------------

    def checkpointer(self, folder: str) -> Checkpointer:
        """The checkpoints of `folder`, in this host's data folder (its shadow repository
        and index): a remote folder's files are only here."""
        found = self._checkpoints.get(folder)
        if found is None:
            settings = self._settings()
            mb = 1024 * 1024
            found = self._checkpoints[folder] = Checkpointer(
                folder,
                max_file_bytes=int(settings.checkpoint_file_cap_mb * mb),
                keep_days=settings.checkpoint_keep_days,
                max_bytes=int(settings.checkpoint_max_mb * mb),
            )
        return found

    async def restore(
        self,
        folder: str,
        calls: list[str],
        choices: dict[str, Choice] | None = None,
        *,
        plan_only: bool = False,
        records: list[int] | None = None,
    ) -> dict[str, Any]:
        """Put back the files these calls (the model's ids) changed in `folder`, as a
        rewind does here; a file changed since by someone else keeps its current version
        unless `choices` says "before". The restore is itself a checkpoint. `plan_only`:
        say which files it would put back and which conflict (with `versions`: each
        conflict's three versions as text, for the window's dialog), and touch nothing.
        `records`: these checkpoints (ids, as `checkpoint_calls` gives them) instead of
        the calls': a card's "Undo this call", or "redo" (the undo of a restore)."""
        checkpoints = await self._tidy(folder)
        if records is not None:
            found = [checkpoints.log.get(record_id) for record_id in records]
            chosen = [r for r in found if r is not None and r.folder == checkpoints.folder]
        else:
            chosen = call_records(checkpoints, calls)
        if not chosen:
            return {"restored": None, "files": [], "conflicts": [], "skipped": []}
        ids = [r.id for r in chosen]
        plan = await checkpoints.plan(ids)
        if plan_only:
            files = [p.path for p in plan.paths if not p.settled]
            conflicts = [p.path for p in plan.conflicts]
            versions = await conflict_versions(checkpoints, plan.conflicts)
            return {"restored": None, "files": files, "conflicts": conflicts, "skipped": [],
                    "versions": versions}  # fmt: skip
        done = await checkpoints.restore(ids, choices or {})
        return {
            "restored": done.id,
            "files": sorted({change.path for change in done.files}),
            "conflicts": [p.path for p in plan.conflicts],
            "skipped": list(checkpoints.skipped),
        }

    async def checkpoint_calls(
        self, folder: str, calls: list[str], lines: bool = False
    ) -> list[dict[str, Any]]:
        """The checkpoints of these calls (the model's ids) in `folder`, each with the
        restore that undid it: what a call card there shows; `lines`: with each file's
        lines added and removed (the turn's review bar)."""
        checkpoints = self.checkpointer(folder)
        found = [r for r in checkpoints.for_calls(calls) if not r.is_restore]
        sent = [record_to_json(r, undone_by(checkpoints, r)) for r in found]
        if lines:
            for record, data in zip(found, sent, strict=True):
                counts = await checkpoints.line_counts(record)
                data["lines"] = [[path, *counted] for path, counted in counts.items()]
        return sent

    async def checkpoint_diff(self, folder: str, record_id: int, compare: bool) -> str:
        """A checkpoint's change as a unified diff; `compare`: the files it changed, from
        how it left them to now."""
        checkpoints = self.checkpointer(folder)
        record = checkpoints.log.get(record_id)
        if record is None or record.folder != checkpoints.folder:
            raise KeyError(f"no checkpoint #{record_id} in {folder}")
        if compare:
            return await checkpoints.compare_with_now(record)
        return await checkpoints.diff(record)

    async def _tidy(self, folder: str) -> Checkpointer:
        """The folder's checkpoints; the first time this host's life (and every TIDY_EVERY
        uses after) with what a killed host left running completed and what is too old
        dropped, as a window does at start: a host that lives for weeks would otherwise
        keep every checkpoint."""
        checkpoints = self.checkpointer(folder)
        since = self._since_tidy.get(folder)
        if since is not None and since < TIDY_EVERY:
            self._since_tidy[folder] = since + 1
            return checkpoints
        self._since_tidy[folder] = 1
        try:
            if checkpoints.log.running(checkpoints.folder):
                await checkpoints.recover()
            dropped = await checkpoints.prune()
        except (GitError, OSError) as exc:  # old checkpoints kept; the call still runs
            log.warning("tidying the checkpoints of %s: %s", folder, exc)
        else:
            if dropped:
                log.info("dropped %d old checkpoint(s) of %s", dropped, folder)
        return checkpoints

    @contextlib.asynccontextmanager
    async def guard(
        self, folder: str, name: str, checkpoint: dict[str, Any] | None
    ) -> AsyncIterator[None]:
        """Around a change to `folder` here: with `checkpoint` (`{call, summary, source}`),
        a checkpoint of it before and after, under the view's call id (a call's, or an ACP
        agent's write: `fs/write`); without, nothing."""
        if not checkpoint:
            yield
            return
        call = str(checkpoint.get("call") or "")
        summary = str(checkpoint.get("summary") or name)
        source = str(checkpoint.get("source") or "main")
        checkpoints = await self._tidy(folder)
        async with checkpoints.guard(call, name, summary, source=source):
            yield

    async def aclose(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for servers in self._mcp.values():
            await servers.aclose()
        for diagnostics in self._diagnostics.values():
            await diagnostics.aclose()
        await asyncio.gather(*self._retired, return_exceptions=True)
        for checkpoints in self._checkpoints.values():
            checkpoints.close()


class HooksView(Protocol):
    """A view's connection, as the hooks methods see it."""

    hears_tools: bool  # it hears tools/result
    hooks_of: set[str]  # the folders whose hooks it watches: it hears hooks/changed


def hooks_methods(
    calls: ToolCalls,
) -> dict[str, Callable[[Any, dict[str, Any]], Awaitable[Any]]]:
    """The requests a view sends about a folder's own hooks here, for a host's dispatch
    table; each takes (view, params) and raises RpcError for bad params."""

    async def run(view: HooksView, params: dict[str, Any]) -> Any:
        """Run the project's hooks of a folder here for one point of the view's loop, as
        a call: never twice, its result (`outcome.hooks`) a `tools/result`."""
        call_id, folder, event = params.get("call_id"), params.get("folder"), params.get("event")
        names, payload = params.get("names") or [], params.get("payload")
        if not (isinstance(call_id, str) and call_id and isinstance(folder, str)
                and event in EVENTS and isinstance(payload, dict)
                and isinstance(names, list)):  # fmt: skip
            raise RpcError(wire.INVALID_PARAMS, "hooks/run needs call_id, folder, event, "
                           "names (a list) and payload (an object)")  # fmt: skip
        if calls.state(call_id) is None and not os.path.isdir(folder):
            raise RpcError(wire.INVALID_PARAMS, f"{folder!r} is not a folder on this host")
        view.hears_tools = True
        given = cast(HookEvent, event), [str(name) for name in names], payload
        return {"host": calls.host_id, "state": calls.run_hooks(call_id, folder, *given)}

    async def watch(view: HooksView, params: dict[str, Any]) -> Any:
        """Which hooks a folder here has (events and matchers): the view sends a point
        only when one matches; each change is told to it as `hooks/changed`."""
        folder = params.get("folder")
        if not isinstance(folder, str) or not os.path.isdir(folder):
            raise RpcError(wire.INVALID_PARAMS, f"{folder!r} is not a folder on this host")
        calls.check_hooks()  # a change seen now is told to every view watching
        view.hooks_of.add(folder)
        return {"host": calls.host_id, "summary": calls.hooks.watch(folder).to_json()}

    return {"hooks/run": run, "hooks/watch": watch}


async def _outcome(
    registry: ToolRegistry, servers: HostedMcp | None, name: str, arguments: dict[str, Any]
) -> ToolOutcome:
    """A call's outcome; an MCP server's tool waits until its servers started, and one
    whose server is not running is answered as the loop answers it on the view's machine."""
    if servers is not None:
        await servers.ready()
        if name == MCP_SERVERS:
            return ToolOutcome(json.dumps(servers.describe()))
        if gone := servers.gone(name):
            return ToolOutcome.error(gone)
    elif name == MCP_SERVERS:
        return ToolOutcome("[]")
    return await registry.run(name, arguments)


async def _diagnostics_tool(
    diagnostics: ProjectDiagnostics | None, arguments: dict[str, Any]
) -> ToolOutcome:
    if diagnostics is None:
        return ToolOutcome("No language servers run there for this folder.")
    return await diagnostics.tool(arguments)


async def _after(
    diagnostics: ProjectDiagnostics,
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    outcome: ToolOutcome,
) -> dict[str, Any] | None:
    """After an edit or write: the file's new errors and warnings, as the view's loop adds
    them to the result and the call's card (`{context, notes}`), or None."""
    if name not in EDITING_TOOLS:
        return None
    call = ToolCall(call_id, name, json.dumps(arguments))
    try:
        after = await diagnostics.after_call(call, arguments, outcome.status, outcome.content)
    except Exception:  # a language server's fault never costs the call its result
        log.exception("diagnostics after %s failed", name)
        return None
    if not after.context:
        return None
    return {"context": after.context, "notes": list(after.notes)}


def _seq_of(result: Result) -> int:
    return int(result["seq"])


def _load_settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        log.warning("settings: %s; using defaults", exc)
        return Settings()


def _no_plan(title: str, markdown: str) -> None:
    return None
