"""A short list of better local models than the shipped SmolLM2-135M, to download.

Each is an instruct model that its card says was trained for tool (function) calling,
in one GGUF file (no split files), from a repository that is not gated. Sizes are the
file's size on its repository page, rounded; the download reads the exact size and the
SHA-256 from the hub. RAM is what llama.cpp needs to run it with melgui's context (the
file, mapped, plus the KV cache and work buffers), rounded up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

GB = 1_000_000_000


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One downloadable model: where it is on the hub, what it costs, why it is listed."""

    title: str
    repo: str
    filename: str
    licence: str
    licence_url: str
    size_bytes: int
    ram_bytes: int
    why: str

    @property
    def page_url(self) -> str:
        return f"https://huggingface.co/{self.repo}"


CATALOG: tuple[CatalogModel, ...] = (
    CatalogModel(
        "Qwen2.5-Coder 0.5B Instruct (Q8_0)",
        "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        "qwen2.5-coder-0.5b-instruct-q8_0.gguf",
        "Apache-2.0",
        "https://www.apache.org/licenses/LICENSE-2.0",
        int(0.68 * GB),
        int(1.2 * GB),
        "the smallest coder model with tool calls in its chat template; quick on 2 cores",
    ),
    CatalogModel(
        "Qwen2.5-Coder 1.5B Instruct (Q4_K_M)",
        "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "Apache-2.0",
        "https://www.apache.org/licenses/LICENSE-2.0",
        int(1.12 * GB),
        int(2.0 * GB),
        "reads and edits code well for its size; the best choice under 2 GB of RAM",
    ),
    CatalogModel(
        "Qwen3 1.7B (Q8_0)",
        "Qwen/Qwen3-1.7B-GGUF",
        "Qwen3-1.7B-Q8_0.gguf",
        "Apache-2.0",
        "https://www.apache.org/licenses/LICENSE-2.0",
        int(1.83 * GB),
        int(2.8 * GB),
        "newer general model, strong at tool calls for its size",
    ),
    CatalogModel(
        "Llama 3.2 3B Instruct (Q4_K_M)",
        "bartowski/Llama-3.2-3B-Instruct-GGUF",
        "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        "Llama 3.2 Community License",
        "https://www.llama.com/llama3_2/license/",
        int(2.02 * GB),
        int(3.5 * GB),
        "Meta's small model, trained for tool use (the official repository is gated)",
    ),
    CatalogModel(
        "Qwen3 4B (Q4_K_M)",
        "Qwen/Qwen3-4B-GGUF",
        "Qwen3-4B-Q4_K_M.gguf",
        "Apache-2.0",
        "https://www.apache.org/licenses/LICENSE-2.0",
        int(2.5 * GB),
        int(4.0 * GB),
        "the most capable here below 8 GB of RAM; slow on 2 cores",
    ),
    CatalogModel(
        "Qwen2.5-Coder 7B Instruct (Q4_K_M)",
        "bartowski/Qwen2.5-Coder-7B-Instruct-GGUF",
        "Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf",
        "Apache-2.0",
        "https://www.apache.org/licenses/LICENSE-2.0",
        int(4.68 * GB),
        int(6.5 * GB),
        "a real coding assistant; needs a fast machine (one file, where the official "
        "repository splits it in two)",
    ),
)


def machine_memory() -> int:
    """This computer's physical memory in bytes (0 when the system will not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def models_that_fit(
    memory: int, catalog: tuple[CatalogModel, ...] = CATALOG
) -> tuple[list[CatalogModel], list[CatalogModel]]:
    """(the models this much memory can run, the ones it cannot); unknown memory fits all."""
    if memory <= 0:
        return list(catalog), []
    fits = [model for model in catalog if model.ram_bytes <= memory]
    return fits, [model for model in catalog if model.ram_bytes > memory]


def size_text(size: int) -> str:
    return f"{size / GB:.1f} GB" if size >= GB else f"{size / 1e6:.0f} MB"
