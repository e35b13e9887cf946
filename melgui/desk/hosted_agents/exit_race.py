"""A request to the agent raced against its end: the answer, or AgentEnded saying how the
agent ended (its exit code and stderr tail, a malformed line, silence past a timeout)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from acp import RequestError

from melgui.core.runtime.deadline import within
from melgui.desk.hosted_agents.process import AgentProcess

T = TypeVar("T")


class AgentEnded(Exception):
    """The agent cannot answer any more; the text says why."""


async def answer_or_exit(
    process: AgentProcess, request: Awaitable[T], what: str, timeout: float | None
) -> T:
    """`request`'s answer, unless the agent exits (or `timeout` passes) first; a
    RequestError (the agent's refusal) passes through."""
    work: asyncio.Future[Any] = asyncio.ensure_future(request)
    exit_watch: asyncio.Future[Any] = asyncio.ensure_future(process.wait())
    malformed: asyncio.Future[Any] = process.malformed
    try:
        done, _ = await asyncio.wait(
            {work, exit_watch, malformed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    except asyncio.CancelledError:
        work.cancel()
        raise
    finally:
        exit_watch.cancel()
    if work in done:
        try:
            return work.result()
        except ConnectionError:
            pass  # the agent closed its output: it is ending; say how below
        except RequestError:
            raise
        except Exception as exc:  # a reply the SDK could not read
            raise AgentEnded(f"{what}: the agent sent an unusable reply ({exc})") from None
    work.cancel()
    if malformed in done:
        tail = await process.stderr_tail(0.2)
        raise AgentEnded(f"{what}: {malformed.result()}" + (f"\n{tail}" if tail else ""))
    if not done:
        raise AgentEnded(f"{what}: the agent did not answer within {timeout:.0f} s")
    with contextlib.suppress(TimeoutError):
        await within(process.wait(), 2)
    code = process.returncode
    tail = await process.stderr_tail()
    ended = f"the agent exited (code {code})" if code is not None else "the agent closed its output"
    raise AgentEnded(f"{what}: {ended}" + (f"; its last words:\n{tail}" if tail else ""))
