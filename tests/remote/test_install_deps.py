"""The host's dependency set (melgui/remote/host_deps.py) is pyproject's without Qt, and
the wheels for another platform are fetched with that platform's tags (needs PyPI)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from melgui.remote.host_deps import HOST_REQUIREMENTS, WINDOW_ONLY
from melgui.remote.wheels import RemotePython, WheelError, platform_tags, prepare

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _key(text: str) -> tuple[str, str, str]:
    requirement = Requirement(text)
    return (
        canonicalize_name(requirement.name),
        str(requirement.specifier),
        str(requirement.marker or ""),
    )


def test_every_host_requirement_is_one_of_pyprojects_and_only_qt_is_left_out() -> None:
    declared = {_key(text) for text in PYPROJECT["project"]["dependencies"]}
    host = {_key(text) for text in HOST_REQUIREMENTS}
    assert len(host) == len(HOST_REQUIREMENTS)
    assert host - declared == set(), "host_deps.py names a requirement pyproject does not"
    left_out = {name for name, _, _ in declared - host}
    assert left_out == set(WINDOW_ONLY), "pyproject's dependencies and host_deps.py differ"
    assert not {name for name, _, _ in host} & WINDOW_ONLY


def test_platform_tags_for_glibc_count_down_to_the_oldest_manylinux() -> None:
    arm = RemotePython("/usr/bin/python3.12", (3, 12, 1), "aarch64", "glibc", "2.19")
    assert platform_tags(arm) == [
        "manylinux_2_19_aarch64",
        "manylinux_2_18_aarch64",
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64",
    ]
    intel = platform_tags(RemotePython("/p", (3, 11, 2), "x86_64", "glibc", "2.36"))
    assert intel[0] == "manylinux_2_36_x86_64" and intel[-1] == "manylinux1_x86_64"
    assert {"manylinux2014_x86_64", "manylinux2010_x86_64"} <= set(intel)
    musl = platform_tags(RemotePython("/p", (3, 12, 0), "x86_64", "musl", "1.2"))
    assert musl == ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"]


def test_a_remote_that_is_not_linux_or_has_no_known_libc_is_said_plainly() -> None:
    mac = RemotePython("/usr/bin/python3", (3, 12, 0), "arm64", "", "", system="darwin")
    with pytest.raises(
        WheelError, match="Linux with CPython; /usr/bin/python3 is cpython on darwin"
    ):
        platform_tags(mac)
    with pytest.raises(WheelError, match="neither glibc nor musl"):
        platform_tags(RemotePython("/p", (3, 12, 0), "x86_64", "", ""))


def _python_fits(tag: str, minor: int) -> bool:
    """A wheel's Python tag runs on CPython 3.minor (cp3N, its abi3 floor, or py3)."""
    match = re.fullmatch(r"(cp|py)3(\d*)", tag)
    return match is not None and (not match.group(2) or int(match.group(2)) <= minor)


def test_wheels_for_another_platform_carry_its_tags(tmp_path: Path) -> None:
    """The download step for aarch64 and Python 3.12 (not this machine's): every wheel runs
    there, and the compiled ones are aarch64 builds."""
    arm = RemotePython("/usr/bin/python3.12", (3, 12, 3), "aarch64", "glibc", "2.17")
    wheels = prepare(arm, tmp_path)
    allowed = {"any", "manylinux2014_aarch64", "manylinux_2_17_aarch64"}
    compiled = set()
    names = set()
    for path in wheels.wheels:
        name, _, _, tags = parse_wheel_filename(path.name)
        names.add(str(name))
        fitting = [
            tag
            for tag in tags
            if tag.platform in allowed
            and _python_fits(tag.interpreter, 12)
            and tag.abi in {"none", "abi3", "cp312"}
        ]
        assert fitting, f"{path.name} does not run on CPython 3.12 on aarch64"
        if any(tag.platform != "any" for tag in tags):
            compiled.add(str(name))
    assert {"pydantic-core", "tree-sitter", "pyavt", "ripgrep"} <= compiled
    assert "melgui" in names and not names & {"pyside6-essentials", "shiboken6", "qasync"}
    assert wheels.pip.name.startswith("pip-") and wheels.pip.name.endswith("-py3-none-any.whl")
    # Cached: the second call for the same key downloads nothing and gives the same files.
    assert prepare(arm, tmp_path) == wheels


def test_an_installed_melgui_is_repacked_as_the_wheel_it_came_from(tmp_path: Path) -> None:
    """melgui installed with pip (not a checkout): its own files, as RECORD lists them, make
    the wheel the remote installs, and that wheel installs and imports there."""
    cache = tmp_path / "cache"
    built = prepare(RemotePython(sys.executable, (3, 11, 0), "x86_64", "glibc", "2.36"), cache)
    source = built.wheels[0]
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "--no-deps"]
    subprocess.run([*pip, "--quiet", "--target", str(site), str(source)], check=True)
    out = tmp_path / "out"
    script = (
        "import sys; from pathlib import Path; import melgui.remote.wheels as w; "
        "assert w.checkout_root() is None, w.checkout_root(); "
        "out = Path(sys.argv[1]); out.mkdir(); w._wheel_of_installed(out)"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env, cwd=tmp_path)
    (repacked,) = out.glob("*.whl")
    assert repacked.name == source.name
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(repacked) as b:
        assert set(a.namelist()) == set(b.namelist())
    again = tmp_path / "again"
    subprocess.run([*pip, "--quiet", "--target", str(again), str(repacked)], check=True)
    check = "import melgui.host.main, melgui.resources as r; print(r.icon_svg_path().is_file())"
    done = subprocess.run(
        [sys.executable, "-c", check],
        env={**os.environ, "PYTHONPATH": str(again)},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.stdout.strip() == "True", done.stderr
