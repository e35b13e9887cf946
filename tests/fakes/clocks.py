"""Clocks for tests: time that moves only when told, or by a fixed step per reading."""

from __future__ import annotations


class FakeClock:
    """Reads `now`, then moves it on by `step`; call it for wall time (a Store's clock) or
    use `monotonic()` in place of the `time` module (the agent loop's durations)."""

    def __init__(self, start: float = 100.0, step: float = 0.0) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now

    def monotonic(self) -> float:
        return self()

    def advance(self, seconds: float) -> None:
        self.now += seconds


def step_clock() -> FakeClock:
    """A wall clock in 2023 that moves one second each time it is read."""
    return FakeClock(1_700_000_001.0, step=1.0)
