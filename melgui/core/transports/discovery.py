"""Discovering models and servers: the one place that asks what is available.

- `list_models_text`: the models the current connection offers ("Test connection").
- `context_window`: the chosen model's context window.
- `find_servers`: OpenAI-compatible servers already running on loopback (Ollama, LM
  Studio, llama.cpp, vLLM on their usual ports), each probed with a short timeout.
- `find_model_files`: GGUF files already on disk that the embedded engine can run:
  Ollama's store (manifests naming `sha256-…` blobs), LM Studio's models folder, and
  `*.gguf` in the Hugging Face cache and models downloaded in Settings.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from melgui.core.protocol import bounded_json
from melgui.core.protocol.context_window import UNKNOWN_WINDOW, ContextWindow
from melgui.core.protocol.transport import (
    FoundModelFile,
    FoundServer,
    ModelInfo,
    Transport,
    TransportError,
)
from melgui.core.transports.context_length import fallback_window, kind_from_url, probe_server
from melgui.core.transports.local.hub import models_dir

if TYPE_CHECKING:
    import httpx

GGUF_MAGIC = b"GGUF"
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
PROBE_SECONDS = 0.5
# Name, port: where each server listens unless its user moved it.
KNOWN_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp", 8080),
    ("vLLM", 8000),
)
MAX_FILES_LOOKED_AT = 20_000  # a huge cache folder ends the walk, not the dialog


async def list_models_text(transport: Transport) -> tuple[list[str], str]:
    """For "Test connection": model ids, or ([], the error line)."""
    try:
        models = await transport.list_models()
    except TransportError as exc:
        return [], str(exc)
    except Exception as exc:  # a transport bug must not crash the dialog
        return [], f"{type(exc).__name__}: {exc}"
    return [m.id + ("  (no tools)" if m.supports_tools is False else "") for m in models], ""


# --- context windows ------------------------------------------------------


async def context_window(
    transport: Transport, model: str, *, setting: int | None = None
) -> ContextWindow:
    """The chosen model's window: what the server says, else `setting`, else a guess.

    The relay says nothing of windows: "unknown" unless a setting names one.
    """
    if transport.name == "relay":
        return fallback_window(setting, "relay") if setting else UNKNOWN_WINDOW
    n_ctx = getattr(transport, "n_ctx", None)
    if transport.name == "local" and isinstance(n_ctx, int):
        return ContextWindow(n_ctx, "server", "the embedded model's context", "local")
    base_url = getattr(transport, "base_url", None)
    if transport.name != "openai" or not isinstance(base_url, str):
        return fallback_window(setting)
    try:
        models: list[ModelInfo] | None = await transport.list_models()
    except Exception:  # a model list that fails says nothing of the window
        models = None
    # httpx and the HTTP helpers load with the first server asked: a host whose
    # connection is the relay or a local model never asks.
    import httpx

    from melgui.core.transports.http.bulk import leg_client
    from melgui.core.transports.http.replies import auth_headers

    headers = auth_headers(getattr(transport, "api_key", None))
    client = getattr(transport, "client", None)
    if isinstance(client, httpx.AsyncClient):  # the transport's: its connection, kept alive
        found = await probe_server(client, base_url, model, models, headers)
    else:
        async with leg_client() as client:
            found = await probe_server(client, base_url, model, models, headers)
    if found is not None and (found.source == "server" or not setting):
        return found
    return fallback_window(setting, found.server if found else kind_from_url(base_url))


# --- servers on loopback ---------------------------------------------------------------


async def _probe(client: httpx.AsyncClient, name: str, host: str, port: int) -> FoundServer | None:
    import httpx  # the client's: loaded with it (http/tls.py)

    base_url = f"http://{host}:{port}/v1"
    try:
        response = await client.get(f"{base_url}/models")
        body = bounded_json.loads(response.content) if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None  # something else listens there
    models = tuple(
        str(item["id"]) for item in body["data"] if isinstance(item, dict) and item.get("id")
    )
    return FoundServer(name, base_url, models)


async def find_servers(
    servers: Iterable[tuple[str, int]] = KNOWN_SERVERS,
    *,
    host: str = "127.0.0.1",
    timeout: float = PROBE_SECONDS,
) -> list[FoundServer]:
    """The servers that answer `GET /v1/models` with a model list, in the order given;
    all are probed at once, so this takes at most about `timeout`."""
    from melgui.core.transports.http.tls import async_client  # ssl: when first asked

    async with async_client(timeout=timeout, trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, name, host, port) for name, port in servers))
    return [server for server in found if server is not None]


# --- model files on disk ---------------------------------------------------------------


def _is_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def _found(source: str, name: str, path: Path) -> FoundModelFile | None:
    if not _is_gguf(path):
        return None
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return FoundModelFile(source, name, str(path.resolve()), size)


def ollama_models(models_dir: Path) -> list[FoundModelFile]:
    """Ollama's store: manifests/<registry>/<namespace>/<model>/<tag> name the blob of
    their model layer, kept as blobs/sha256-<hex>."""
    manifests = models_dir / "manifests"
    found: list[FoundModelFile] = []
    for manifest in sorted(p for p in manifests.rglob("*") if p.is_file()):
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
        except (OSError, ValueError, AttributeError):
            continue
        digest = next(
            (
                layer.get("digest", "")
                for layer in layers
                if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER
            ),
            "",
        )
        if not digest.startswith("sha256:"):
            continue
        parts = manifest.relative_to(manifests).parts
        model, tag = parts[-2:] if len(parts) >= 2 else (parts[-1], "latest")
        namespace = parts[-3] if len(parts) >= 3 and parts[-3] != "library" else ""
        name = f"{namespace + '/' if namespace else ''}{model}:{tag}"
        blob = models_dir / "blobs" / digest.replace(":", "-")
        model_file = _found("Ollama", name, blob)
        if model_file is not None:
            found.append(model_file)
    return found


def gguf_files(source: str, root: Path) -> list[FoundModelFile]:
    """`*.gguf` under `root` (symlinks followed, as the Hugging Face cache needs), without
    multimodal projector files, which are no language model."""
    found: list[FoundModelFile] = []
    looked_at = 0
    for folder, _dirs, files in os.walk(root, followlinks=True):
        looked_at += len(files)
        if looked_at > MAX_FILES_LOOKED_AT:
            break
        for file_name in sorted(files):
            if not file_name.lower().endswith(".gguf") or "mmproj" in file_name.lower():
                continue
            path = Path(folder) / file_name
            model_file = _found(source, _display_name(root, path), path)
            if model_file is not None:
                found.append(model_file)
    return found


def _display_name(root: Path, path: Path) -> str:
    """`org/name/file.gguf` for the Hugging Face cache, the path below `root` otherwise."""
    parts = path.relative_to(root).parts
    if parts and parts[0].startswith("models--"):
        repo = parts[0].removeprefix("models--").replace("--", "/")
        return f"{repo}/{parts[-1]}"
    return "/".join(parts)


def model_folders(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> dict[str, list[Path]]:
    """Where each tool keeps its models, honouring the variables that move them."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    hf_home = Path(env.get("HF_HOME") or home / ".cache" / "huggingface")
    return {
        "Ollama": [
            Path(env["OLLAMA_MODELS"]) if env.get("OLLAMA_MODELS") else home / ".ollama" / "models",
            Path("/usr/share/ollama/.ollama/models"),  # the Linux service's own store
        ],
        "LM Studio": [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"],
        "Hugging Face cache": [Path(env.get("HF_HUB_CACHE") or hf_home / "hub")],
        "Downloaded": [models_dir()],
    }


def find_model_files(folders: Mapping[str, list[Path]] | None = None) -> list[FoundModelFile]:
    """Every GGUF model found in `folders` (default: `model_folders()`), each file once."""
    folders = model_folders() if folders is None else folders
    found: list[FoundModelFile] = []
    for source, roots in folders.items():
        for root in roots:
            if not root.is_dir():
                continue
            if source == "Ollama":
                found += ollama_models(root)
            else:
                found += gguf_files(source, root)
    unique: dict[str, FoundModelFile] = {}
    for model_file in found:
        unique.setdefault(model_file.path, model_file)
    return list(unique.values())
