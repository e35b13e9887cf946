"""One redactor for every wire log: known keys and key-like text become one marker."""

from __future__ import annotations

from melgui.core.config.redaction import (
    _SECRET_PATTERNS,
    REDACTED,
    _escaped_forms,
    _holds_a_word,
    hide_secrets,
    redact,
)


def test_keys_and_bearer_tokens_are_redacted() -> None:
    text = 'Authorization: Bearer abc.def-123\n{"api_key": "s3cr3t", "x": "sk-ABCDEFGH12345"}'
    assert redact(text, ("s3cr3t",)) == (
        f'Authorization: Bearer {REDACTED}\n{{"api_key": "{REDACTED}", "x": "{REDACTED}"}}'
    )


def test_a_known_key_is_hidden_wherever_it_stands() -> None:
    assert redact("POST /v1?key=the-key-123 the-key-123", ("the-key-123", "")) == (
        f"POST /v1?key={REDACTED} {REDACTED}"
    )


def test_text_without_secrets_is_unchanged_and_redacting_twice_changes_nothing() -> None:
    plain = '{"role": "user", "content": "tokens are counted"}'
    assert redact(plain) == plain
    once = redact('x-api-key: abc "token": "t0k"')
    assert once == f'x-api-key: {REDACTED} "token": "{REDACTED}"'
    assert redact(once) == once


def test_each_kind_of_key_is_found_alone_and_in_capitals() -> None:
    assert redact("AUTHORIZATION: BEARER abc") == f"AUTHORIZATION: BEARER {REDACTED}"
    assert redact("X-API-KEY=abc") == f"X-API-KEY={REDACTED}"
    assert redact('"Token": "abc"') == f'"Token": "{REDACTED}"'
    assert redact("a sk-ABCDEFGH12345 b") == f"a {REDACTED} b"


def test_the_quick_check_knows_every_word_a_pattern_needs() -> None:
    for words, _pattern in _SECRET_PATTERNS:
        for word in words:
            assert _holds_a_word(f"x{word}x"), word
    assert not _holds_a_word('{"content": "tok1 "}')


def test_a_key_escaped_among_other_escapes_is_hidden_in_each_form() -> None:
    key = "sk/wire-Key-123"
    for form in (
        "sk\\u002fwire-Key-123",  # JSON-escaped
        "sk\\\\U002Fwire-Key-123",  # twice, in capitals
        "sk%2fwire%2DKey-123",  # URL-encoded
        "sk\\/wire-Key-123",  # JSON's escaped slash, the only escape in the text
    ):
        around = '50% of "caf\\u00e9" at %20:'
        assert hide_secrets(f"{around} {form} and {key}", (key,)) == (
            f"{around} {REDACTED} and {REDACTED}"
        )
    assert hide_secrets("a sk\\/wire-Key-123 b", (key,)) == f"a {REDACTED} b"


def test_escapes_of_other_characters_cost_no_search_for_the_escaped_key() -> None:
    """A long answer with a percent sign or an accent escaped holds no escape of the
    key's characters: the slow search for its escaped forms (a pattern without a fixed
    start, 17 ms in a wire chunk of 280 kB) is not run."""
    _escaped_forms.cache_clear()
    text = 'data: {"text": "50% caf\\u00e9 \\\\u00e8 %20 a\\/b"}\n' * 100
    assert hide_secrets(text, ("sk-wire-Key-123",)) == text
    assert _escaped_forms.cache_info().currsize == 0
