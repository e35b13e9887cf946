"""What a server said and heard, one click away: stderr and JSON-RPC lines, keys redacted.

Both logs are bounded (a server flooding stderr costs a fixed amount of memory), and
every line passes through the redactor: the secret values the server was started with
(resolved `env` and `headers`, plain, JSON-escaped or URL-encoded) and the values of JSON
fields named like keys.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from melgui.core.config.redaction import hide_secrets

MAX_LINES = 2000
MAX_LINE_CHARS = 4000
MASK = "•••"
_SECRET_FIELD = re.compile(
    r'("(?:[^"]*(?:token|secret|password|api[_-]?key|authorization)[^"]*)"\s*:\s*)"[^"]*"',
    re.IGNORECASE,
)


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Short values (a port, "1") would mask half the log; real keys are longer.
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        text = hide_secrets(text, tuple(self.secrets), MASK)
        return _SECRET_FIELD.sub(lambda m: f'{m.group(1)}"{MASK}"', text)


class LineLog:
    """The last MAX_LINES lines, each cut to MAX_LINE_CHARS, with a count of the dropped."""

    def __init__(self, redact: Redactor | None = None, limit: int = MAX_LINES) -> None:
        self.redact = redact or Redactor()
        self.lines: deque[str] = deque(maxlen=limit)
        self.dropped = 0

    def add(self, line: str) -> None:
        if len(self.lines) == self.lines.maxlen:
            self.dropped += 1
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" […{len(line) - MAX_LINE_CHARS:,} more]"
        self.lines.append(self.redact(line))

    def tail(self, count: int) -> list[str]:
        return list(self.lines)[-count:]

    def text(self) -> str:
        head = f"[{self.dropped:,} earlier lines dropped]\n" if self.dropped else ""
        return head + "\n".join(self.lines)
