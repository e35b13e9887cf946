"""The scripted relay in a process of its own, for benchmarks.

A real server is another process. The test suite's ScriptedRelay serves from a thread of
the process that uses it, so in a benchmark its Python competes with the window's for
the GIL and shows up as the window's stall. Here it runs in a child process: the legs
are pickled to a file, the child serves them and prints its URL, and ends when the
parent closes its stdin.

    with RelayProcess([text("a"), text("b"), done()]) as relay:
        RelayTransport(relay.url, "key")

    python bench/relay_process.py LEGS.pickle    # the child's side
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, Self

ROOT = Path(__file__).resolve().parents[1]


class RelayProcess:
    """A ScriptedRelay playing `legs` (each a list of steps) in a child process."""

    def __init__(self, *legs: list[Any]) -> None:
        self.legs = legs
        self.url = ""
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None
        self._folder = tempfile.TemporaryDirectory(prefix="melgui-relay-")

    def __enter__(self) -> Self:
        path = Path(self._folder.name) / "legs.pickle"
        path.write_bytes(pickle.dumps(self.legs))
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().split()
        if len(line) != 2:
            self.__exit__(None, None, None)
            raise RuntimeError("the relay process did not start")
        self.url, self.base_url = line
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._folder.cleanup()


def _serve(path: str) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.fakes import ScriptedRelay

    legs = pickle.loads(Path(path).read_bytes())
    with ScriptedRelay() as relay:
        relay.script(*legs)
        print(relay.url, relay.base_url, flush=True)
        sys.stdin.read()  # until the parent closes it


if __name__ == "__main__":
    _serve(sys.argv[1])
