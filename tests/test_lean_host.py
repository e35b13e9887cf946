"""What the melgui host leaves out while it waits (lean_start.py), and gets back when
needed: asyncio imported without ssl gets ssl when anything imports it later (a TLS
server and client through asyncio's own TLS work as in a process that imported ssl
first), and the C heap's freed memory is given back to the system."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.core.transports.http.test_tls import _self_signed

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
from melgui import lean_start

lean_start.asyncio_without_ssl()
import asyncio

assert "asyncio" in sys.modules and "ssl" not in sys.modules, "ssl came with asyncio"
import ssl  # as httpx imports it, with a session's first client

cert, key = sys.argv[1], sys.argv[2]


async def main() -> None:
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=served)
    port = server.sockets[0].getsockname()[1]
    client = ssl.create_default_context(cafile=cert)
    reader, writer = await asyncio.open_connection("localhost", port, ssl=client)
    writer.write(b"over tls\\n")
    await writer.drain()
    line = (await reader.readline()).decode().strip()
    print(line, writer.get_extra_info("ssl_object").version())
    writer.close()
    server.close()


asyncio.run(main())
"""


def test_asyncio_imported_without_ssl_speaks_tls_once_ssl_is_imported(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(cert), str(key)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["over", "tls"]
    assert result.stdout.split()[2].startswith("TLSv1")


GIVE_BACK = """
import sys
from melgui import lean_start


def resident() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


held = [bytes(4000) for _ in range(20_000)]  # 80 MB from the C heap (not Python's arenas)
top = bytes(4000)  # kept: what is freed below is not at the heap's top
del held
before = resident()
lean_start.give_back_free_memory()
print(before - resident())
"""


def test_freed_memory_is_given_back_to_the_system() -> None:
    """What the process freed in the middle of its heap stays resident until the host
    gives it back (it does when it goes quiet: server.py)."""
    result = subprocess.run(
        [sys.executable, "-c", GIVE_BACK],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 40_000  # KiB, of the 80 MB freed


SECRETS_ON_FIRST_USE = """
import sys
import threading
from melgui import lean_start

lean_start.secrets_on_first_use()
from pydantic import SecretStr

from melgui.core.config.settings import Settings

Settings()  # a model's class: pydantic's types, which import secrets
assert "secrets" in sys.modules
print(sorted(m for m in ("hmac", "hashlib", "_hashlib") if m in sys.modules))

import secrets

start = threading.Barrier(8)
tokens = []


def first_use() -> None:
    start.wait()
    tokens.append(secrets.token_hex(8))  # the first touch, from 8 threads at once


threads = [threading.Thread(target=first_use) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(set(tokens)), secrets.compare_digest("a", "a"), "_hashlib" in sys.modules)
print(SecretStr("k") == SecretStr("k"), SecretStr("k") == SecretStr("j"))
"""


def test_the_host_runs_secrets_on_first_use_so_pydantic_loads_no_openssl() -> None:
    """pydantic (2.14 and later) imports secrets, and so hmac and OpenSSL's _hashlib, with
    every model's class; in the host secrets runs once used, here by 8 threads at once,
    and then behaves as secrets (pydantic's secret values compare through it)."""
    result = subprocess.run(
        [sys.executable, "-c", SECRETS_ON_FIRST_USE],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "8 True True", "True False"]


FIRST_CHECKPOINT = """
import asyncio
import sys
from pathlib import Path

from melgui import lean_start

lean_start.secrets_on_first_use()  # as the host (pydantic's secrets load OpenSSL otherwise)
from melgui.core.store.checkpoints.checkpointer import Checkpointer


async def main() -> None:
    checkpoints = Checkpointer(sys.argv[1], data_folder=Path(sys.argv[2]))
    checkpoints.warm()  # as a session opening on the folder does
    assert checkpoints.warming is not None
    await checkpoints.warming
    print(checkpoints.repo.git_dir)
    print("_hashlib" in sys.modules)


asyncio.run(main())
"""


def test_a_new_folders_first_checkpoint_loads_no_openssl(tmp_path: Path) -> None:
    """A session opening on a new folder takes its first snapshot in the background: its
    commit id comes from Python's own sha1, not OpenSSL's, and git reads it as its own."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hello')\n")
    (project / "README.md").write_text("# project\n")
    result = subprocess.run(
        [sys.executable, "-c", FIRST_CHECKPOINT, str(project), str(tmp_path / "data")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    git_dir, openssl = result.stdout.splitlines()
    assert openssl == "False"
    git = ["git", "--git-dir", git_dir]
    head = subprocess.run([*git, "cat-file", "-t", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == "commit", head.stderr
    checked = subprocess.run([*git, "fsck", "--no-dangling"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
