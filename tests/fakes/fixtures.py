"""Pytest fixtures: a started scripted server per test, checked on teardown.

Registered from tests/conftest.py (`pytest_plugins = ["tests.fakes.fixtures"]`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.scripted_server import ScriptedOpenAI, ScriptedRelay


@pytest.fixture
def scripted_relay() -> Iterator[ScriptedRelay]:
    """A Mel relay with an empty script: call `.script(...)` / `.on(...)`, use `.base_url`."""
    server = ScriptedRelay()
    with server:
        yield server
    server.check()


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """An OpenAI-compatible server with an empty script; `.base_url` ends in /v1."""
    server = ScriptedOpenAI()
    with server:
        yield server
    server.check()
