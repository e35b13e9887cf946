"""The one secret redactor: what a wire log or an export may show of a request.

Both transports pass their wire entries through it (the API key they hold), and so does
the window's wire recorder (the keys it knows); the patterns also catch what looks like
a bearer token or a key that melgui was never told about. A known key is also found in
the forms a server may echo it in: JSON-escaped (`\\u002d` for `-`) and URL-encoded
(`%2D`), any of its characters written either way (and JSON-escaped twice, as JSON
text kept inside JSON is).

melgui's own keys, once a transport holds one (`remember_secret`), are hidden from
everything the history database stores (`known_secrets`), and `SecretStream` hides them
in streamed text even when a key arrives split across two pieces.
"""

from __future__ import annotations

import functools
import re

REDACTED = "«redacted»"
MIN_SECRET = 8  # characters of a key before it is hidden in text (shorter: ordinary words)

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


def _holds_a_word(lowered: str) -> bool:
    """Whether any pattern's word is in `lowered` (written out: a loop over the words
    costs more than the tests, once per streamed event)."""
    return "bearer" in lowered or "key" in lowered or "token" in lowered or "sk-" in lowered


def hide_secrets(text: str, secrets: tuple[str, ...], mask: str = REDACTED) -> str:
    """`text` with the known keys made `mask`, plain, JSON-escaped or URL-encoded.

    Once the plain key is replaced, what is left of it can only be a form with one of
    its characters escaped: the slow search for the forms (a regular expression with no
    fixed start, some 30 ns a character) runs only where such an escape is. A text with
    a percent sign or an escaped accent (most long answers and wire logs) holds escapes
    of other characters, found in one fast scan."""
    for secret in secrets:
        if not secret:
            continue
        if secret in text:
            text = text.replace(secret, mask)
        if ("\\" in text or "%" in text) and any(p.search(text) for p in _escapes_of(secret)):
            text = _escaped_forms(secret).sub(mask.replace("\\", "\\\\"), text)
    return text


@functools.lru_cache(maxsize=8)
def _escapes_of(secret: str) -> tuple[re.Pattern[str], ...]:
    """Searches for an escape of one of `secret`'s characters in the forms
    `_escaped_forms` knows (`\\u` or `\\U` and four hex digits after the last backslash
    of a run, `%` and two for a character below 0x80, `\\/` for `/`): every escaped form
    of the key holds one. Each begins with fixed characters and spells the hex digits'
    cases out, so the regular expression engine skips to where they stand."""

    def either_case(digits: str) -> str:
        return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)

    codes = sorted({ord(char) for char in secret})
    wide = "|".join(either_case(f"{code:04x}") for code in codes)
    searches = [f"\\\\u(?:{wide})", f"\\\\U(?:{wide})"]
    if narrow := [either_case(f"{code:02x}") for code in codes if code < 0x80]:
        searches.append(f"%(?:{'|'.join(narrow)})")
    if "/" in secret:
        searches.append(r"\\/")
    return tuple(re.compile(search) for search in searches)


@functools.lru_cache(maxsize=8)
def _escaped_forms(secret: str) -> re.Pattern[str]:
    def one(char: str) -> str:
        code = ord(char)
        # One backslash, or more: JSON text kept inside JSON doubles it (a call's
        # arguments in a stored message).
        forms = [re.escape(char), f"(?i:\\\\+u{code:04x})"]
        if code < 0x80:
            forms.append(f"(?i:%{code:02x})")
        if char == "/":
            forms.append(r"\\+/")
        return "(?:" + "|".join(forms) + ")"

    return re.compile("".join(one(char) for char in secret))


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with known keys and anything that looks like a bearer token or key hidden."""
    text = hide_secrets(text, secrets)
    lowered = text.lower()
    if not _holds_a_word(lowered):
        return text
    for words, pattern in _SECRET_PATTERNS:
        if any(word in lowered for word in words):
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


# -- melgui's own keys, for the history ----------------------------------------------

_known: tuple[str, ...] = ()


def remember_secret(secret: str | None) -> None:
    """Note a key melgui sends, so nothing the history stores shows it."""
    global _known
    if secret and len(secret) >= MIN_SECRET and secret not in _known:
        _known = (*_known, secret)


def known_secrets() -> tuple[str, ...]:
    return _known


def forget_secrets() -> None:
    global _known
    _known = ()


# -- streamed text ---------------------------------------------------------------------


def _forms(char: str) -> tuple[str, ...]:
    """`char` as it may be written: itself, JSON-escaped, URL-encoded."""
    code = ord(char)
    return (
        char,
        f"\\u{code:04x}",
        *((f"%{code:02x}",) if code < 0x80 else ()),
        *(("\\/",) if char == "/" else ()),
    )


def _could_begin(text: str, at: int, secret: str) -> bool:
    """Whether `text[at:]` is how `secret` begins, in any mix of its characters' forms,
    the last one possibly cut short."""
    stack = [(at, 0)]
    while stack:
        here, index = stack.pop()
        if here == len(text):
            return True
        if index == len(secret):
            continue
        rest = text[here : here + 6]
        for number, form in enumerate(_forms(secret[index])):
            seen = rest if number == 0 else rest.lower()  # escapes in either case
            if seen.startswith(form):
                stack.append((here + len(form), index + 1))
            elif len(rest) < len(form) and form.startswith(seen):
                return True  # cut in the middle of a form
    return False


def _held_from(text: str, secrets: tuple[str, ...]) -> int:
    """Where the end of `text` that could be the start of a key begins (len: none)."""
    start = len(text)
    for secret in secrets:
        reach = 6 * len(secret)  # the longest form of a character is six long
        tail = text[-reach:]
        if "\\" not in tail and "%" not in tail:
            reach = len(secret) - 1  # the plain form only
        begins = (secret[0], "\\", "%")
        first = max(0, len(text) - reach)
        window = text[first:start]
        if secret[0] not in window and "\\" not in window and "%" not in window:
            continue  # no character there can begin the key (most streamed pieces)
        for at in range(first, start):
            if text[at] in begins and _could_begin(text, at, secret):
                start = at
                break
    return start


class SecretStream:
    """Streamed text with the known keys hidden, even when a key arrives split across
    pieces: the end of what came that could be the start of one is held back until
    the next piece (or `flush`, at the stream's end) shows whether it is."""

    def __init__(self, secrets: tuple[str, ...], mask: str = REDACTED) -> None:
        self.secrets = tuple(secret for secret in secrets if secret)
        self.mask = mask
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of `piece` (and of what was held) can be shown now."""
        if not self.secrets:
            return piece
        text = hide_secrets(self._held + piece, self.secrets, self.mask)
        keep = _held_from(text, self.secrets)
        self._held = text[keep:]
        return text[:keep]

    def flush(self) -> str:
        """The stream ended: what was held back (no key, or it would be hidden)."""
        held, self._held = self._held, ""
        return held
