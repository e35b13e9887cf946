"""A Hugging Face hub stand-in: a real HTTP server on 127.0.0.1 that serves files the way
the hub's `resolve` URLs do, for `HF_ENDPOINT`.

`HEAD /<repo>/resolve/<rev>/<file>` answers with the headers `huggingface_hub` reads
(`X-Repo-Commit`, `X-Linked-Etag` = the SHA-256, `X-Linked-Size`); `GET` streams the
file, honouring `Range` (206). Knobs, each a plain attribute:

- `drop_after`: the first full GET sends this many bytes and then closes the connection;
- `sha256`: the checksum it claims (default: the file's real one);
- `gated`: answer 403 `GatedRepo`, as the hub does before a licence is accepted;
- `chunk_pause`: seconds to sleep per 64 KiB sent, so a test can cancel mid-file;
- `ignore_range`: answer a `Range` with the whole file (200), as some CDNs do;
- `chunked`: send a GET's body with `Transfer-Encoding: chunked`, no Content-Length.

Without `drop_after` and `chunk_pause` the body goes out with sendfile, as a real
server's does, so a benchmark measures the client rather than this server.

`requests` records (method, path, Range header) of each request; `file_requests()`
those for a served file.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

CHUNK = 64 * 1024
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        hub = self.server.hub
        hub.requests.append((self.command, self.path, self.headers.get("Range", "")))
        path = hub.files.get(self.path.split("?", 1)[0])
        if hub.gated:
            self._refuse(403, "GatedRepo", "Access to model is restricted.")
            return
        if path is None:
            self._refuse(404, "EntryNotFound", "Entry not found")
            return
        size = path.stat().st_size
        start = 0 if hub.ignore_range else _range_start(self.headers.get("Range", ""))
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("X-Linked-Etag", f'"{hub.sha256_of(path)}"')
        self.send_header("X-Linked-Size", str(size))
        self.send_header("ETag", f'"{hub.sha256_of(path)}"')
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        if body and hub.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunks(path, start)
            return
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        if body:
            self._stream(path, start)

    def _chunks(self, path: Path, start: int) -> None:
        with path.open("rb") as handle:
            handle.seek(start)
            while chunk := handle.read(CHUNK):
                self.wfile.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    def _stream(self, path: Path, start: int) -> None:
        hub = self.server.hub
        limit = None
        with hub.lock:
            if hub.drop_after is not None and start == 0:
                limit, hub.drop_after = hub.drop_after, None
        sent = 0
        with path.open("rb") as handle:
            if limit is None and not hub.chunk_pause:
                self.wfile.flush()
                self.connection.sendfile(handle, start)
                return
            handle.seek(start)
            while chunk := handle.read(CHUNK):
                if limit is not None and sent + len(chunk) > limit:
                    self.wfile.write(chunk[: limit - sent])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.close()  # mid-file, as a dropped connection does
                    return
                self.wfile.write(chunk)
                sent += len(chunk)
                if hub.chunk_pause:
                    time.sleep(hub.chunk_pause)

    def _refuse(self, status: int, code: str, message: str) -> None:
        body = message.encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _range_start(header: str) -> int:
    if not header.startswith("bytes="):
        return 0
    first = header.removeprefix("bytes=").split("-", 1)[0]
    return int(first) if first.isdigit() else 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hub: HubLike) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hub = hub

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-file (a cancel, a full disk) is expected here


class HubLike:
    """`with HubLike({"org/repo": {"file.gguf": path}}) as hub: hub.endpoint`."""

    def __init__(self, repos: dict[str, dict[str, Path]]) -> None:
        self.files = {
            f"/{repo}/resolve/main/{name}": path
            for repo, files in repos.items()
            for name, path in files.items()
        }
        self.requests: list[tuple[str, str, str]] = []
        self.drop_after: int | None = None
        self.sha256: str | None = None
        self.gated = False
        self.chunk_pause = 0.0
        self.ignore_range = False
        self.chunked = False
        self.lock = threading.Lock()
        self._hashes: dict[Path, str] = {}
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def file_requests(self) -> list[tuple[str, str, str]]:
        """The requests for files (huggingface_hub also asks the API for other things)."""
        return [request for request in self.requests if request[1] in self.files]

    def sha256_of(self, path: Path) -> str:
        if self.sha256 is not None:
            return self.sha256
        if path not in self._hashes:
            self._hashes[path] = file_sha256(path)
        return self._hashes[path]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: list[str]) -> None:
    """`python -m tests.fakes.hub REPO FILE...`: serve the files in their own process (so a
    benchmark's client does not share a GIL with the server), print the endpoint, and stop
    when stdin closes."""
    repo, files = argv[0], [Path(name) for name in argv[1:]]
    with HubLike({repo: {path.name: path for path in files}}) as hub:
        for path in files:
            hub.sha256_of(path)  # before the endpoint is known: no client waits on it
        print(hub.endpoint, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1:])
