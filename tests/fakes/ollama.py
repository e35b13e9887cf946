"""An Ollama-style server and an Ollama store on disk, as discovery finds them.

`OllamaLike` is a real HTTP server on 127.0.0.1 (ephemeral port) answering what Ollama
answers: `GET /` ("Ollama is running"), `GET /api/tags` and the OpenAI-compatible
`GET /v1/models`. `silent=True` accepts connections and never answers (a hung server).
`write_ollama_store` lays out manifests and `sha256-…` blobs as Ollama keeps them.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

MODEL_LAYER = "application/vnd.ollama.image.model"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        models = self.server.models
        if self.path == "/":
            self._send(200, b"Ollama is running", "text/plain")
        elif self.path == "/api/tags":
            tags = {"models": [{"name": name, "model": name} for name in models]}
            self._send(200, json.dumps(tags).encode(), "application/json")
        elif self.path == "/v1/models":
            data = [{"id": name, "object": "model", "owned_by": "library"} for name in models]
            body = {"object": "list", "data": data}
            self._send(200, json.dumps(body).encode(), "application/json")
        else:
            self._send(404, b"404 page not found", "text/plain")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: list[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models = models


class OllamaLike:
    """`with OllamaLike(["llama3.2:1b"]) as server: server.port`."""

    def __init__(self, models: list[str], *, silent: bool = False) -> None:
        self.models = models
        self.silent = silent
        self._server: _Server | None = None
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def __enter__(self) -> Self:
        if self.silent:  # listens, accepts into the backlog, never reads or answers
            self._socket = socket.socket()
            self._socket.bind(("127.0.0.1", 0))
            self._socket.listen(8)
            self.port = int(self._socket.getsockname()[1])
            return self
        self._server = _Server(self.models)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._socket is not None:
            self._socket.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)


def write_ollama_store(root: Path, models: Mapping[str, bytes]) -> dict[str, Path]:
    """Ollama's layout under `root` for each `name:tag` (or `namespace/name:tag`) and
    its model bytes; returns each name's blob path."""
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for full_name, content in models.items():
        name, tag = full_name.split(":")
        namespace, model = name.split("/") if "/" in name else ("library", name)
        digest = hashlib.sha256(content).hexdigest()
        blob = blobs / f"sha256-{digest}"
        blob.write_bytes(content)
        config = blobs / f"sha256-{hashlib.sha256(full_name.encode()).hexdigest()}"
        config.write_text("{}")
        manifest = root / "manifests" / "registry.ollama.ai" / namespace / model / tag
        manifest.parent.mkdir(parents=True, exist_ok=True)
        layers = [
            {"mediaType": MODEL_LAYER, "digest": f"sha256:{digest}", "size": len(content)},
            {"mediaType": "application/vnd.ollama.image.license", "digest": "sha256:00"},
        ]
        manifest.write_text(
            json.dumps(
                {
                    "schemaVersion": 2,
                    "config": {"digest": "sha256:" + config.name[7:]},
                    "layers": layers,
                }
            )
        )
        paths[full_name] = blob
    return paths
