"""A hosted ACP agent cannot write melgui's own configuration (settings, keys, which
folders are trusted), even when that folder sits inside the project, as in a home folder
opened as the project. melgui's own file tools refuse it the same way.

Against tests/fakes/acp_scripted_agent.py, a real agent process on the official SDK.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30


async def test_melguis_config_inside_the_project_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / ".config" / "melgui"
    config.mkdir(parents=True)
    (config / "settings.json").write_text("{}")
    monkeypatch.setenv("MELGUI_CONFIG_DIR", str(config))
    events = Events()
    host = AcpHost(scripted_agent(), str(tmp_path))
    host.subscribe(events)
    steps = [
        {"write": ".config/melgui/settings.json", "content": '{"trusted": ["/"]}'},
        {"write": ".config/melgui/new.json", "content": "{}"},
        {"write": "fine.txt", "content": "made"},
    ]
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        await asyncio.wait_for(host.prompt(json.dumps(steps)), LIMIT)
    finally:
        await host.aclose()
    said = events.text()
    assert said.count("melgui's own configuration folder") == 2, said
    assert (config / "settings.json").read_text() == "{}"
    assert not (config / "new.json").exists()
    assert (tmp_path / "fine.txt").read_text() == "made"
