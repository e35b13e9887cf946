"""What a one-turn process (`melgui exec`) leaves out of its start and its end (the
melgui host leaves out the same unused modules: melgui/host/main.py).

- Modules its libraries import but it never uses: httpx's command line (rich, click,
  pygments), httpcore's trio support, and, off macOS, keyring's macOS backend, which
  asks ctypes for macOS libraries and so runs `ldconfig` and `gcc` on Linux. Each is
  marked absent, which the importing library already handles as "not installed".
- A system call per streamed token: under PYTHONUNBUFFERED (common in containers) each
  write to stdout was one, a tenth of a 20,000-token turn's CPU. The answer's printer
  flushes what arrived together once the loop has handled it, so it shows as promptly.
- The garbage collector's passes over what lives until the process ends: the start's
  objects (modules, classes, compiled patterns) are made permanent once imported, and
  again at the end, so the interpreter's shutdown does not walk them all several times.
- The interpreter's teardown (every module and object freed one by one, 17 ms of CPU):
  once the run is over the process ends as the teardown would have ended it (threads
  joined, exit functions run, stdout and stderr flushed), then without freeing.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

UNUSED = ("httpx._main", "trio")
UNUSED_OFF_MACOS = ("keyring.backends.macOS.api",)


def skip_unused_imports() -> None:
    for name in (*UNUSED, *(UNUSED_OFF_MACOS if sys.platform != "darwin" else ())):
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


@contextmanager
def imported_once() -> Iterator[None]:
    """Import inside: no collection runs while modules load (they make no garbage), and
    what they made is left out of every later collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def before_exit() -> None:
    """The run is over and closed: what is left is freed by the exit, not collected."""
    gc.freeze()


def buffer_stdout() -> None:
    """stdout written through a buffer even under PYTHONUNBUFFERED (see above)."""
    if isinstance(sys.stdout, io.TextIOWrapper) and sys.stdout.write_through:
        sys.stdout.reconfigure(write_through=False)


def end_process(code: int) -> int:
    """End the process with `code` after what the interpreter's exit does before its
    teardown, in its order. Returns `code` instead when any of it fails: the ordinary
    exit then does the rest and says what went wrong, as it would have."""
    try:
        getattr(threading, "_shutdown")()  # noqa: B009  # the interpreter's own first step
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:
        return code
    os._exit(code)
