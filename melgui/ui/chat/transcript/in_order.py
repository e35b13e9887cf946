"""Changes to a transcript wait their turn while a finished message is still drawn in.

A streamed message that ends with much left to render (one huge code block) is drawn
in slices after `finish_assistant` returns, from HTML made on the render thread; what
the caller does next (a tool card, a notice, the next message) must land after it.
Methods marked `@in_order` run at once, or, while the owner is `holding()`, are queued
and run in order by `run_waiting()` once the message is drawn.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
Call = tuple[str, tuple[Any, ...], dict[str, Any]]


class Ordered(Protocol):
    waiting: deque[Call]

    def holding(self) -> bool:
        """A finished message is still being drawn in: changes wait."""
        ...


T = TypeVar("T", bound=Ordered)


def in_order(method: Callable[Concatenate[T, P], None]) -> Callable[Concatenate[T, P], None]:
    @functools.wraps(method)
    def run(self: T, *args: P.args, **kwargs: P.kwargs) -> None:
        if self.holding():  # (queued calls exist only while it holds)
            self.waiting.append((method.__name__, args, kwargs))
            return
        method(self, *args, **kwargs)

    run.unordered = method  # type: ignore[attr-defined]
    return run


def run_waiting(owner: Ordered) -> None:
    """Run the queued calls in order until one of them starts holding again."""
    while owner.waiting and not owner.holding():
        name, args, kwargs = owner.waiting.popleft()
        getattr(type(owner), name).unordered(owner, *args, **kwargs)
