"""The wheels a remote machine's melgui host is installed from, prepared on this machine
for the remote's platform and Python, so the remote needs no registry.

    remote = RemotePython("/usr/bin/python3.12", (3, 12, 3), "x86_64", "glibc", "2.39")
    wheels = prepare(remote)          # cached: built or downloaded once per key
    wheels.pip                        # a pip wheel: the remote runs pip from it
    wheels.wheels                     # melgui's own wheel and the host's dependencies

Three parts, each cached under the user's cache folder (platformdirs), in a folder made
under a temporary name and renamed when complete, so a second melgui never reads half:

- melgui's own wheel: `pip wheel --no-deps` of a copy of the checkout (the build writes
  build/ and egg-info), keyed by melgui's version and a hash of its sources; from an
  installed melgui, its files repacked as a wheel, keyed by its RECORD.
- the host's dependencies (melgui/remote/host_deps.py, no Qt) for the remote:
  `pip download --only-binary=:all: --platform … --python-version X.Y --implementation cp
  --abi cpXY --abi abi3 --abi none`, keyed by melgui's version, the requirements, the
  platform and the Python.
- a pip wheel (this pip's version): `python pip-X-py3-none-any.whl/pip install …` runs pip
  from the wheel itself, so the remote needs neither pip nor venv.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

import melgui
from melgui import __version__
from melgui.remote.host_deps import HOST_REQUIREMENTS

PIP_TIMEOUT = 600.0
# The oldest glibc each architecture has manylinux wheels for (PEP 600's legacy tags).
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_OLD_X86 = ("x86_64", "i686")
# What pip writes into an installed dist-info that no wheel holds (PEP 376, PEP 610).
_INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "direct_url.json"})


class WheelError(RuntimeError):
    """The wheels for a remote could not be prepared; says why in plain words."""


@dataclass(frozen=True, slots=True)
class RemotePython:
    """A Python on the remote, as the install's probe found it."""

    path: str
    version: tuple[int, int, int]
    machine: str  # platform.machine(): "x86_64", "aarch64"
    libc: str  # "glibc", "musl", or "" (not Linux, or not known)
    libc_version: str  # "2.36"
    implementation: str = "cpython"
    system: str = "linux"

    @property
    def short_version(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def described(self) -> str:
        libc = f", {self.libc} {self.libc_version}" if self.libc else ""
        return f"{self.path} {'.'.join(map(str, self.version))} ({self.machine}{libc})"

    @property
    def key(self) -> str:
        """What the dependency wheels depend on: the Python and the platform."""
        return f"cp{self.version[0]}{self.version[1]}-{self.machine}-{self.libc}{self.libc_version}"


@dataclass(frozen=True, slots=True)
class WheelSet:
    pip: Path
    wheels: tuple[Path, ...]
    build: str  # the remote install's marker records it; another build is reinstalled

    @property
    def size(self) -> int:
        return sum(path.stat().st_size for path in (self.pip, *self.wheels))


def platform_tags(python: RemotePython) -> list[str]:
    """The wheel platform tags the remote runs, newest first (pip download's --platform)."""
    if python.system != "linux" or python.implementation != "cpython":
        raise WheelError(
            f"melgui installs its host on Linux with CPython; {python.path} is "
            f"{python.implementation} on {python.system}"
        )
    arch = python.machine
    if python.libc == "glibc":
        try:
            major, minor = (int(part) for part in python.libc_version.split(".")[:2])
        except ValueError:
            raise WheelError(f"{python.path}: glibc version {python.libc_version!r}") from None
        if major != 2:
            raise WheelError(f"{python.path}: glibc {python.libc_version} is not glibc 2")
        lowest = 5 if arch in _OLD_X86 else 17
        tags: list[str] = []
        for glibc in range(minor, lowest - 1, -1):
            tags.append(f"manylinux_2_{glibc}_{arch}")
            legacy = _LEGACY_MANYLINUX.get(glibc)
            if legacy is not None and (glibc == 17 or arch in _OLD_X86):
                tags.append(f"{legacy}_{arch}")
        return tags
    if python.libc == "musl":
        return [f"musllinux_1_2_{arch}", f"musllinux_1_1_{arch}"]
    raise WheelError(f"{python.path}: neither glibc nor musl, so no Linux wheel fits it")


def cache_root() -> Path:
    return Path(platformdirs.user_cache_dir("melgui")) / "remote-wheels"


def checkout_root() -> Path | None:
    """The source checkout melgui runs from, when it runs from one."""
    root = Path(melgui.__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "resources").is_dir():
        return root
    return None


def _source_files(root: Path) -> Iterator[Path]:
    yield root / "pyproject.toml"
    for folder in ("melgui", "resources"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path


def source_hash() -> str:
    """What melgui's own wheel is made of: its sources' hash, or the installed RECORD's."""
    digest = hashlib.sha256(__version__.encode())
    root = checkout_root()
    if root is not None:
        for path in _source_files(root):
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes())
    else:
        digest.update((_installed_melgui().read_text("RECORD") or "").encode())
    return digest.hexdigest()[:16]


def _installed_melgui() -> metadata.Distribution:
    try:
        dist = metadata.distribution("melgui")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is None or not dist.read_text("RECORD"):
        raise WheelError(
            "this melgui is neither a source checkout nor installed with pip (a desktop "
            "bundle?), so it has no wheel to install on a remote; install melgui with pip "
            "here (pip install melgui) and connect from that"
        )
    return dist


def build_id(python: RemotePython) -> str:
    """Names what an install for `python` is made of, without building it (the already
    installed check compares it with the remote's marker)."""
    parts = [__version__, source_hash(), python.key, *HOST_REQUIREMENTS]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def prepare(python: RemotePython, cache: Path | None = None) -> WheelSet:
    """The wheels that install melgui's host for `python` (blocking: run it in a thread)."""
    root = cache or cache_root()
    own = _melgui_wheel(root)
    deps = _host_dependencies(root, python)
    return WheelSet(_pip_wheel(root), (own, *deps), build_id(python))


def _complete(folder: Path) -> list[Path] | None:
    marker = folder / ".complete"
    if not marker.is_file():
        return None
    names = [name for name in marker.read_text().splitlines() if name]
    return [folder / name for name in names]


def _finish(building: Path, folder: Path) -> list[Path]:
    """Marks `building` complete and puts it in place (another process may have won)."""
    names = sorted(path.name for path in building.glob("*.whl"))
    (building / ".complete").write_text("".join(f"{name}\n" for name in names))
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        building.rename(folder)
    except OSError:  # made meanwhile by another melgui, or an incomplete one is there
        done = _complete(folder)
        if done is not None:
            shutil.rmtree(building, ignore_errors=True)
            return done
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    return [folder / name for name in names]


def _building(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".building-", dir=root))


def _pip(args: list[str], what: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise WheelError(f"{what}: pip took longer than {PIP_TIMEOUT:.0f} s") from None
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-12:])
        raise WheelError(f"{what}: pip {args[0]} failed:\n{tail}")


def _melgui_wheel(root: Path) -> Path:
    folder = root / "melgui" / f"{__version__}-{source_hash()}"
    done = _complete(folder)
    if done:
        return done[0]
    building = _building(root)
    try:
        checkout = checkout_root()
        if checkout is not None:
            _wheel_of_checkout(checkout, building)
        else:
            _wheel_of_installed(building)
        return _finish(building, folder)[0]
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _wheel_of_checkout(checkout: Path, out: Path) -> None:
    """`pip wheel --no-deps` of a copy (the build writes build/ and egg-info into its
    source folder, and the checkout is left as it is)."""
    with tempfile.TemporaryDirectory(prefix="melgui-source-") as source_text:
        source = Path(source_text)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in ("pyproject.toml", "README.md"):
            if (checkout / name).is_file():
                shutil.copy2(checkout / name, source / name)
        for name in ("melgui", "resources"):
            shutil.copytree(checkout / name, source / name, ignore=ignore)
        _pip(
            ["wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(source)],
            "building melgui's wheel",
        )


def _wheel_of_installed(out: Path) -> None:
    """An installed melgui's own files (as its RECORD lists them), packed as a wheel."""
    dist = _installed_melgui()
    name = f"melgui-{dist.version}-py3-none-any.whl"
    kept: list[str] = []
    record = ""
    with zipfile.ZipFile(out / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if (
                str(file).startswith("..")
                or "__pycache__" in file.parts
                or file.name in _INSTALLER_FILES
                or not source.is_file()
            ):
                continue
            if file.name == "RECORD":
                record = str(file)
                continue
            wheel.write(source, str(file))
            kept.append(str(file))
        # RECORD names what the wheel holds: not the installer's own files, nor itself
        # hashed.
        lines = (dist.read_text("RECORD") or "").splitlines()
        wanted = set(kept)
        rows = [line for line in lines if line.rsplit(",", 2)[0] in wanted]
        wheel.writestr(record, "\n".join([*rows, f"{record},,"]) + "\n")


def _host_dependencies(root: Path, python: RemotePython) -> list[Path]:
    requirements = hashlib.sha256("\n".join(HOST_REQUIREMENTS).encode()).hexdigest()[:12]
    folder = root / "deps" / f"{__version__}-{requirements}" / python.key
    done = _complete(folder)
    if done is not None:
        return done
    tags = platform_tags(python)
    abi = f"cp{python.version[0]}{python.version[1]}"
    building = _building(root)
    try:
        _pip(
            [
                "download",
                "--quiet",
                "--only-binary=:all:",
                "--implementation",
                "cp",
                "--python-version",
                python.short_version,
                *(item for tag in ("abi3", "none") for item in ("--abi", tag)),
                "--abi",
                abi,
                *(item for tag in tags for item in ("--platform", tag)),
                "--dest",
                str(building),
                *HOST_REQUIREMENTS,
            ],
            f"fetching the host's dependencies for Python {python.short_version} on "
            f"{python.machine} ({python.libc} {python.libc_version})",
        )
        return _finish(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _pip_wheel(root: Path) -> Path:
    version = metadata.version("pip")
    folder = root / "pip" / version
    done = _complete(folder)
    if done:
        return done[0]
    building = _building(root)
    try:
        _pip(
            [
                "download",
                "--quiet",
                "--only-binary=:all:",
                "--no-deps",
                "--dest",
                str(building),
                f"pip=={version}",
            ],
            "fetching a pip wheel for the remote",
        )
        return _finish(building, folder)[0]
    finally:
        shutil.rmtree(building, ignore_errors=True)
