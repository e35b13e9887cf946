"""install-desktop.sh: entry, metainfo and icons into the user's XDG data folder, and back out."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from melgui.resources import APP_ID, ICON_SIZES
from tests.packaging.desktop import desktop_entry, validate_desktop_file
from tests.packaging.scripts import LINUX_FILES

SCRIPT = LINUX_FILES / "install-desktop.sh"


def installed_files(data_home: Path) -> list[Path]:
    return [
        data_home / "applications" / f"{APP_ID}.desktop",
        data_home / "metainfo" / f"{APP_ID}.metainfo.xml",
        data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        *(
            data_home / "icons" / "hicolor" / f"{s}x{s}" / "apps" / f"{APP_ID}.png"
            for s in ICON_SIZES
        ),
    ]


def fake_melgui(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "melgui"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def run_script(
    *args: str, env: dict[str, str], cwd: Path | None = None, script: Path = SCRIPT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(script), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "HOME")}
    env["PATH"] = "/usr/bin:/bin"  # no melgui on PATH unless a test adds one
    env["HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def test_installs_into_xdg_data_home_with_an_absolute_exec(tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    program = fake_melgui(tmp_path / "opt" / "melgui")
    env = clean_env(tmp_path, XDG_DATA_HOME=str(data_home))
    result = run_script("--exec", str(program), env=env)
    assert result.returncode == 0, result.stderr
    assert all(p.is_file() for p in installed_files(data_home))
    entry = desktop_entry(data_home / "applications" / f"{APP_ID}.desktop")
    assert entry["Exec"] == f"{program} %f"
    assert entry["TryExec"] == str(program)
    validate_desktop_file(data_home / "applications" / f"{APP_ID}.desktop")
    assert not (tmp_path / "home").exists()


def test_defaults_to_home_local_share_and_melgui_on_path(tmp_path: Path) -> None:
    program = fake_melgui(tmp_path / "bin")
    env = clean_env(tmp_path)
    env["PATH"] = f"{program.parent}:{env['PATH']}"
    result = run_script(env=env)
    assert result.returncode == 0, result.stderr
    data_home = tmp_path / "home" / ".local" / "share"
    assert all(p.is_file() for p in installed_files(data_home))
    assert desktop_entry(data_home / "applications" / f"{APP_ID}.desktop")["Exec"].startswith(
        f"{program} "
    )


def test_uninstall_removes_every_installed_file(tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    env = clean_env(tmp_path, XDG_DATA_HOME=str(data_home))
    program = fake_melgui(tmp_path / "bin")
    assert run_script("--exec", str(program), env=env).returncode == 0
    result = run_script("--uninstall", env=env)
    assert result.returncode == 0, result.stderr
    assert not any(p.exists() for p in installed_files(data_home))


@pytest.mark.parametrize(
    ("args", "extra", "message"),
    [
        ((), {}, "no melgui executable"),
        (("--exec", "/nonexistent/melgui"), {}, "not an executable"),
        (("--exec",), {}, "--exec needs a command"),
        (("--bogus",), {}, "unknown argument"),
        (("--exec", "/bin/sh"), {"XDG_DATA_HOME": "relative/dir"}, "absolute path"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, args: tuple[str, ...], extra: dict[str, str], message: str
) -> None:
    result = run_script(*args, env=clean_env(tmp_path, **extra), cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "home").exists()
