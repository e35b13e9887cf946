"""The GET of a model file from the hub, read as fast as the connection gives it.

`huggingface_hub`'s HTTP session sends the request (its headers and token, redirects,
TLS, proxies, retries on 429) and reads the answer's head; its errors are the hub's.
A plain body (HTTP/1.1, a Content-Length, no encoding) is then read straight off the
connection's network stream a megabyte at a time: through h11, as `http_get` reads it,
every byte is copied four more times in Python (1 GB cost the reading thread 0.9 s of
CPU against 0.3 s read straight). Any other body goes through httpx's own iterator.
A connection dropped mid-file is asked again from where the file ends, and a server
that ignores that Range (200, not 206) starts the file again.

The bytes are written on the reading thread and hashed on a second one (hashlib lets
go of the GIL), beginning with the bytes a resumed file already has, so the SHA-256
check costs no second read of the file.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpcore2
import httpx2
from huggingface_hub import constants
from huggingface_hub.utils import hf_raise_for_status, http_stream_backoff

READ_BYTES = 1 << 20
HASH_CHUNK = 1 << 20
# Pieces go to the hashing thread a megabyte at a time, at most 16 waiting: a starved
# hasher slows the download rather than holding the file in memory.
HASH_BATCH = 1 << 20
HASH_BACKLOG = 16
# Tries in a row that bring no new byte before a dropped download gives up.
RETRIES = 5
RETRY_PAUSE = 1.0
# What a dropped or stalled connection raises, above and below httpx.
TRANSIENT = (
    httpx2.ConnectError,
    httpx2.TimeoutException,
    httpx2.NetworkError,
    httpx2.RemoteProtocolError,
    httpcore2.NetworkError,
    httpcore2.TimeoutException,
)


class PartFile:
    """The `.part` file, appended to on the calling thread and hashed on a second one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.size = os.fstat(self._fd).st_size
        self._start_hashing(self.size)

    def _start_hashing(self, kept: int) -> None:
        self._digest = hashlib.sha256()
        self._batch: list[bytes] = []
        self._batched = 0
        self._failed: BaseException | None = None
        self._abandoned = False
        self._batches: queue.Queue[list[bytes] | None] = queue.Queue(HASH_BACKLOG)
        self._thread = threading.Thread(
            target=self._hash, args=(kept,), name="melgui-download-hash", daemon=True
        )
        self._thread.start()

    def _hash(self, kept: int) -> None:
        try:
            with self.path.open("rb") as handle:
                while kept and (chunk := handle.read(min(HASH_CHUNK, kept))):
                    if self._abandoned:
                        break
                    self._digest.update(chunk)
                    kept -= len(chunk)
        except OSError as exc:
            self._failed = exc
        while (batch := self._batches.get()) is not None:
            if self._failed is None and not self._abandoned:  # else it only drains
                for piece in batch:
                    self._digest.update(piece)

    def write(self, piece: bytes) -> None:
        view = memoryview(piece)
        while view:
            view = view[os.write(self._fd, view) :]
        self.size += len(piece)
        self._batch.append(piece)
        self._batched += len(piece)
        if self._batched >= HASH_BATCH:
            self._hand_over()

    def _hand_over(self) -> None:
        self._batches.put(self._batch)
        self._batch, self._batched = [], 0

    def _stop_hashing(self) -> str:
        self._hand_over()
        self._batches.put(None)
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        return self._digest.hexdigest()

    def restart(self) -> None:
        """Empty the file: the server sends it from its first byte."""
        self._stop_hashing()
        os.ftruncate(self._fd, 0)
        self.size = 0
        self._start_hashing(0)

    def close(self) -> str:
        """The SHA-256 of the whole file; the file is closed."""
        try:
            return self._stop_hashing()
        finally:
            os.close(self._fd)

    def abandon(self) -> None:
        """Close the file without finishing its hash (a cancel need not wait for it)."""
        self._abandoned = True
        self._batch = []
        try:
            self._stop_hashing()
        except OSError:
            pass  # the download's own error is the one to tell
        finally:
            os.close(self._fd)


def fetch(
    url: str,
    part: PartFile,
    total: int,
    headers: dict[str, str],
    on_bytes: Callable[[int], None],
) -> None:
    """Append `url`'s bytes to `part` until it holds `total`; `on_bytes(part.size)` after
    each piece (it may raise to stop). A dropped connection is resumed with a Range."""
    failures = 0
    while part.size < total:
        before = part.size
        try:
            _get(url, part, headers, on_bytes)
        except TRANSIENT:
            failures = 1 if part.size > before else failures + 1
            if failures > RETRIES:
                raise
            if part.size == before:
                time.sleep(RETRY_PAUSE)  # nothing came: give the network a moment
            continue
        break
    if part.size != total:
        raise OSError(f"the hub sent {part.size} bytes of a file of {total}")


def _get(
    url: str, part: PartFile, headers: dict[str, str], on_bytes: Callable[[int], None]
) -> None:
    asked = dict(headers)
    if part.size:
        asked["Range"] = f"bytes={part.size}-"
    with http_stream_backoff(
        "GET",
        url,
        headers=asked,
        timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT,
        retry_on_exceptions=(),
        retry_on_status_codes=(408, 429),
    ) as response:
        hf_raise_for_status(response)
        if part.size and response.status_code != 206:
            part.restart()
        for piece in _body(response):
            part.write(piece)
            on_bytes(part.size)


def _body(response: httpx2.Response) -> Iterator[bytes]:
    length = response.headers.get("Content-Length", "")
    stream = response.extensions.get("network_stream")
    plain = (
        response.http_version == "HTTP/1.1"
        and length.isdigit()
        and isinstance(stream, httpcore2.NetworkStream)
        and response.headers.get("Content-Encoding", "identity") == "identity"
        and "Transfer-Encoding" not in response.headers
    )
    if not plain:
        yield from response.iter_bytes()
        return
    assert isinstance(stream, httpcore2.NetworkStream)
    left = int(length)
    head_reads = response.iter_raw()
    # h11 hands over, as one piece, all the body it read along with the head; the rest
    # is still on the connection. Closed with its body unread by h11, the connection is
    # not reused.
    first = next(head_reads, b"")
    left -= len(first)
    if first:
        yield first
    while left > 0:
        piece = stream.read(min(left, READ_BYTES), timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT)
        if not piece:
            raise httpx2.RemoteProtocolError(f"the connection closed {left} bytes early")
        left -= len(piece)
        yield piece
