"""The desktop entry and AppStream metainfo: valid by the standard validators, consistent."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import melgui
from melgui.resources import APP_ID
from tests.packaging.scripts import LINUX_FILES

DESKTOP = LINUX_FILES / f"{APP_ID}.desktop"
METAINFO = LINUX_FILES / f"{APP_ID}.metainfo.xml"


def validator(name: str, package: str) -> str:
    """The validator's path; a missing one fails the test with what to install."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: apt-get install {package} (.ci/run does)")
    return path


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def validate_desktop_file(path: Path) -> None:
    result = run([validator("desktop-file-validate", "desktop-file-utils"), str(path)])
    # The validator exits 0 on hints too; hints and warnings are failures here.
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_desktop_entry_passes_desktop_file_validate() -> None:
    validate_desktop_file(DESKTOP)


def test_metainfo_passes_appstreamcli_validate() -> None:
    appstreamcli = validator("appstreamcli", "appstream")
    result = run([appstreamcli, "validate", "--no-net", "--pedantic", str(METAINFO)])
    assert result.returncode == 0, result.stdout + result.stderr
    # Infos are allowed (0.16 does not know the 1.0 <developer> tag); warnings are not.
    problems = [line for line in result.stdout.splitlines() if line[:2] in ("W:", "E:")]
    assert not problems, result.stdout


def test_entry_metainfo_and_icon_agree_on_the_app_id() -> None:
    entry = desktop_entry(DESKTOP)
    assert entry["Icon"] == APP_ID
    assert entry["Exec"].split()[0] == "melgui"
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "melgui"


def test_metainfo_lists_the_current_version_as_newest_release() -> None:
    releases = ET.parse(METAINFO).getroot().findall("releases/release")
    assert releases, "metainfo has no <release>"
    assert releases[0].get("version") == melgui.__version__, (
        f"add a <release version={melgui.__version__!r}> to {METAINFO.name}"
    )
