"""Discovery: servers on loopback (a scripted Ollama-style server), and model files on
disk (a fake Ollama store, an LM Studio folder, a Hugging Face cache)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from melgui.core.protocol.transport import FoundServer
from melgui.core.transports.discovery import (
    find_model_files,
    find_servers,
    model_folders,
)
from melgui.core.transports.local.hub import models_dir
from tests.fakes.ollama import OllamaLike, write_ollama_store

MODEL = b"GGUF" + b"\x03\x00\x00\x00" + b"\0" * 56


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_running_server_is_found_with_its_models() -> None:
    with OllamaLike(["llama3.2:1b", "qwen2.5:0.5b"]) as ollama:
        found = await find_servers([("Ollama", ollama.port), ("vLLM", _closed_port())])
    assert found == [
        FoundServer("Ollama", f"http://127.0.0.1:{ollama.port}/v1", ("llama3.2:1b", "qwen2.5:0.5b"))
    ]


async def test_a_hung_server_costs_only_the_timeout_and_is_left_out() -> None:
    with OllamaLike([], silent=True) as hung, OllamaLike(["phi3:mini"]) as ollama:
        found = await find_servers([("LM Studio", hung.port), ("Ollama", ollama.port)], timeout=0.3)
    assert [server.models for server in found] == [("phi3:mini",)]


async def test_something_else_on_the_port_is_not_a_model_server() -> None:
    with socket.socket() as sock:  # a port that accepts and never speaks HTTP
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = int(sock.getsockname()[1])
        assert await find_servers([("vLLM", port)], timeout=0.3) == []


async def test_a_host_name_is_probed_too() -> None:
    with OllamaLike(["x"]) as ollama:
        found = await find_servers([("llama.cpp", ollama.port)], host="localhost")
    assert [(server.name, server.models) for server in found] == [("llama.cpp", ("x",))]


def test_ollama_manifests_lead_to_their_model_blobs(tmp_path: Path) -> None:
    store = tmp_path / "ollama"
    blobs = write_ollama_store(
        store, {"llama3.2:1b": MODEL + b"a", "someone/tiny:q4": MODEL + b"b"}
    )
    (store / "manifests" / "registry.ollama.ai" / "library" / "broken").mkdir()
    (store / "manifests" / "registry.ollama.ai" / "library" / "broken" / "latest").write_text(
        "not json"
    )
    found = find_model_files({"Ollama": [store]})
    assert {(f.source, f.name, f.path) for f in found} == {
        ("Ollama", "llama3.2:1b", str(blobs["llama3.2:1b"].resolve())),
        ("Ollama", "someone/tiny:q4", str(blobs["someone/tiny:q4"].resolve())),
    }
    assert all(f.size == len(MODEL) + 1 for f in found)


def test_a_manifest_whose_blob_is_missing_or_not_gguf_is_skipped(tmp_path: Path) -> None:
    store = tmp_path / "ollama"
    blobs = write_ollama_store(store, {"gone:latest": MODEL, "junk:latest": b"PK\x03\x04zip"})
    blobs["gone:latest"].unlink()
    assert find_model_files({"Ollama": [store]}) == []


def test_lm_studio_and_hugging_face_cache_files(tmp_path: Path) -> None:
    lms = tmp_path / "lmstudio"
    (lms / "lmstudio-community" / "Qwen-0.5B-GGUF").mkdir(parents=True)
    (lms / "lmstudio-community" / "Qwen-0.5B-GGUF" / "qwen-0.5b-q4.gguf").write_bytes(MODEL)
    (lms / "lmstudio-community" / "Qwen-0.5B-GGUF" / "mmproj-qwen.gguf").write_bytes(MODEL)
    (lms / "notes.gguf").write_text("not a model")
    hub = tmp_path / "hub"
    blob = hub / "models--bartowski--SmolLM2-GGUF" / "blobs" / "abc123"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(MODEL)
    snapshot = hub / "models--bartowski--SmolLM2-GGUF" / "snapshots" / "rev1"
    snapshot.mkdir(parents=True)
    os.symlink(blob, snapshot / "SmolLM2-Q8.gguf")
    found = find_model_files({"LM Studio": [lms], "Hugging Face cache": [hub]})
    assert sorted((f.source, f.name) for f in found) == [
        ("Hugging Face cache", "bartowski/SmolLM2-GGUF/SmolLM2-Q8.gguf"),
        ("LM Studio", "lmstudio-community/Qwen-0.5B-GGUF/qwen-0.5b-q4.gguf"),
    ]
    hf = next(f for f in found if f.source == "Hugging Face cache")
    assert hf.path == str(blob.resolve())  # the snapshot link resolved to its blob


def test_model_folders_follow_the_variables_that_move_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    defaults = model_folders({}, home)
    assert defaults["Ollama"][0] == home / ".ollama" / "models"
    assert defaults["LM Studio"][0] == home / ".lmstudio" / "models"
    assert defaults["Hugging Face cache"] == [home / ".cache" / "huggingface" / "hub"]
    assert defaults["Downloaded"] == [models_dir()]  # Settings' downloads, in the data dir
    moved = model_folders({"OLLAMA_MODELS": "/m", "HF_HOME": "/hf"}, home)
    assert moved["Ollama"][0] == Path("/m")
    assert moved["Hugging Face cache"] == [Path("/hf/hub")]
    assert model_folders({"HF_HUB_CACHE": "/c"}, home)["Hugging Face cache"] == [Path("/c")]


def test_missing_folders_find_nothing(tmp_path: Path) -> None:
    assert find_model_files(model_folders({}, tmp_path / "nobody")) == []
