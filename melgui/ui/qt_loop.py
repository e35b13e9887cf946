"""The asyncio loop that runs inside Qt's: qasync's, plus the async-generator hooks.

qasync's `run_forever` does not install `sys.set_asyncgen_hooks` as asyncio's does, so
an async generator left unfinished (an HTTP stream ended early) is finalized by the
garbage collector outside the loop ("async generator ignored GeneratorExit") instead
of being closed on the loop. This subclass installs asyncio's own hooks while running.
"""

from __future__ import annotations

import sys
from typing import Any

import qasync


class QtEventLoop(qasync.QEventLoop):
    def run_forever(self) -> Any:
        previous = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*previous)

    def close(self) -> None:
        if not self.is_closed() and not self.is_running():
            self.run_until_complete(self.shutdown_asyncgens())
        super().close()
