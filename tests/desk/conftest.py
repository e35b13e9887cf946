"""A Desk on a real project folder, streaming through the scripted relay, with the
file-changing tools allowed without asking."""

from __future__ import annotations

from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay


def make_desk(folder: Path, relay: ScriptedRelay) -> Desk:
    settings = Settings(connection="relay", relay_url=relay.base_url)
    settings.approval_modes = {
        **settings.approval_modes,
        "write_file": "auto",
        "edit_file": "auto",
        "run_command": "auto",
    }
    return Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)
