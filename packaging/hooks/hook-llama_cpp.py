"""PyInstaller hook: llama-cpp-python opens its libraries with ctypes from llama_cpp/lib."""

from __future__ import annotations

from pathlib import Path

from PyInstaller.utils.hooks import get_package_paths

_, _package_dir = get_package_paths("llama_cpp")
_lib = Path(_package_dir) / "lib"

# Only the names ctypes opens (libllama.so, libggml.so, …); their versioned sonames come in
# through PyInstaller's dependency analysis. libmtmd serves multimodal chat, unused here.
binaries = [
    (str(path), "llama_cpp/lib")
    for path in sorted(_lib.iterdir())
    if path.suffix in (".so", ".dylib", ".dll") and not path.name.startswith(("libmtmd", "mtmd"))
]
excludedimports = ["llama_cpp.server"]
