"""A hosted ACP agent's `fs/*` and `terminal/*` requests meet the same confinement as
melgui's own tools: symlinks out of the project, FIFOs, devices and outside paths are
refused with a reason, nothing outside changes, nothing hangs, and no key leaks.

Against tests/fakes/acp_scripted_agent.py, a real agent process on the official SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30  # seconds: a refused request answers long before this; a hang fails the test
KEY = "sk-proj-HostKey0123456789abcdef"


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A project whose links and special files lead out of it or would block a reader."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret")
    project = tmp_path / "project"
    project.mkdir()
    (project / "ok.txt").write_text("inside\n")
    (project / "out_dir").symlink_to(outside)
    (project / "out_file").symlink_to(outside / "secret.txt")
    (project / "zero").symlink_to("/dev/zero")
    (project / "null").symlink_to("/dev/null")
    os.mkfifo(project / "pipe")
    return project


def outside_state(project: Path) -> dict[str, str]:
    outside = project.parent / "outside"
    return {p.name: p.read_text() for p in sorted(outside.iterdir())}


async def play(project: Path, *steps: dict[str, Any]) -> str:
    events = Events()
    host = AcpHost(scripted_agent(), str(project))
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        await asyncio.wait_for(host.prompt(json.dumps(list(steps))), LIMIT)
    finally:
        await host.aclose()
    return events.text()


async def test_reads_through_links_and_special_files_are_refused(planted: Path) -> None:
    said = await play(
        planted,
        {"read": "out_dir/secret.txt"},
        {"read": "out_file"},
        {"read": "zero"},
        {"read": "null"},
        {"read": "pipe"},
        {"read": "/dev/zero"},
        {"read": "/etc/passwd"},
        {"read": "ok.txt"},
    )
    assert said.count("refused:") == 7, said
    assert "outside secret" not in said and "root:" not in said
    assert "read:inside\n" in said  # the session went on after every refusal


async def test_writes_through_links_and_special_files_are_refused(planted: Path) -> None:
    before = outside_state(planted)
    said = await play(
        planted,
        {"write": "out_dir/new.txt", "content": "escaped"},
        {"write": "out_dir/secret.txt", "content": "escaped"},
        {"write": "out_file", "content": "escaped"},
        {"write": "pipe", "content": "blocked?"},
        {"write": "null", "content": "device"},
        {"write": str(planted.parent / "outside" / "made.txt"), "content": "escaped"},
        {"write": "fine.txt", "content": "made"},
    )
    assert said.count("refused:") == 6, said
    assert outside_state(planted) == before
    assert (planted / "fine.txt").read_text() == "made"


async def test_a_terminal_cwd_out_of_the_project_is_refused(planted: Path) -> None:
    marker = planted.parent / "outside" / "marker"
    said = await play(
        planted,
        {"run": ["touch", str(marker)], "cwd": "out_dir"},
        {"run": ["touch", "marker"], "cwd": str(planted.parent / "outside")},
        {"run": ["touch", "marker"], "cwd": "pipe"},
    )
    assert said.count("refused:") == 3, said
    assert not marker.exists()


async def test_a_terminal_gets_no_api_key(planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MELIAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    said = await play(planted, {"run": ["sh", "-c", "env"]})
    assert "exit 0:" in said
    assert KEY not in said
