"""The one secret redactor: what a wire log or an export may show of a request.

Both transports pass their wire entries through it (the API key they hold), and so does
the window's wire recorder (the keys it knows); the patterns also catch what looks like
a bearer token or a key that melgui was never told about.
"""

from __future__ import annotations

import re

REDACTED = "«redacted»"

# Each pattern with the words (lower case) one of which a text must hold for it to match:
# most wire entries hold none, and a substring test costs far less than the regex.
_SECRET_PATTERNS = (
    (("bearer",), re.compile(r"(?i)(authorization\s*[:=]\s*\"?bearer\s+)[^\s\"',}]+")),
    (
        ("key", "token"),
        re.compile(r"(?i)(\"?(?:api[_-]?key|x-api-key|token)\"?\s*[:=]\s*\"?)[^\s\"',}]+"),
    ),
    (("sk-",), re.compile(r"()\bsk-[A-Za-z0-9_\-]{8,}")),
)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with known keys and anything that looks like a bearer token or key hidden."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    lowered = text.lower()
    for words, pattern in _SECRET_PATTERNS:
        if any(word in lowered for word in words):
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text
