"""The one secret redactor: what a wire log or an export may show of a request.

Both transports pass their wire entries through it (the API key they hold), and so does
the window's wire recorder (the keys it knows); the patterns also catch what looks like
a bearer token or a key that melgui was never told about. A known key is also found in
the forms a server may echo it in: JSON-escaped (`\\u002d` for `-`) and URL-encoded
(`%2D`), any of its characters written either way.
"""

from __future__ import annotations

import functools
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


def hide_secrets(text: str, secrets: tuple[str, ...], mask: str = REDACTED) -> str:
    """`text` with the known keys made `mask`, plain, JSON-escaped or URL-encoded."""
    for secret in secrets:
        if not secret:
            continue
        if secret in text:
            text = text.replace(secret, mask)
        if "\\u" in text or "%" in text:  # an escaped form needs one of these
            text = _escaped_forms(secret).sub(mask.replace("\\", "\\\\"), text)
    return text


@functools.lru_cache(maxsize=8)
def _escaped_forms(secret: str) -> re.Pattern[str]:
    def one(char: str) -> str:
        code = ord(char)
        forms = [re.escape(char), f"(?i:\\\\u{code:04x})"]
        if code < 0x80:
            forms.append(f"(?i:%{code:02x})")
        if char == "/":
            forms.append(r"\\/")
        return "(?:" + "|".join(forms) + ")"

    return re.compile("".join(one(char) for char in secret))


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with known keys and anything that looks like a bearer token or key hidden."""
    text = hide_secrets(text, secrets)
    lowered = text.lower()
    for words, pattern in _SECRET_PATTERNS:
        if any(word in lowered for word in words):
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text
