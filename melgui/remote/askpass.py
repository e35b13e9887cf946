"""ssh's questions (an unknown host key, a passphrase, a password) routed to the person.

    async with Askpass(ask) as askpass:          # ask(Question) -> answer, or None: declined
        env = {**os.environ, **askpass.env()}    # for the ssh process
        ...
        askpass.asked                            # every Question ssh asked, in order

ssh runs the program named by SSH_ASKPASS for each question when SSH_ASKPASS_REQUIRE is
`force` (OpenSSH 8.4+), and reads the answer from its stdout; a non-zero exit is "no".
The program here is a small script in a private folder (0700) that passes the question
to this process over a Unix socket beside it (the peer's uid checked) and prints the
answer. Nothing is answered by melgui itself: `ask` is the window's dialog, or, in a
headless run with nobody at a terminal, a refusal that is then said in plain words.

A host key question is ssh's own (StrictHostKeyChecking's default, ask): melgui never
passes an option that accepts a key, and a changed key is refused by ssh without a
question (said by `ssh_refusal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import struct
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

SOCKET_ENV = "MELGUI_ASKPASS_SOCKET"
TOKEN_ENV = "MELGUI_ASKPASS_TOKEN"
Kind = Literal["host_key", "secret", "confirm", "text"]
_FINGERPRINT = re.compile(r"(\S+) key fingerprint is (\S+?)\.?(?:\s|$)")

# The helper ssh runs: standard library only, started with -I (nothing of the
# environment's Python paths), so it is quick and reads nothing but its socket.
_HELPER = """
import json, os, socket, sys
prompt = sys.argv[1] if len(sys.argv) > 1 else ""
try:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(os.environ["MELGUI_ASKPASS_SOCKET"])
        sock.sendall(json.dumps({"token": os.environ.get("MELGUI_ASKPASS_TOKEN", ""),
            "prompt": prompt, "hint": os.environ.get("SSH_ASKPASS_PROMPT", "")}).encode()
            + b"\\n")
        data = b""
        while not data.endswith(b"\\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data.decode()).get("answer")
except (OSError, ValueError, KeyError):
    answer = None
if answer is None:
    sys.exit(1)
sys.stdout.write(answer + "\\n")
"""


@dataclass(frozen=True, slots=True)
class Question:
    prompt: str  # ssh's words, whole
    kind: Kind
    key_type: str = ""  # a host key question's key ("ED25519") and fingerprint
    fingerprint: str = ""
    answer: str | None = None  # filled in `Askpass.asked` once answered (None: declined)

    @property
    def secret(self) -> bool:
        """Typed without echo: a passphrase, a password, a PIN."""
        return self.kind == "secret"


def question(prompt: str, hint: str = "") -> Question:
    lowered = prompt.lower()
    if "authenticity of host" in lowered or "continue connecting" in lowered:
        found = _FINGERPRINT.search(prompt)
        key_type, fingerprint = found.groups() if found else ("", "")
        return Question(prompt, "host_key", key_type, fingerprint)
    if hint == "confirm":
        return Question(prompt, "confirm")
    if any(word in lowered for word in ("passphrase", "password", "pin for", "verification code")):
        return Question(prompt, "secret")
    return Question(prompt, "text")


Ask = Callable[[Question], Awaitable[str | None]]


async def decline(question: Question) -> None:
    """Nobody is there to answer: every question is declined (and said afterwards)."""
    return None


def ssh_asks() -> Ask | None:
    """A headless run's answerer: None when there is a terminal (ssh asks on it, as in
    the person's own ssh), else `decline` (a question is refused, then said)."""
    try:
        with open("/dev/tty", "rb"):
            return None
    except OSError:
        return decline


class Askpass:
    def __init__(self, ask: Ask) -> None:
        self.ask = ask
        self.asked: list[Question] = []
        self._folder: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._token = secrets.token_hex(16)

    async def start(self) -> Askpass:
        folder = Path(tempfile.mkdtemp(prefix="melgui-askpass-"))  # 0700
        self._folder = folder
        helper = folder / "askpass"
        helper.write_text(f"#!{sys.executable} -I\n{_HELPER}")
        helper.chmod(0o700)
        self._server = await asyncio.start_unix_server(self._asked, str(folder / "socket"))
        return self

    def env(self) -> dict[str, str]:
        """What ssh's environment needs for its questions to come here."""
        assert self._folder is not None, "start() first"
        return {
            "SSH_ASKPASS": str(self._folder / "askpass"),
            "SSH_ASKPASS_REQUIRE": "force",
            SOCKET_ENV: str(self._folder / "socket"),
            TOKEN_ENV: self._token,
        }

    async def _asked(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not _same_user(writer):
                return
            line = await reader.readline()
            message = json.loads(line.decode())
            if message.get("token") != self._token:
                return
            asked = question(str(message.get("prompt", "")), str(message.get("hint", "")))
            answer = await self.ask(asked)
            self.asked.append(
                Question(asked.prompt, asked.kind, asked.key_type, asked.fingerprint, answer)
            )
            writer.write(json.dumps({"answer": answer}).encode() + b"\n")
            await writer.drain()
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    async def __aenter__(self) -> Askpass:
        return await self.start()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _same_user(writer: asyncio.StreamWriter) -> bool:
    sock = writer.get_extra_info("socket")
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return False
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return bool(uid == os.getuid())


def ssh_refusal(label: str, host: str, said: list[str], asked: list[Question]) -> str | None:
    """Why ssh refused, in plain words, when a host key or a question was the reason."""
    text = "\n".join(said)
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in text or "has changed and you" in text:
        # ssh names the file and the host as they are written there.
        removal = next(
            (line.strip() for line in said if "ssh-keygen" in line and " -R " in line),
            f"ssh-keygen -R {host}",
        )
        return (
            f"the host key of {label} has changed since it was accepted, so ssh refused to "
            "connect: someone may be intercepting the connection, or the machine was "
            "reinstalled. If you expect the change, remove the old key "
            f"(`{removal}`) and connect again to be asked about the new one."
        )
    host_keys = [q for q in asked if q.kind == "host_key"]
    if host_keys and host_keys[-1].answer is None:
        key = host_keys[-1]
        return (
            f"{label}'s host key ({key.key_type} {key.fingerprint}) is not known here, and it "
            "was not accepted, so nothing connected. Answer ssh's question to trust it "
            f"(in the window, or once with `ssh {host}` in a terminal)."
        )
    if host_keys and host_keys[-1].answer not in (None, "yes", host_keys[-1].fingerprint):
        return f"{label}'s host key was not accepted (the answer was no): nothing connected"
    secrets_asked = [q for q in asked if q.secret]
    if secrets_asked and secrets_asked[-1].answer is None:
        return (
            f"ssh asked for {_what(secrets_asked[-1].prompt)} to log in to {label}, and it was "
            "not given; nothing connected"
        )
    if "Host key verification failed" in text:
        return (
            f"ssh could not verify {label}'s host key and did not connect (no question could "
            "be asked: connect once in a terminal, or open the folder in the window)"
        )
    return None


def _what(prompt: str) -> str:
    lowered = prompt.lower()
    if "passphrase" in lowered:
        return "a key's passphrase"
    if "password" in lowered:
        return "a password"
    return "an answer"
