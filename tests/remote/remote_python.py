"""What the remote user's Python (Debian's /usr/bin/python3.11) needs to run melgui's host,
for the tests: a readable copy of the `melgui` package and of the installed distributions
its host needs (melgui's dependencies without PySide6 and qasync, and theirs), copied
file by file from this environment's site-packages as each distribution's RECORD lists
them. No registry is asked (the same CPython 3.11 on the same machine reads the same
wheels' files); the real offline install (wheels uploaded to the remote) is
melgui/remote/install.py's.

    paths = remote_python_path(workdir)     # [code folder, deps folder], for PYTHONPATH
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import os
import re
import shutil
import subprocess
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

import melgui

REMOTE_PYTHON = "/usr/bin/python3.11"
WITHOUT = {"pyside6-essentials", "pyside6", "shiboken6", "qasync"}
# Kept between runs: copying the files takes a few seconds; the key is their versions.
CACHE = Path("/var/tmp/melgui-remote-test-deps-3")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def host_distributions() -> list[metadata.Distribution]:
    """melgui's dependencies without the Qt ones, and theirs, as installed here."""
    environment = {k: str(v) for k, v in default_environment().items()}
    wanted = [Requirement(line) for line in metadata.requires("melgui") or []]
    found: dict[str, metadata.Distribution] = {}
    while wanted:
        requirement = wanted.pop()
        name = _name(requirement.name)
        if name in WITHOUT or name in found:
            continue
        marker = requirement.marker
        if marker is not None and not marker.evaluate({**environment, "extra": ""}):
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue
        found[name] = dist
        wanted.extend(Requirement(line) for line in dist.requires or [])
    return sorted(found.values(), key=lambda d: _name(d.metadata["Name"]))


def copy_distributions(target: Path) -> Path:
    """The host's distributions' files under `target` (made once per set of versions)."""
    dists = host_distributions()
    key = hashlib.sha256(
        "\n".join(f"{d.metadata['Name']}=={d.version}" for d in dists).encode()
    ).hexdigest()[:16]
    done = target / key
    if (done / ".complete").exists():
        return done
    building = target / f"{key}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    for dist in dists:
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if not source.is_file() or "__pycache__" in file.parts:
                continue
            place = building / file
            if str(file).startswith(".."):  # a script (rg): in bin/, as `pip --target` puts it
                if file.parent.name != "bin":
                    continue
                place = building / "bin" / file.name
            place.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, place)
    _compile(building)
    (building / ".complete").write_text("\n".join(d.metadata["Name"] for d in dists))
    for place in [building, *building.rglob("*")]:
        runs = place.is_dir() or place.parent == building / "bin"
        place.chmod(0o755 if runs else 0o644)
    target.chmod(0o755)
    try:
        building.rename(done)
    except OSError:  # another run made it first
        shutil.rmtree(building, ignore_errors=True)
    return done


def copy_code(target: Path) -> Path:
    """A copy of the `melgui` package this test runs (the worktree's), readable by all."""
    source = Path(melgui.__file__).parent
    code = target / "code"
    shutil.rmtree(code, ignore_errors=True)
    shutil.copytree(source, code / "melgui", ignore=shutil.ignore_patterns("__pycache__"))
    _compile(code)
    for place in [code, *code.rglob("*")]:
        place.chmod(0o755 if place.is_dir() else 0o644)
    return code


def _compile(folder: Path) -> None:
    """Byte-compile for the remote user, who cannot write __pycache__ here: otherwise every
    host it starts compiles melgui and its dependencies again (seconds)."""
    subprocess.run(
        [REMOTE_PYTHON, "-m", "compileall", "-q", "-j", "0", str(folder)],
        check=False,
        stdout=subprocess.DEVNULL,
    )


def remote_python_path(workdir: Path) -> list[str]:
    CACHE.mkdir(mode=0o755, parents=True, exist_ok=True)
    return [str(copy_code(workdir)), str(copy_distributions(CACHE))]
