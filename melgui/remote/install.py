"""melgui's host on a remote machine with no registry: probe, upload wheels, install.

    argv = await ensure_host(["ssh", "-T", "build"])          # or ["docker", "exec", "-i", "box"]
    # ["env", "PYTHONPATH=/home/me/.local/share/melgui/host/0.1.0/lib",
    #  "/usr/bin/python3.12", "-s", "-m", "melgui", "host", "--stdio"]

`shell_argv` is any argv prefix after which a command runs on the target with this
process's stdio: ssh (which hands the words to the remote login shell), a container's exec
(which runs them as they are), or `env -i HOME=… PATH=…` here.

Never the login shell's syntax: bash, zsh, fish and csh read the words differently, so the
login shell is only given plain words, `/bin/sh -s`, and the POSIX script comes on stdin:

1. The probe (one round trip, builtins only): `$HOME`, the install's marker
   `~/.local/share/melgui/host/VERSION/.complete` if there, and each of python3.14 …
   python3.11, python3 on PATH with its version, machine and libc. When the marker names
   this build and its Python is still there, that is all: nothing is uploaded.
2. Otherwise the wheels for that Python (melgui/remote/wheels.py, prepared and cached here)
   go in a tar on the same stdin as the script. A shell reading its script from a pipe may
   read ahead (dash reads 8 KiB at a time), so the script is one line that execs the
   remote Python, then come 64 KiB of newlines, a marker line, and the tar: the Python
   skips lines up to the marker and reads the tar's exact size from there. It installs the
   wheels with pip run from the uploaded pip wheel (`--no-index --no-deps --isolated`, so
   no registry and no pip.conf is read) into a temporary folder, checks that
   `import melgui.host.main` works there, writes the marker and renames the folder into
   place: a folder named VERSION is always complete. No bytecode is compiled at install
   (`--no-compile`: 3.5 s and 18 MB less; Python writes it for what the host imports).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import secrets
import shlex
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from melgui import __version__
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import kill_unreaped, spawn
from melgui.remote.target import Target
from melgui.remote.wheels import RemotePython, WheelError, WheelSet, build_id, prepare

# The local argv that runs a remote argv (its words) on the target with our stdio.
Shell = Callable[[list[str]], list[str]]

MINIMUM = (3, 11)
CANDIDATES = ("python3.14", "python3.13", "python3.12", "python3.11", "python3")
HOST_FOLDER = ".local/share/melgui/host"
PADDING = 64 * 1024
PROBE_TIMEOUT = 60.0
INSTALL_TIMEOUT = 600.0
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_-]*$")
_TAIL = 15

# Run by every candidate Python, old ones too (no f-strings); in the script's single
# quotes, so no single quote in it.
_PROBE_PYTHON = """
import json, os, platform, sys
libc, libv = "", ""
try:
    name, _, libv = os.confstr("CS_GNU_LIBC_VERSION").partition(" ")
    libc = "glibc" if name == "glibc" else ""
except (AttributeError, ValueError, OSError, TypeError):
    pass
if not libc and sys.platform.startswith("linux"):
    import glob
    if glob.glob("/lib/ld-musl-*"):
        libc, libv = "musl", "1.2"
print("MELGUI-PYTHON " + json.dumps({"path": sys.argv[1],
    "version": list(sys.version_info[:3]), "machine": platform.machine(),
    "libc": libc, "libc_version": libv, "implementation": sys.implementation.name,
    "system": sys.platform}))
"""

_PROBE = """\
home=${HOME:-}
echo "MELGUI-HOME $home"
marker="$home/%(folder)s/%(version)s/.complete"
if [ -n "$home" ] && [ -f "$marker" ]; then
    IFS= read -r line < "$marker" || true
    echo "MELGUI-INSTALLED $line"
fi
for name in %(candidates)s; do
    found=$(command -v "$name" 2>/dev/null) || continue
    case "$found" in /*) ;; *) continue ;; esac
    "$found" -c '%(python)s' "$found" 2>/dev/null || echo "MELGUI-BROKEN $found"
done
echo MELGUI-END
"""

# The remote side of the upload (Python 3.11 or newer): base64 in the script, so any
# character may be used here. Its arguments start at sys.argv[2].
_INSTALL_PYTHON = r"""
import json, os, shutil, subprocess, sys, tarfile, tempfile

def fail(text):
    sys.stderr.write("melgui install: " + text + "\n")
    sys.exit(3)

def complete(folder):
    try:
        with open(os.path.join(folder, ".complete")) as marker:
            return json.loads(marker.readline())
    except (OSError, ValueError):
        return None

base, version, build, mark, size, pip_name, python = sys.argv[2:9]
size = int(size)
final = os.path.join(base, version)
os.makedirs(base, exist_ok=True)
stdin = sys.stdin.buffer
while True:
    line = stdin.readline()
    if not line:
        fail("the upload ended before its data began")
    if line.rstrip(b"\n") == mark.encode():
        break
work = tempfile.mkdtemp(prefix=".install-", dir=base)
try:
    wheels = os.path.join(work, "wheels")
    os.mkdir(wheels)
    archive = os.path.join(work, "wheels.tar")
    left = size
    with open(archive, "wb") as out:
        while left:
            chunk = stdin.read(min(left, 1 << 20))
            if not chunk:
                fail("the upload ended after %d of its %d bytes" % (size - left, size))
            out.write(chunk)
            left -= len(chunk)
    with tarfile.open(archive) as tar:
        for member in tar:
            name = member.name
            if not member.isfile() or "/" in name or name.startswith("."):
                fail("the upload holds %r, which is not a wheel" % name)
            with open(os.path.join(wheels, name), "wb") as out:
                shutil.copyfileobj(tar.extractfile(member), out)
    os.unlink(archive)
    lib = os.path.join(work, "lib")
    names = sorted(name for name in os.listdir(wheels) if name != pip_name)
    pip = [python, os.path.join(wheels, pip_name, "pip"), "install", "--isolated",
           "--no-index", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
           "--no-warn-script-location", "--quiet", "--no-compile", "--target", lib]
    done = subprocess.run(pip + [os.path.join(wheels, name) for name in names],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write((done.stdout + done.stderr)[-4000:])
        fail("pip could not install the uploaded wheels (exit %d)" % done.returncode)
    check = subprocess.run([python, "-s", "-c", "import melgui.host.main"],
                           env=dict(os.environ, PYTHONPATH=lib), stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
    if check.returncode:
        sys.stderr.write(check.stderr[-4000:])
        fail("the installed host does not start: import melgui.host.main failed")
    shutil.rmtree(wheels)
    record = {"build": build, "python": python, "version": version,
              "python_version": "%d.%d.%d" % sys.version_info[:3]}
    with open(os.path.join(work, ".complete"), "w") as out:
        out.write(json.dumps(record) + "\n")
    try:
        os.rename(work, final)
    except OSError:
        there = complete(final)
        if not (there and there.get("build") == build):
            aside = tempfile.mkdtemp(prefix=".old-", dir=base)
            os.rename(final, os.path.join(aside, version))
            os.rename(work, final)
            shutil.rmtree(aside, ignore_errors=True)
    print("MELGUI-INSTALLED " + json.dumps(record))
finally:
    shutil.rmtree(work, ignore_errors=True)
"""


class InstallError(RuntimeError):
    """melgui's host could not be installed on the remote; says why in plain words."""


class NoSuitablePython(InstallError):
    """The remote has no Python 3.11 or newer."""


@dataclass(frozen=True, slots=True)
class Probe:
    home: str
    pythons: list[RemotePython] = field(default_factory=list)
    installed: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Installed:
    python: str
    lib: str
    uploaded: int  # bytes sent to install it; 0 when it was there already

    @property
    def melgui_argv(self) -> list[str]:
        """`melgui` on the remote: add `host --stdio` (or `host --bridge`)."""
        return ["env", f"PYTHONPATH={self.lib}", self.python, "-s", "-m", "melgui"]

    @property
    def host_argv(self) -> list[str]:
        return [*self.melgui_argv, "host", "--stdio"]


async def ensure_host(
    shell_argv: list[str],
    *,
    version: str = __version__,
    label: str | None = None,
    cache: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> list[str]:
    """The remote argv that runs `melgui host --stdio` there, installed first if missing
    (raises InstallError, NoSuitablePython)."""
    installed = await ensure_installed(
        shell_argv, version=version, label=label, cache=cache, say=say
    )
    return installed.host_argv


async def ensure_installed(
    shell_argv: list[str],
    *,
    version: str = __version__,
    label: str | None = None,
    cache: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> Installed:
    where = label or shlex.join(shell_argv)
    return await _ensure(_prefixed(shell_argv), version, where, cache, say)


async def ensure_installed_on(
    target: Target,
    *,
    version: str = __version__,
    cache: Path | None = None,
    say: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
) -> Installed:
    """The same for a melgui/remote/target.py target (ssh's argv, or a command's); `env`:
    more of ssh's environment here (an askpass's), through `env` in front of it."""
    extra = [f"{name}={value}" for name, value in (env or {}).items() if name.isidentifier()]
    prefix = ["env", *extra] if extra else []
    return await _ensure(
        lambda words: [*prefix, *target.argv(words)], version, target.label, cache, say
    )


async def _ensure(
    shell: Shell,
    version: str,
    where: str,
    cache: Path | None,
    say: Callable[[str], None] | None,
) -> Installed:
    if not _VERSION.match(version):
        raise InstallError(f"{version!r} is not a version melgui installs")
    probe = await _probe(shell, version, where)
    try:
        present = _already_installed(probe, version)
        if present is not None:
            return present
        python = choose_python(probe, where)
        wheels = await asyncio.to_thread(prepare, python, cache)
    except WheelError as exc:
        raise InstallError(f"melgui could not prepare its host for {where}: {exc}") from None
    if say is not None:
        say(f"installing melgui {version} on {where} ({wheels.size / 1e6:.0f} MB)")
    return await upload_and_install(shell, probe, python, wheels, version, where)


def _prefixed(shell_argv: list[str]) -> Shell:
    return lambda words: [*shell_argv, *words]


async def probe_remote(shell_argv: list[str], *, version: str, label: str) -> Probe:
    """What the remote has: its home, its Pythons, and the install there if any."""
    return await _probe(_prefixed(shell_argv), version, label)


async def _probe(shell: Shell, version: str, label: str) -> Probe:
    script = _PROBE % {
        "folder": HOST_FOLDER,
        "version": version,
        "candidates": " ".join(CANDIDATES),
        "python": _PROBE_PYTHON.strip(),
    }
    code, out, err = await _run(shell(["/bin/sh", "-s"]), script.encode(), PROBE_TIMEOUT, label)
    lines = [line for line in out.splitlines() if line.startswith("MELGUI-")]
    if "MELGUI-END" not in lines:
        raise InstallError(
            f"cannot reach {label}: the command ended (exit status {code}) before it "
            f"answered{_tail(err)}"
        )
    home, pythons, installed = "", [], None
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "MELGUI-HOME":
            home = rest.strip()
        elif kind == "MELGUI-INSTALLED":
            installed = _json(rest)
        elif kind == "MELGUI-PYTHON":
            found = _python(_json(rest))
            if found is not None:
                pythons.append(found)
    if not home.startswith("/"):
        raise InstallError(f"{label} gives no home folder ($HOME is {home!r}) to install into")
    return Probe(home, pythons, installed)


def choose_python(probe: Probe, label: str) -> RemotePython:
    """The newest CPython 3.11 or newer the probe found (the first of equals)."""
    usable = [p for p in probe.pythons if p.version[:2] >= MINIMUM and _cpython(p)]
    if usable:
        return max(usable, key=lambda p: p.version[:2])
    found = ", ".join(f"{Path(p.path).name} {'.'.join(map(str, p.version))}" for p in probe.pythons)
    raise NoSuitablePython(
        f"{label} has no Python {MINIMUM[0]}.{MINIMUM[1]} or newer "
        f"(found: {found or 'no python3 on PATH'}); install python3.11 or newer there "
        f"(Debian and Ubuntu: apt install python3.11; Fedora and RHEL: dnf install "
        f"python3.11) and connect again"
    )


async def upload_and_install(
    shell: Shell,
    probe: Probe,
    python: RemotePython,
    wheels: WheelSet,
    version: str,
    label: str,
) -> Installed:
    archive = _tar(wheels)
    mark = f"MELGUI-PAYLOAD-{secrets.token_hex(8)}"
    base = f"{probe.home}/{HOST_FOLDER}"
    program = base64.b64encode(_INSTALL_PYTHON.encode()).decode()
    words = [
        program,
        base,
        version,
        wheels.build,
        mark,
        str(len(archive)),
        wheels.pip.name,
        python.path,
    ]
    line = (
        f"exec {shlex.quote(python.path)} -c "
        '\'import base64,sys;exec(compile(base64.b64decode(sys.argv[1]),"melgui-install",'
        '"exec"))\' ' + " ".join(shlex.quote(word) for word in words) + "\n"
    )
    data = line.encode() + b"\n" * PADDING + mark.encode() + b"\n" + archive
    code, out, err = await _run(shell(["/bin/sh", "-s"]), data, INSTALL_TIMEOUT, label)
    record = next(
        (
            _json(text[len("MELGUI-INSTALLED ") :])
            for text in out.splitlines()
            if text.startswith("MELGUI-INSTALLED ")
        ),
        None,
    )
    if code != 0 or record is None:
        raise InstallError(
            f"melgui could not install its host on {label} with {python.described} "
            f"(exit {code}){_tail(err or out)}"
        )
    return Installed(python.path, f"{base}/{version}/lib", len(data))


def _already_installed(probe: Probe, version: str) -> Installed | None:
    record = probe.installed
    if not record:
        return None
    for python in probe.pythons:
        if (
            python.path == record.get("python")
            and ".".join(map(str, python.version)) == record.get("python_version")
            and record.get("build") == build_id(python)
        ):
            return Installed(python.path, f"{probe.home}/{HOST_FOLDER}/{version}/lib", 0)
    return None


def _tar(wheels: WheelSet) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in (wheels.pip, *wheels.wheels):
            tar.add(path, arcname=path.name, recursive=False)
    return buffer.getvalue()


async def _run(argv: list[str], data: bytes, timeout: float, label: str) -> tuple[int, str, str]:
    try:
        process = await spawn(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise InstallError(f"could not run {argv[0]} to reach {label}: {exc}") from None
    try:
        out, err = await within(process.communicate(data), timeout)
    except TimeoutError:
        kill_unreaped(process)  # not process.kill(): its poll may reap behind the watcher
        await process.wait()
        raise InstallError(f"{label} did not answer within {timeout:.0f} s") from None
    code = process.returncode if process.returncode is not None else -1
    return code, out.decode(errors="replace"), err.decode(errors="replace")


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _python(found: dict[str, Any] | None) -> RemotePython | None:
    if found is None:
        return None
    try:
        major, minor, micro = (int(part) for part in found["version"])
        return RemotePython(
            path=str(found["path"]),
            version=(major, minor, micro),
            machine=str(found["machine"]),
            libc=str(found["libc"]),
            libc_version=str(found["libc_version"]),
            implementation=str(found["implementation"]),
            system=str(found["system"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _cpython(python: RemotePython) -> bool:
    return python.implementation == "cpython"


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return ":\n" + "\n".join(lines[-_TAIL:])
