"""One redactor for every wire log: known keys and key-like text become one marker."""

from __future__ import annotations

from melgui.core.config.redaction import REDACTED, redact


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
