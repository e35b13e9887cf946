"""Who answers: the model's name and where it runs, for each kind of connection."""

from __future__ import annotations

from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.transports.answerer import gguf_name, who_answers
from melgui.core.transports.local.model import default_model_path


def test_a_gguf_file_is_named_without_its_quantisation() -> None:
    assert gguf_name("/x/SmolLM2-135M-Instruct.Q4_1.gguf") == "SmolLM2-135M-Instruct"
    assert gguf_name("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf") == "qwen2.5-coder-1.5b-instruct"
    assert gguf_name("Qwen3-1.7B-Q8_0.gguf") == "Qwen3-1.7B"
    assert gguf_name("model-f16.gguf") == "model"
    assert gguf_name("/o/blobs/sha256-abc") == "a model file from Ollama's store"


def test_the_built_in_model_is_small_and_on_this_computer() -> None:
    answerer = who_answers(Settings(connection="local"))
    assert answerer.name == "SmolLM2-135M-Instruct"
    assert answerer.where.startswith("on this computer")
    assert answerer.small is (default_model_path() is not None)  # by the file's size


def test_a_big_local_file_is_not_called_small(tmp_path: Path) -> None:
    big = tmp_path / "Qwen3-4B-Q4_K_M.gguf"
    with big.open("wb") as handle:
        handle.truncate(800_000_000)  # sparse: the size is what counts
    answerer = who_answers(Settings(connection="local", local_model_path=str(big)))
    assert (answerer.name, answerer.small) == ("Qwen3-4B", False)


def test_a_server_is_named_with_its_place() -> None:
    ollama = Settings(connection="openai", openai_base_url="http://127.0.0.1:11434/v1")
    assert who_answers(ollama, "qwen2.5:7b").where == "on this computer (Ollama)"
    openai = Settings(connection="openai", openai_base_url="https://api.openai.com/v1")
    assert who_answers(openai, "gpt-4.1").name == "gpt-4.1"
    assert who_answers(openai, "gpt-4.1").where == "at OpenAI"
    relay = Settings(connection="relay", relay_url="https://relay.example.com")
    assert who_answers(relay).where == "through the Mel relay at relay.example.com"
