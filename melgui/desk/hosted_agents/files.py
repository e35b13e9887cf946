"""`fs/read_text_file` and `fs/write_text_file` through melgui's workspace confinement.

A path outside the project folder (or into .git/, or melgui's own configuration) is
refused with the workspace's own message, sent back to the agent as a request error.
Writes run inside `around_write` (the desk's checkpoint guard) when one is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import stat
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from acp import RequestError

from melgui.core.config.settings import config_dir
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import ToolError
from melgui.tools.workspace import Workspace, write_bytes_confined

WriteGuard = Callable[[ToolCall, str], AbstractAsyncContextManager[object]]
# The host's guard of a folder here: (folder, tool, {call, summary, source}).
CheckpointHere = Callable[[str, str, dict[str, Any]], AbstractAsyncContextManager[None]]
MAX_READ_BYTES = 8 * 1024 * 1024


class AgentFiles:
    """The project's files as an ACP agent may read and write them."""

    def __init__(self, workspace: Workspace, source: str, around_write: WriteGuard | None = None):
        self.workspace = workspace
        self.source = source
        self.around_write = around_write
        self._ids = itertools.count(1)

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text, from 1-based `line`, at most `limit` lines."""
        try:
            resolved = self.workspace.existing_file(path)
        except ToolError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        text = _read_regular(path, resolved).decode("utf-8", errors="replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    async def aread(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """`read` as the client awaits it (a remote folder's agent reads there)."""
        return self.read(path, line, limit)

    async def write(self, path: str, content: str) -> None:
        try:
            resolved = self.workspace.writable_file(path)
        except ToolError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        call = ToolCall(
            f"acp-write-{next(self._ids)}",
            "write_file",
            json.dumps({"path": self.workspace.display(resolved), "content": content}),
        )
        guard = self.around_write(call, self.source) if self.around_write else None
        async with guard if guard is not None else contextlib.nullcontext():
            try:
                write_bytes_confined(self.workspace, resolved, content.encode("utf-8"))
            except (ToolError, OSError) as exc:
                raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None


class FileRefused(Exception):
    """An agent's file request refused; the message is the workspace's reason."""


async def read_for_view(folder: str, params: dict[str, Any]) -> dict[str, Any]:
    """A host's `fs/read`: a remote folder's agent's fs/read_text_file, in `folder` here,
    confined as a local agent's is (FileRefused says why not)."""
    files = AgentFiles(Workspace(folder, config_dir=config_dir()), "agent")
    line, limit = params.get("line"), params.get("limit")
    try:
        text = await asyncio.to_thread(
            files.read,
            str(params["path"]),
            int(line) if line is not None else None,
            int(limit) if limit is not None else None,
        )
    except RequestError as exc:
        raise FileRefused(_reason(exc)) from None
    return {"content": text}


async def write_for_view(
    folder: str, params: dict[str, Any], checkpointed: CheckpointHere | None = None
) -> dict[str, Any]:
    """A host's `fs/write`: the agent's fs/write_text_file in `folder` here, confined;
    with the params' `checkpoint` (`{call, summary, source}`), inside the host's
    checkpoint guard of the folder (`checkpointed`), as a local agent's write is inside
    its desk's."""
    mark = params.get("checkpoint")
    around: WriteGuard | None = None
    if checkpointed is not None and isinstance(mark, dict):
        around = lambda call, source: checkpointed(folder, call.name, mark)  # noqa: E731
    files = AgentFiles(Workspace(folder, config_dir=config_dir()), "agent", around)
    try:
        await files.write(str(params["path"]), str(params["content"]))
    except RequestError as exc:
        raise FileRefused(_reason(exc)) from None
    return {}


def _reason(exc: RequestError) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("reason") or exc)


def _read_regular(path: str, resolved: Path) -> bytes:
    """The file's bytes, if it is still a regular file of at most MAX_READ_BYTES.

    Checked again on the open descriptor, non-blocking: a file swapped for a FIFO or a
    link after the workspace's check is refused, never waited on.
    """
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RequestError.invalid_params({"path": path, "reason": "not a regular file"})
        data = file.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise RequestError.invalid_params({"path": path, "reason": "file is too large"})
    return data
