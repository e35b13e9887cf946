"""The desktop entry and AppStream metainfo: valid by the standard validators, consistent."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import melgui
from melgui.resources import APP_ID
from tests.packaging.desktop import desktop_entry, run, validate_desktop_file, validator
from tests.packaging.scripts import LINUX_FILES

DESKTOP = LINUX_FILES / f"{APP_ID}.desktop"
METAINFO = LINUX_FILES / f"{APP_ID}.metainfo.xml"


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
