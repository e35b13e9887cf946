"""The offline install (melgui/remote/install.py), for real: Debian's /usr/bin/python3.11
with nothing installed, a fresh home, and no registry (pip.conf, PIP_INDEX_URL and the
proxies all point at a closed port), then the installed `melgui host --stdio` answers the
host protocol's `initialize`.

- the container form: `env -i HOME=… PATH=/usr/bin:/bin …`, a command prefix after which a
  command runs, as `docker exec -i box` is;
- over the real sshd (tests/remote/sshd.py) to the second local user, with bash, csh and
  fish as its login shell.

The wheels are prepared once (the session's `wheel_cache`, kept in /var/tmp between runs
and keyed by what they are made of); preparing them the first time needs PyPI.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui import __version__
from melgui.host import wire
from melgui.remote.install import (
    HOST_FOLDER,
    Installed,
    InstallError,
    NoSuitablePython,
    choose_python,
    ensure_host,
    ensure_installed,
    ensure_installed_on,
    probe_remote,
)
from melgui.remote.target import command_target, parse_folder
from melgui.remote.wheels import prepare
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines, melgui_exec
from tests.remote.sshd import TestSshServer

pytestmark = pytest.mark.slow

PYTHON = "/usr/bin/python3.11"
CACHE = Path("/var/tmp/melgui-remote-test-wheels")
NOWHERE = "http://127.0.0.1:9/"
PIP_CONF = f"[global]\nindex-url = {NOWHERE}\ntimeout = 2\nretries = 0\n"


def box(home: Path, path: str = "/usr/bin:/bin") -> list[str]:
    """A "container": a command prefix whose commands run with only this environment."""
    conf = home / "pip.conf"
    return [
        "env",
        "-i",
        f"HOME={home}",
        f"PATH={path}",
        f"PIP_CONFIG_FILE={conf}",
        f"PIP_INDEX_URL={NOWHERE}",
        f"http_proxy={NOWHERE}",
        f"https_proxy={NOWHERE}",
    ]


def fresh_home(place: Path) -> Path:
    place.mkdir(parents=True, exist_ok=True)
    (place / "pip.conf").write_text(PIP_CONF)
    return place


@pytest.fixture(scope="session")
def wheel_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel set for this machine's Debian Python, prepared once."""
    if not Path(PYTHON).exists():
        pytest.skip(f"{PYTHON} (Debian's python3.11) is not installed")
    home = fresh_home(tmp_path_factory.mktemp("probe-home"))
    probe = asyncio.run(probe_remote(box(home), version=__version__, label="probe"))
    prepare(choose_python(probe, "probe"), CACHE)
    return CACHE


async def initialize(argv: list[str]) -> dict[str, object]:
    """The host protocol's handshake with the host `argv` runs."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    params = {"version": __version__, "protocol": wire.PROTOCOL, "client": "window"}
    process.stdin.write(wire.encode(wire.request(1, "initialize", params)))
    await process.stdin.drain()
    line = await asyncio.wait_for(process.stdout.readline(), 60)
    process.stdin.close()
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert line, f"the host said nothing: {err.decode(errors='replace')}"
    answer = wire.decode(line)
    assert answer.get("id") == 1, answer
    result = answer["result"]
    assert isinstance(result, dict)
    return result


def assert_installed(installed: Installed, home: Path) -> Path:
    lib = home / HOST_FOLDER / __version__ / "lib"
    assert installed.lib == str(lib)
    assert (lib / "melgui" / "host" / "main.py").is_file()
    assert not list(lib.glob("PySide6*")) and not list(lib.glob("qasync*"))
    assert (lib.parent / ".complete").is_file()
    assert not list(lib.parent.parent.glob(".install-*")), "a temporary folder was left"
    return lib


async def test_container_form_installs_offline_and_the_host_answers(
    wheel_cache: Path, tmp_path: Path
) -> None:
    home = fresh_home(tmp_path / "home")
    shell = box(home)
    said: list[str] = []
    started = time.monotonic()
    installed = await ensure_installed(shell, cache=wheel_cache, say=said.append)
    seconds = time.monotonic() - started
    assert installed.python == PYTHON
    assert installed.uploaded > 1_000_000
    assert said and f"installing melgui {__version__} on env -i" in said[0]
    assert_installed(installed, home)
    print(f"installed: {installed.uploaded / 1e6:.1f} MB uploaded in {seconds:.1f} s")
    result = await initialize([*shell, *installed.host_argv])
    assert result["version"] == __version__ and result["protocol"] == wire.PROTOCOL

    # Already there: the second look uploads nothing and changes nothing.
    marker = home / HOST_FOLDER / __version__ / ".complete"
    before = marker.stat().st_mtime_ns
    again = await ensure_installed(shell, cache=wheel_cache)
    assert again.uploaded == 0 and again.host_argv == installed.host_argv
    assert marker.stat().st_mtime_ns == before
    assert await ensure_host(shell, cache=wheel_cache) == installed.host_argv
    # The same target as `melgui exec --via COMMAND` names it.
    via = await ensure_installed_on(command_target(shlex.join(shell), "/"), cache=wheel_cache)
    assert via == again


async def test_an_incomplete_install_is_replaced(wheel_cache: Path, tmp_path: Path) -> None:
    """A VERSION folder without its marker (another build's, or half made) is installed
    again in full, and the new one takes its place."""
    home = fresh_home(tmp_path / "home")
    stale = home / HOST_FOLDER / __version__
    (stale / "lib" / "melgui").mkdir(parents=True)
    (stale / "lib" / "melgui" / "__init__.py").write_text("raise SystemExit('stale')\n")
    installed = await ensure_installed(box(home), cache=wheel_cache)
    assert installed.uploaded > 0
    lib = assert_installed(installed, home)
    assert "stale" not in (lib / "melgui" / "__init__.py").read_text()
    assert [path.name for path in stale.parent.iterdir()] == [__version__]


async def test_no_suitable_python_is_said_plainly(tmp_path: Path) -> None:
    """Only a python3 that is 3.9 on PATH (and nothing else, not even coreutils)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    # A Python that says it is 3.9.2 to whatever it is asked with -c.
    fake.write_text(
        f"#!{PYTHON}\n"
        "import sys\n"
        "code = sys.argv[2]\n"
        "sys.argv = ['-c', *sys.argv[3:]]\n"
        "sys.version_info = (3, 9, 2, 'final', 0)\n"
        "exec(compile(code, '<string>', 'exec'))\n"
    )
    fake.chmod(0o755)
    home = fresh_home(tmp_path / "home")
    with pytest.raises(NoSuitablePython) as raised:
        await ensure_host(box(home, path=str(bin_dir)), label="devbox")
    assert str(raised.value).startswith(
        "devbox has no Python 3.11 or newer (found: python3 3.9.2); install python3.11"
    )
    assert not (home / ".local").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NoSuitablePython, match=r"\(found: no python3 on PATH\)"):
        await ensure_host(box(home, path=str(empty)), label="devbox")


async def test_a_failed_install_says_why_with_the_remotes_words(
    wheel_cache: Path, tmp_path: Path
) -> None:
    home = fresh_home(tmp_path / "home")
    (home / ".local").write_text("a file where the install's folder should be\n")
    with pytest.raises(InstallError) as raised:
        await ensure_host(box(home), cache=wheel_cache, label="devbox")
    text = str(raised.value)
    assert text.startswith(f"melgui could not install its host on devbox with {PYTHON} 3.11")
    assert "NotADirectoryError" in text or "FileExistsError" in text


def test_a_target_that_cannot_be_reached_is_said_plainly() -> None:
    with pytest.raises(InstallError, match="could not run no-such-ssh-command to reach box"):
        asyncio.run(ensure_host(["no-such-ssh-command", "box"], label="box"))


@pytest.fixture
def login_shell(ssh_server: TestSshServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The remote user's login shell for one test (bash again afterwards), a fresh
    install folder, and a pip.conf in its home that points at nothing."""
    shell = str(request.param)
    if not Path(shell).exists():
        package = Path(shell).name
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
            check=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            stdout=subprocess.DEVNULL,
        )
    home = ssh_server.home
    shutil.rmtree(home / ".local" / "share" / "melgui", ignore_errors=True)
    for conf in (home / ".config" / "pip" / "pip.conf", home / ".pip" / "pip.conf"):
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text(PIP_CONF)
    ssh_server.give(home)
    name = ssh_server.user.pw_name
    subprocess.run(["usermod", "--shell", shell, name], check=True, capture_output=True)
    try:
        yield shell
    finally:
        subprocess.run(["usermod", "--shell", "/bin/bash", name], check=True, capture_output=True)


@pytest.mark.parametrize("login_shell", ["/bin/bash", "/bin/csh", "/usr/bin/fish"], indirect=True)
async def test_over_ssh_with_each_login_shell(
    wheel_cache: Path, ssh_server: TestSshServer, login_shell: str
) -> None:
    shell = ["ssh", "-T", "-o", "BatchMode=yes", ssh_server.alias]
    seen = ssh_server.ssh("echo $SHELL")
    assert seen.stdout.strip() == login_shell, seen.stderr
    started = time.monotonic()
    installed = await ensure_installed(shell, cache=wheel_cache, label=ssh_server.alias)
    seconds = time.monotonic() - started
    assert installed.python == PYTHON and installed.uploaded > 1_000_000
    assert_installed(installed, ssh_server.home)
    owner = (ssh_server.home / HOST_FOLDER / __version__).stat().st_uid
    assert owner == ssh_server.user.pw_uid
    print(f"{login_shell}: {installed.uploaded / 1e6:.1f} MB uploaded in {seconds:.1f} s")
    result = await initialize([*shell, *installed.host_argv])
    assert result["version"] == __version__
    # Already there, for the target `ssh://alias/…` names (ssh's own options and all).
    target = parse_folder(f"ssh://{ssh_server.alias}{ssh_server.home}")
    again = await ensure_installed_on(target, cache=wheel_cache)
    assert again.uploaded == 0 and again.host_argv == installed.host_argv


@pytest.mark.parametrize("login_shell", ["/bin/bash"], indirect=True)
def test_exec_over_ssh_installs_melgui_there_and_runs_the_call(
    wheel_cache: Path,
    ssh_server: TestSshServer,
    login_shell: str,
    scripted_relay: ScriptedRelay,
    tmp_path: Path,
) -> None:
    """`melgui exec --folder ssh://…` with no host command given: melgui installs itself
    there (the wheels from the cache it prepared), then the call runs in that install."""
    cache_home = tmp_path / "cache"
    (cache_home / "melgui").mkdir(parents=True)
    (cache_home / "melgui" / "remote-wheels").symlink_to(wheel_cache)
    folder = ssh_server.home / "installed-project"
    folder.mkdir(exist_ok=True)
    (folder / "a.txt").write_text("read by the installed host\n")
    ssh_server.give(folder)
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"))],
        [text("Read."), done()],
    )
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", f"ssh://{ssh_server.alias}{folder}",
        "--json", "read a",
        env={"MELIAI_API_KEY": "k", "XDG_CACHE_HOME": str(cache_home)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"installing melgui {__version__} on {ssh_server.alias}" in result.stderr
    assert (ssh_server.home / HOST_FOLDER / __version__ / ".complete").is_file()
    results = [e for e in json_lines(result.stdout) if e["kind"] == "tool_result"]
    assert [e["status"] for e in results] == ["ok"]
    assert "read by the installed host" in results[0]["content"]
