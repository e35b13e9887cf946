"""A host's own settings reach its calls: `sandbox` runs run_command in bubblewrap there
(only the folder writable), `env` is added to the commands' environment; through a local
command that behaves like a container's exec."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.tools.commands.sandbox import sandbox_status
from tests.remote.fixtures import box_link


async def test_sandbox_and_environment_are_the_hosts_own(tmp_path: Path) -> None:
    if not sandbox_status().available:
        pytest.skip(f"no usable bubblewrap here: {sandbox_status().message}")
    folder = tmp_path / "project"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    command = {"command": f"echo $HOST_SAYS > inside.txt; touch {outside}/written; echo ran"}
    async with box_link(tmp_path, folder) as link:
        boxed = await link.run_call(
            "s/1",
            str(folder),
            "run_command",
            command,
            {"sandbox": True, "env": {"HOST_SAYS": "hi"}},
        )
        assert (folder / "inside.txt").read_text() == "hi\n"
        assert not (outside / "written").exists()  # bubblewrap: only the folder writable
        free = await link.run_call("s/2", str(folder), "run_command", command, {"sandbox": False})
    assert "ran" in boxed["content"] and "ran" in free["content"]
    assert (outside / "written").exists()
    assert (folder / "inside.txt").read_text() == "\n"  # no HOST_SAYS without the host's env
