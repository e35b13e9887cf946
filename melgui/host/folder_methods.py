"""The methods that serve a view's folder on this machine (a remote folder's, a worker's
on a configured host), whose loop runs in the view: its single tool calls and hook
points (each never run twice, its result a `tools/result` to every view that sends
calls), its checkpoints, its uncommitted changes, its workers' own git worktrees
(WorktreeMethods), its MCP servers and an ACP agent's file reads and writes.
HostServer takes them into its method table.

    folder = FolderMethods(tool_calls, server.connections)
    handlers = {**folder.methods(), ...}
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from melgui.core.config.settings import Settings
from melgui.core.hooks.there import HooksSummary
from melgui.core.protocol.views.losses import Loss
from melgui.core.store.checkpoints.restore import CHOICES
from melgui.core.store.checkpoints.shadow import GitError
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.parts_there import apply_shown, discard_shown, landed_shown
from melgui.core.worktrees.changes.reading import read_changes, uncommitted_in
from melgui.core.worktrees.changes.sent import changes_to_json
from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import WorktreeError, repository_of
from melgui.core.worktrees.git import GitError as WorktreeGitError
from melgui.core.worktrees.merge import discard
from melgui.core.worktrees.merge_whole import merge_whole
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.naming import BRANCH_PREFIX
from melgui.core.worktrees.recovery import Found
from melgui.core.worktrees.risk import work_at_risk
from melgui.core.worktrees.workers import WorkerWorktrees, folder_in
from melgui.desk.mcp.for_loops_elsewhere import project_file
from melgui.desk.review import diff_of
from melgui.desk.worktree_losses import retire_worktree, worktree_losses
from melgui.host import wire
from melgui.host.records import worktree_from_json, worktree_to_json
from melgui.host.tool_calls import Result, ToolCalls, hooks_methods
from melgui.host.wire import RpcError

if TYPE_CHECKING:
    from melgui.host.server import ViewConnection

Method = Callable[["ViewConnection", dict[str, Any]], Awaitable[Any]]


class FolderMethods:
    def __init__(self, tool_calls: ToolCalls, connections: set[ViewConnection]) -> None:
        self.tool_calls = tool_calls
        self.connections = connections  # the server's own set: the views attached now
        tool_calls.on_result = self._tool_result
        tool_calls.on_mcp = self._mcp_changed
        tool_calls.on_hooks = self._hooks_changed

    def methods(self) -> dict[str, Method]:
        return {
            "tools/run": self._tool_run,
            "tools/attach": self._tool_attach,
            "tools/ack": self._tool_ack,
            "tools/cancel": self._tool_cancel,
            **hooks_methods(self.tool_calls),
            "checkpoint/restore": self._checkpoint_restore,
            "checkpoint/calls": self._checkpoint_calls,
            "checkpoint/diff": self._checkpoint_diff,
            "changes/uncommitted": self._uncommitted,
            "changes/diff": self._diff,
            "mcp/project": self._mcp_project,
            "mcp/restart": self._mcp_restart,
            "fs/read": self._fs_read,
            "fs/write": self._fs_write,
            **WorktreeMethods(self.tool_calls.settings, _folder_here).methods(),
        }

    async def _tool_run(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Start a call unless its id was seen: a call is never run twice."""
        call_id, folder, name = params["call_id"], params["folder"], params["name"]
        arguments = params.get("arguments") or {}
        if not all(isinstance(v, str) and v for v in (call_id, folder, name)):
            raise RpcError(wire.INVALID_PARAMS, "tools/run needs call_id, folder and name")
        if not isinstance(arguments, dict):
            raise RpcError(wire.INVALID_PARAMS, "arguments must be an object")
        if self.tool_calls.state(call_id) is None and not os.path.isdir(folder):
            raise RpcError(wire.INVALID_PARAMS, f"{folder!r} is not a folder on this host")
        options = params.get("options") or {}
        if not isinstance(options, dict):
            raise RpcError(wire.INVALID_PARAMS, "options must be an object")
        checkpoint = params.get("checkpoint")
        if checkpoint is not None and not isinstance(checkpoint, dict):
            raise RpcError(wire.INVALID_PARAMS, "checkpoint must be an object")
        view.hears_tools = True
        state = self.tool_calls.run(call_id, folder, name, arguments, options, checkpoint)
        return {"host": self.tool_calls.host_id, "state": state}

    async def _tool_attach(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The results after the view's last number, and the calls still running. No
        await to the end: no result is both in the answer and sent after it."""
        since = int(params.get("since") or 0)
        view.hears_tools = True
        return {
            "host": self.tool_calls.host_id,
            "results": self.tool_calls.since(since),
            "running": self.tool_calls.running(),
        }

    async def _tool_ack(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        through = params.get("through")
        calls = [str(c) for c in params.get("calls") or []]
        forgotten = self.tool_calls.ack(through=int(through) if through is not None else None,
                                        calls=calls)  # fmt: skip
        return {"forgotten": forgotten}

    async def _tool_cancel(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        return {"cancelled": self.tool_calls.cancel(str(params["call_id"]))}

    async def _checkpoint_restore(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Rewind calls' changes to a folder here (or undo given checkpoints: `records`),
        from the checkpoints taken here."""
        folder, calls, records = _folder_here(params), params.get("calls"), params.get("records")
        choices = params.get("choices") or {}
        if records is not None:
            if not isinstance(records, list) or not all(isinstance(r, int) for r in records):
                raise RpcError(wire.INVALID_PARAMS, "records must be a list of checkpoint ids")
            calls = []
        elif not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
            raise RpcError(wire.INVALID_PARAMS, "calls must be a list of call ids")
        if not isinstance(choices, dict) or not set(choices.values()) <= set(CHOICES):
            raise RpcError(wire.INVALID_PARAMS, f"choices maps a path to one of {CHOICES}")
        try:
            plan_only = bool(params.get("plan_only"))
            return await self.tool_calls.restore(
                folder, calls, choices, plan_only=plan_only, records=records
            )
        except (GitError, OSError, KeyError, ValueError) as exc:
            raise RpcError(wire.INTERNAL_ERROR, f"could not restore in {folder}: {exc}") from exc

    async def _checkpoint_calls(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The checkpoints of calls (the model's ids) in a folder here, for call cards."""
        folder, calls = _folder_here(params), params.get("calls")
        if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
            raise RpcError(wire.INVALID_PARAMS, "calls must be a list of call ids")
        try:
            lines = bool(params.get("lines"))
            return {"records": await self.tool_calls.checkpoint_calls(folder, calls, lines)}
        except (GitError, OSError) as exc:
            raise RpcError(wire.INTERNAL_ERROR, f"no checkpoints in {folder}: {exc}") from exc

    async def _checkpoint_diff(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A checkpoint's change here as a unified diff (or, `compare`, from it to now)."""
        folder, record = _folder_here(params), params.get("record")
        if not isinstance(record, int):
            raise RpcError(wire.INVALID_PARAMS, "record must be a checkpoint id")
        try:
            compare = bool(params.get("compare"))
            return {"text": await self.tool_calls.checkpoint_diff(folder, record, compare)}
        except (GitError, OSError, KeyError) as exc:
            raise RpcError(wire.INTERNAL_ERROR, f"no diff in {folder}: {exc}") from exc

    async def _uncommitted(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A folder's uncommitted changes here by file and hunk (its Changes view), or
        why there are none to show (`problem`: not a git repository, no commit yet)."""
        folder = _folder_here(params)
        try:
            changes = await read_changes(await uncommitted_in(Path(folder)))
        except ChangesError as exc:
            return {"problem": str(exc)}
        return {"changes": changes_to_json(changes)}

    async def _diff(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A folder's diff of `target` here, as `git diff` writes it, for a review of it
        (`last N`: the last N commits; else a branch: what it adds beside the current
        one), or why there is none (`problem`: git's words)."""
        folder, target = _folder_here(params), params.get("target")
        if not isinstance(target, str) or not target.strip():
            raise RpcError(wire.INVALID_PARAMS, "changes/diff needs a target: last N or a branch")
        try:
            return {"text": await diff_of(folder, target)}
        except GitError as exc:
            return {"problem": str(exc)}

    async def _mcp_project(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A folder's own `.melgui/mcp.json` here, for the view to ask trust about."""
        return await asyncio.to_thread(project_file, _folder_here(params))

    async def _fs_read(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A file of the folder here, for a remote folder's ACP agent (hosted_agents/files.py:
        the ACP SDK loads when an agent first asks)."""
        from melgui.desk.hosted_agents.files import FileRefused, read_for_view

        try:
            return await read_for_view(_folder_here(params), params)
        except FileRefused as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None

    async def _fs_write(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        from melgui.desk.hosted_agents.files import FileRefused, write_for_view

        try:
            return await write_for_view(_folder_here(params), params, self.tool_calls.guard)
        except FileRefused as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        finally:
            self.tool_calls.check_hooks()  # an agent's write of a hooks file, before its answer

    async def _mcp_restart(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Start one MCP server of a folder's set (its `options`, as `tools/run` sends
        them) again; `{servers}` as they are once it is ready or failed."""
        folder = _folder_here(params)
        options = params.get("options") or {}
        if not isinstance(options, dict):
            raise RpcError(wire.INVALID_PARAMS, "options must be an object")
        name = str(params.get("name"))
        try:
            servers = await self.tool_calls.restart_mcp(folder, options, name)
        except KeyError:
            raise RpcError(wire.INVALID_PARAMS, f"no MCP server {name!r} runs here") from None
        return {"servers": servers}

    def _mcp_changed(self, folder: str, servers: list[dict[str, Any]]) -> None:
        """A folder's MCP server changed state (it died, it was restarted): told to every
        view that sends calls, as `mcp/changed`."""
        params = {"host": self.tool_calls.host_id, "folder": folder, "servers": servers}
        self._tell("mcp/changed", params, lambda view: view.hears_tools)

    def _hooks_changed(self, folder: str, summary: HooksSummary) -> None:
        """A watched folder's hooks changed: told to the views that watch it."""
        params = {"host": self.tool_calls.host_id, "folder": folder, "summary": summary.to_json()}
        self._tell("hooks/changed", params, lambda view: folder in view.hooks_of)

    def _tool_result(self, result: Result) -> None:
        params = {"host": self.tool_calls.host_id, "result": result}
        self._tell("tools/result", params, lambda view: view.hears_tools)

    def _tell(
        self, method: str, params: dict[str, Any], hears: Callable[[ViewConnection], bool]
    ) -> None:
        message = wire.notification(method, params)
        for connection in list(self.connections):
            if hears(connection):
                connection.send(message)


# -- a worker's own git worktree of a folder here (a configured host's worker) -------------
# Made here by the rules a local worker's follows (melgui/core/worktrees: under this
# machine's melgui data folder, branch `melgui/<pane>-<task>`, this machine's copy list and
# setup command of the folder), read for the view's Changes view, and removed when the
# worker's pane closes only as far as the person agreed (melgui/desk/worktree_losses.py).


class WorktreeMethods:
    """`worktree/create`, `worktree/changes`, `worktree/losses`, `worktree/retire`, and
    what the window's Changes view and its start do with one there: `worktree/merge`,
    `worktree/discard`, `worktree/apply`, `worktree/discard_part`, `worktree/landed`,
    `worktree/left`, `worktree/remove`; `folder` checks a view's `folder` param (a
    folder on this host) and gives it."""

    def __init__(
        self, settings: Callable[[], Settings], folder: Callable[[dict[str, Any]], str]
    ) -> None:
        self.settings = settings
        self.folder = folder

    def methods(self) -> dict[str, Method]:
        return {
            "worktree/create": self._create,
            "worktree/changes": self._changes,
            "worktree/losses": self._losses,
            "worktree/retire": self._retire,
            "worktree/merge": self._merge,
            "worktree/discard": self._discard,
            "worktree/left": self._left,
            "worktree/remove": self._remove,
            "worktree/apply": self._apply,
            "worktree/discard_part": self._discard_part,
            "worktree/landed": self._landed,
        }

    async def _create(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A new worktree of the folder for worker `pane` given `task`, filled and set up:
        `{worktree, folder (where the worker works), said}`; `{problem}` when the folder
        is not in a git repository with a commit (the worker works in the folder itself)."""
        folder = self.folder(params)
        pane, task, carry = params.get("pane"), params.get("task"), params.get("carry")
        if not isinstance(pane, int) or not isinstance(task, str):
            raise RpcError(wire.INVALID_PARAMS, "worktree/create needs pane (a number) and task")
        try:
            await asyncio.to_thread(repository_of, folder, nice=False)
        except WorktreeError as exc:
            return {"problem": str(exc)}
        worktrees = WorkerWorktrees(folder, self.settings())
        try:
            prepared = await asyncio.to_thread(
                worktrees.create, pane, task, carry=carry if isinstance(carry, bool) else None
            )
        except WorktreeError as exc:
            raise RpcError(wire.INTERNAL_ERROR, str(exc)) from None
        return {
            "worktree": worktree_to_json(prepared.worktree),
            "folder": str(prepared.folder),
            "said": prepared.describe(),
        }

    async def _changes(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The worker's changes against its base (commits, edits, new files) by file and
        hunk, as `changes/uncommitted` sends a folder's, or `{problem}`."""
        worktree = _worktree(self.folder, params)
        try:
            return {"changes": changes_to_json(await read_changes(worktree))}
        except ChangesError as exc:
            return {"problem": str(exc)}

    async def _losses(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """What removing the worktree would lose (`{losses: [{kind, where, what}]}`), in
        the words closing a local worker's pane asks with."""
        worktree = _worktree(self.folder, params)
        where = str(params.get("where") or "worker")
        losses = await asyncio.to_thread(worktree_losses, worktree, where)
        return {"losses": [{"kind": x.kind, "where": x.where, "what": x.what} for x in losses]}

    async def _retire(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Remove the worktree (its worker has stopped) if that loses nothing but what the
        person agreed to (`confirmed`: the `what` of the losses shown): `{removed}`."""
        worktree = _worktree(self.folder, params)
        confirmed = params.get("confirmed") or []
        if not isinstance(confirmed, list) or not all(isinstance(w, str) for w in confirmed):
            raise RpcError(wire.INVALID_PARAMS, "confirmed must be a list of what was shown")
        agreed = [Loss("changes", "", what) for what in confirmed]
        return {"removed": await asyncio.to_thread(retire_worktree, worktree, agreed)}

    async def _merge(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Merge the worker's branch into the folder's current branch here, its loose
        edits committed first as `commit` (none: they stop it), whole or not at all (a
        conflict changes nothing): `{merged, conflicts, message}`, or `{problem}`."""
        worktree = _worktree(self.folder, params)
        commit = params.get("commit")
        try:
            outcome = await merge_whole(worktree, commit if isinstance(commit, str) else None)
        except ChangesError as exc:
            return {"problem": str(exc)}
        return {
            "merged": outcome.merged,
            "conflicts": list(outcome.conflicts),
            "message": outcome.message,
        }

    async def _discard(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Put the worktree back at its base (its commits, edits and new files go): `{}`,
        or `{problem}`."""
        worktree = _worktree(self.folder, params)
        try:
            await discard(worktree)
        except ChangesError as exc:
            return {"problem": str(exc)}
        return {}

    async def _apply(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Apply the worker's change to `paths` (`hunks`: those hunks of the one file) to
        the folder here, if they are as the view showed them (`shown`), all or nothing and
        never under the person's uncommitted edits: `{message, paths}`, or `{problem}`
        (nothing changed, said why)."""
        worktree = _worktree(self.folder, params)
        paths, hunks, shown = _parts(params)
        try:
            applied = await apply_shown(worktree, paths, hunks, shown)
        except ChangesError as exc:
            return {"problem": str(exc)}
        return {"message": applied.describe(str(worktree.main)), "paths": list(applied.paths)}

    async def _discard_part(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Undo the worker's change to the one file of `paths` (`hunks`: those hunks) in
        its worktree, as shown: `{message}`, or `{problem}`."""
        worktree = _worktree(self.folder, params)
        paths, hunks, shown = _parts(params)
        if len(paths) != 1:
            raise RpcError(wire.INVALID_PARAMS, "worktree/discard_part takes one path")
        try:
            discarded = await discard_shown(worktree, paths[0], hunks, shown)
        except ChangesError as exc:
            return {"problem": str(exc)}
        return {"message": discarded.describe()}

    async def _landed(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Which hunks of the worker's change to `path` the folder has already: `{hunks}`."""
        worktree = _worktree(self.folder, params)
        path = params.get("path")
        if not isinstance(path, str):
            raise RpcError(wire.INVALID_PARAMS, "worktree/landed needs path")
        try:
            return {"hunks": sorted(await landed_shown(worktree, path))}
        except ChangesError as exc:
            return {"problem": str(exc)}

    async def _left(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """melgui's worktrees of the folder's repository here that none of the paths in
        `owned` is (a closed window's workers left them): `{left: [{worktree, task,
        missing, folder, holds}]}`, or `{problem}` when git cannot list them."""
        folder = self.folder(params)
        owned = params.get("owned") or []
        if not isinstance(owned, list) or not all(isinstance(p, str) for p in owned):
            raise RpcError(wire.INVALID_PARAMS, "owned must be a list of paths")
        worktrees = WorkerWorktrees(folder, self.settings())
        try:
            found = await asyncio.to_thread(worktrees.orphans, [Path(p) for p in owned])
        except (WorktreeGitError, OSError) as exc:
            return {"problem": f"Cannot list the worktrees of {folder}: {exc}"}
        holds = await asyncio.to_thread(lambda: [_holds(item) for item in found])
        left = zip(found, holds, strict=True)
        return {"left": [_left_to_json(item, folder, said) for item, said in left]}

    async def _remove(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Remove a left worktree and its branch, if it holds what the person was shown
        (`shown`, `worktree/left`'s `holds`) and nothing else: `{removed}`, or `{problem}`
        saying what it holds now."""
        worktree = _worktree(self.folder, params)
        shown = str(params.get("shown") or "")

        def remove() -> None:
            now = _holds(Found(worktree, "", not worktree.path.is_dir()))
            if now != shown:
                raise WorktreeError(
                    f"Not discarded: {worktree.branch} changed since you were asked; it now "
                    f"holds {now}. Click Discard again to see it."
                )
            remove_worktree(worktree, discard=True)

        try:
            await asyncio.to_thread(remove)
        except (WorktreeError, WorktreeGitError, OSError) as exc:
            return {"problem": str(exc)}
        return {"removed": True}


def _holds(found: Found) -> str:
    """What a worktree holds, in words (the local recovery dialog's)."""
    try:
        return work_at_risk(found.worktree).describe()
    except WorktreeGitError:
        return "work git cannot read"


def _left_to_json(found: Found, folder: str, holds: str) -> dict[str, Any]:
    try:
        works_in = str(folder_in(found.worktree, folder))
    except ValueError:
        works_in = str(found.worktree.path)
    return {
        "worktree": worktree_to_json(found.worktree),
        "task": found.task,
        "missing": found.missing,
        "folder": works_in,
        "holds": holds,
    }


def _parts(params: dict[str, Any]) -> tuple[list[str], list[int] | None, str]:
    """`paths`, `hunks` (None: whole files) and `shown` (their digest as the view read them)."""
    paths, hunks, shown = params.get("paths"), params.get("hunks"), params.get("shown")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise RpcError(wire.INVALID_PARAMS, "paths must be a list of the worktree's files")
    if hunks is not None and (
        not isinstance(hunks, list) or not all(isinstance(h, int) for h in hunks)
    ):
        raise RpcError(wire.INVALID_PARAMS, "hunks must be a list of hunk numbers")
    if not isinstance(shown, str):
        raise RpcError(wire.INVALID_PARAMS, "shown must be the digest of the files shown")
    return paths, hunks, shown


def _worktree(folder: Callable[[dict[str, Any]], str], params: dict[str, Any]) -> Worktree:
    """The params' `worktree`, one of the params' `folder`'s repository."""
    main = Path(folder(params))
    given = params.get("worktree")
    try:
        worktree = worktree_from_json(given) if isinstance(given, dict) else None
    except (KeyError, TypeError):
        worktree = None
    if worktree is None:
        raise RpcError(wire.INVALID_PARAMS, f"not a worktree: {given!r}")
    # Only a worker's own: a merge, a discard or a removal never acts on the folder itself.
    if not worktree.branch.startswith(BRANCH_PREFIX) or (
        worktree.path.resolve() == worktree.main.resolve()
    ):
        raise RpcError(wire.INVALID_PARAMS, f"{worktree.path} is not a worker's worktree")
    if main.resolve() != worktree.main.resolve() and worktree.main.resolve() not in (
        main.resolve().parents
    ):
        raise RpcError(wire.INVALID_PARAMS, f"{worktree.path} is not a worktree of {main}")
    return worktree


def _folder_here(params: dict[str, Any]) -> str:
    folder = params.get("folder")
    if not isinstance(folder, str) or not os.path.isdir(folder):
        raise RpcError(wire.INVALID_PARAMS, f"{folder!r} is not a folder on this host")
    return folder
