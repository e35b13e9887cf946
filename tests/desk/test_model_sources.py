"""What the Settings dialog asks the desk about models, against real loopback servers
and real files: a connection's model list, and what is already on this computer."""

from __future__ import annotations

import socket
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.desk.model_sources import list_connection_models, models_on_this_computer
from tests.fakes.ollama import OllamaLike, write_ollama_store

MODEL = b"GGUF" + b"\x03\x00\x00\x00" + b"\0" * 56


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_connection_lists_its_models_or_says_why_not() -> None:
    with OllamaLike(["llama3.2:1b", "qwen2.5:0.5b"]) as ollama:
        url = f"http://127.0.0.1:{ollama.port}/v1"
        models, error = await list_connection_models(
            Settings(connection="openai", openai_base_url=url), None
        )
    assert error == "" and [m.split("  (")[0] for m in models] == ["llama3.2:1b", "qwen2.5:0.5b"]

    down = f"http://127.0.0.1:{_closed_port()}/v1"
    models, error = await list_connection_models(
        Settings(connection="openai", openai_base_url=down), None
    )
    assert models == [] and error  # one line saying why, not an exception

    models, error = await list_connection_models(Settings(connection="relay", relay_url=""), "k")
    assert models == [] and "Settings" in error  # a setting that cannot work says what to fix


async def test_servers_and_files_on_this_computer_are_found_together(tmp_path: Path) -> None:
    blobs = write_ollama_store(tmp_path / "ollama", {"qwen2.5:0.5b": MODEL})
    with OllamaLike(["phi3:mini"]) as ollama:
        servers, files = await models_on_this_computer(
            [("Ollama", ollama.port), ("vLLM", _closed_port())],
            {"Ollama": [tmp_path / "ollama"]},
        )
    assert [(s.name, s.models) for s in servers] == [("Ollama", ("phi3:mini",))]
    assert [(f.source, f.name, f.path) for f in files] == [
        ("Ollama", "qwen2.5:0.5b", str(blobs["qwen2.5:0.5b"].resolve()))
    ]
