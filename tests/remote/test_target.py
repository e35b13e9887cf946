"""Remote folder texts and the argv that reaches them."""

from __future__ import annotations

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import given_host_argv, target_for
from melgui.remote.hosts import configured_for
from melgui.remote.target import SshTarget, TargetError, command_target, parse_folder

BRIDGE = ["python3", "-m", "melgui", "host", "--bridge"]


def test_the_ssh_url_forms() -> None:
    assert parse_folder("ssh://build/srv/p") == SshTarget("build", "/srv/p")
    assert parse_folder("ssh://me@build:2222/srv/p/") == SshTarget("build", "/srv/p", "me", 2222)
    assert parse_folder("ssh://me@10.0.0.2/a%20b") == SshTarget("10.0.0.2", "/a b", "me")
    assert parse_folder("ssh://me@build:2222/srv/p").url == "ssh://me@build:2222/srv/p"
    assert parse_folder("ssh://me@build:2222/srv/p").label == "me@build:2222"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("ssh://build", "absolute path"),
        ("ssh:///srv/p", "names no host"),
        ("ssh://-oProxyCommand=x/srv", "names no host"),
        ("ssh://build:99999/srv", "port"),
        ("ssh://me:secret@build/srv", "no password"),
        ("/srv/p", "is not an ssh://"),
    ],
)
def test_what_is_not_a_remote_folder_says_why(text: str, said: str) -> None:
    with pytest.raises(TargetError, match=said):
        parse_folder(text)


def test_the_ssh_argv_has_no_terminal_and_never_accepts_host_keys_silently() -> None:
    argv = parse_folder("ssh://me@build:2222/srv/p").argv(BRIDGE)
    assert argv[:2] == ["ssh", "-T"]
    assert argv[-3:] == ["--", "build", "python3 -m melgui host --bridge"]
    assert argv[argv.index("-p") : argv.index("-p") + 2] == ["-p", "2222"]
    assert argv[argv.index("-l") : argv.index("-l") + 2] == ["-l", "me"]
    assert "ServerAliveInterval=2" in argv
    assert not any("StrictHostKeyChecking" in part for part in argv)
    assert "BatchMode=yes" not in argv  # the first connection may ask the person
    assert "BatchMode=yes" in parse_folder("ssh://build/p").argv(BRIDGE, batch=True)


def test_the_remote_argv_is_quoted_as_one_line_for_the_login_shell() -> None:
    argv = parse_folder("ssh://build/p").argv(["env", "A=a b", "python3"])
    assert argv[-1] == "env 'A=a b' python3"


def test_a_command_target_runs_the_argv_itself() -> None:
    box = command_target("docker exec -i devbox", "/work/")
    assert box.path == "/work" and box.label == "docker exec -i devbox"
    assert box.argv(BRIDGE) == ["docker", "exec", "-i", "devbox", *BRIDGE]
    with pytest.raises(TargetError, match="absolute"):
        command_target("docker exec -i devbox", "work")
    with pytest.raises(TargetError, match="empty"):
        command_target("  ", "/work")


def test_exec_s_folder_argument() -> None:
    assert target_for("/local/p", None) is None
    assert target_for("ssh://b/p", None) == SshTarget("b", "/p")
    assert target_for("/work", "podman exec -i box") == command_target(
        "podman exec -i box", "/work"
    )
    assert given_host_argv({}) is None  # then melgui's own install there
    given = {
        "MELGUI_REMOTE_HOST_COMMAND": "env PYTHONPATH=/opt/m /usr/bin/python3.11 -m melgui host"
    }
    assert (given_host_argv(given) or [])[-3:] == ["melgui", "host", "--bridge"]


def test_a_remote_folder_takes_the_settings_of_the_configured_host_it_is_on() -> None:
    hosts = [
        RemoteHost(name="box", target="docker exec -i build", folder="/w", loop_there=True),
        RemoteHost(name="other", target="ssh://me@build:2200/srv"),
        RemoteHost(name="bad", target="ssh://"),
        RemoteHost(name="build", target="ssh://me@build:2222", loop_there=True),
    ]
    found = configured_for(hosts, parse_folder("ssh://me@build:2222/srv/other"))
    assert found is not None and found.name == "build"
    assert configured_for(hosts, parse_folder("ssh://build:2222/srv/other")) is None  # no user
    assert configured_for(hosts, parse_folder("ssh://me@build/srv")) is None  # another port
