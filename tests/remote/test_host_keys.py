"""ssh's questions reach the person, never answered silently, with the real sshd and the
system's ssh reading a Host block as a person writes one (tests/remote/sshd.py):

- an unknown host key is asked about (with its fingerprint) through the askpass: accepted,
  it connects and the key is kept in the person's known_hosts; declined, nothing connects;
- a changed host key is refused by ssh without a question, and said in plain words;
- a key's passphrase is asked for, and the key then logs in;
- `melgui exec` with nobody at a terminal refuses in plain words; from a terminal, ssh asks
  there, as in the person's own terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from melgui.core.terminal.pty_session import PtySession
from melgui.remote.askpass import Question
from melgui.remote.connect import open_link
from melgui.remote.link import LinkError
from melgui.remote.target import parse_folder
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import ROOT, melgui_exec
from tests.remote.fixtures import Remote, exec_env, wait_for

PASSPHRASE = "correct horse battery"


class Person:
    """Answers ssh's questions as a test says, and remembers them."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.asked: list[Question] = []

    async def __call__(self, question: Question) -> str | None:
        self.asked.append(question)
        return self.answers.get(question.kind)


def fingerprint(remote: Remote) -> str:
    public = remote.server.workdir / "keys" / "ssh_host_ed25519_key.pub"
    listed = subprocess.run(["ssh-keygen", "-lf", str(public)], capture_output=True, text=True)
    return listed.stdout.split()[1]  # "256 SHA256:… comment (ED25519)"


def project(remote: Remote, name: str) -> Path:
    folder = remote.folder(name)
    (folder / "a.txt").write_text("on the remote\n")
    remote.server.give(folder)
    return folder


async def read_through(remote: Remote, alias: str, folder: Path, person: Person) -> str:
    """Open a link as the window does (questions to `person`) and read a.txt there."""
    host = [*remote.host_argv, "--bridge"]
    target = parse_folder(f"ssh://{alias}{folder}")
    link = await open_link(target, say=lambda _text: None, host=host, ask=person)
    try:
        call_id = f"keys/{uuid.uuid4().hex}"  # the remote user's host outlives each test
        outcome = await link.run_call(call_id, str(folder), "read_file", {"path": "a.txt"})
    finally:
        await link.aclose()
    return str(outcome["content"])


async def test_an_unknown_host_key_is_asked_about_and_kept_once_accepted(
    remote: Remote, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    alias = remote.server.alias_with("unknown", known_hosts=known, strict="ask")
    person = Person({"host_key": "yes"})
    content = await read_through(remote, alias, project(remote, "keys-unknown"), person)
    assert "on the remote" in content
    [asked] = person.asked
    assert asked.kind == "host_key"
    assert asked.fingerprint == fingerprint(remote)
    assert "can't be established" in asked.prompt
    assert remote.server.host_public_key.split()[1] in known.read_text()
    # The next connection knows the key: nothing is asked.
    again = Person({})
    assert "on the remote" in await read_through(
        remote, alias, project(remote, "keys-known"), again
    )
    assert again.asked == []


async def test_an_unknown_host_key_declined_connects_nothing(
    remote: Remote, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    alias = remote.server.alias_with("declined", known_hosts=known, strict="ask")
    person = Person({"host_key": None})
    with pytest.raises(LinkError) as refused:
        await read_through(remote, alias, project(remote, "keys-declined"), person)
    assert [q.kind for q in person.asked] == ["host_key"]
    said = str(refused.value)
    assert "is not known here, and it was not accepted, so nothing connected" in said
    assert fingerprint(remote) in said
    assert known.read_text() == ""


async def test_a_changed_host_key_is_refused_without_a_question(
    remote: Remote, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other], check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{remote.server.port} {other.with_suffix('.pub').read_text()}")
    alias = remote.server.alias_with("changed", known_hosts=known, strict="ask")
    person = Person({"host_key": "yes"})
    with pytest.raises(LinkError) as refused:
        await read_through(remote, alias, project(remote, "keys-changed"), person)
    assert person.asked == []  # ssh does not ask about a changed key: it refuses
    said = str(refused.value)
    assert "has changed since it was accepted, so ssh refused to connect" in said
    assert f'-R "[127.0.0.1]:{remote.server.port}"' in said  # how to remove it, from ssh


async def test_a_key_s_passphrase_is_asked_for(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # no agent holds the key
    key = remote.server.user_key("id_passphrase", PASSPHRASE)
    alias = remote.server.alias_with("passphrase", identity=key)
    person = Person({"secret": PASSPHRASE})
    content = await read_through(remote, alias, project(remote, "keys-passphrase"), person)
    assert "on the remote" in content
    [asked] = person.asked
    assert asked.secret and "passphrase" in asked.prompt.lower()
    declined = Person({"secret": None})
    with pytest.raises(LinkError, match="ssh asked for a key's passphrase to log in to"):
        await read_through(remote, alias, project(remote, "keys-no-passphrase"), declined)


def script_read(relay: ScriptedRelay) -> None:
    relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"))],
        [text("Read."), done()],
    )


def test_exec_with_nobody_at_a_terminal_refuses_an_unknown_host_key(
    scripted_relay: ScriptedRelay, remote: Remote, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    alias = remote.server.alias_with("exec-unknown", known_hosts=known, strict="ask")
    folder = project(remote, "keys-exec-refused")
    script_read(scripted_relay)
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", f"ssh://{alias}{folder}", "read a",
        env=exec_env(remote), start_new_session=True,  # no controlling terminal
    )  # fmt: skip
    assert result.returncode != 0
    assert "is not known here, and it was not accepted, so nothing connected" in result.stderr
    assert fingerprint(remote) in result.stderr
    assert known.read_text() == ""
    assert scripted_relay.legs_received == []  # the model was never asked


def test_exec_from_a_terminal_lets_ssh_ask_there(
    scripted_relay: ScriptedRelay, remote: Remote, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    alias = remote.server.alias_with("exec-terminal", known_hosts=known, strict="ask")
    folder = project(remote, "keys-exec-terminal")
    script_read(scripted_relay)
    env = {**os.environ, "PYTHONPATH": str(ROOT), **exec_env(remote)}
    argv = [sys.executable, "-m", "melgui", "exec", "--url", scripted_relay.base_url,
            "--folder", f"ssh://{alias}{folder}", "--approve", "all", "read a"]  # fmt: skip
    terminal = PtySession(argv, cwd=tmp_path, env=env, columns=200, rows=50)
    seen = bytearray()

    def read() -> str:
        while chunk := terminal.read():
            seen.extend(chunk)
        return seen.decode(errors="replace")

    try:
        wait_for(lambda: "continue connecting" in read(), what="ssh's question on the terminal")
        assert fingerprint(remote) in read()
        terminal.write(b"yes\r")
        wait_for(lambda: terminal.poll() is not None, timeout=120, what="exec to end")
        read()
    finally:
        terminal.close(0.5)
    assert terminal.exit_code == 0, seen.decode(errors="replace")
    assert "Read." in seen.decode(errors="replace")
    assert remote.server.host_public_key.split()[1] in known.read_text()
