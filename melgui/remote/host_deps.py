"""What melgui's host needs on a remote machine: melgui's dependencies without Qt.

`melgui host --stdio` runs melgui/host, melgui/desk, melgui/core and melgui/tools, none of
which imports PySide6 or qasync (import-linter holds core and tools to that), so the
remote install leaves them out: no Qt wheels (about 80 MB) are uploaded.

    HOST_REQUIREMENTS     # the requirement strings, as pyproject's dependencies spell them

This is the one list the wheels for a remote are fetched from (melgui/remote/wheels.py).
tests/remote/test_install_deps.py fails when it and pyproject's dependencies drift apart:
each entry here is one of pyproject's, and each of pyproject's but the Qt ones is here.
"""

from __future__ import annotations

# The window's own: Qt and the Qt event loop for asyncio.
WINDOW_ONLY: frozenset[str] = frozenset({"pyside6-essentials", "qasync"})

HOST_REQUIREMENTS: tuple[str, ...] = (
    "httpx>=0.27",
    "pydantic>=2.6",
    "markdown>=3.5",
    "Pygments>=2.17",
    "platformdirs>=4",
    "keyring>=24",
    "pyavt==0.1.2",
    "ripgrep==14.1.0",
    "tree-sitter>=0.25,<0.26",
    "tree-sitter-bash>=0.25,<0.26",
    "mcp>=2.3,<3",
    "pathspec>=1.0,<2",
    "wcmatch>=12.0,<13",
    "pygls>=2.1,<3",
    "lsprotocol==2025.0.0",
    "cattrs>=23.1,<26",
    "bracex>=2.4,<4",
    "agent-client-protocol>=0.12,<0.13",
    "jeepney>=0.8,<1; sys_platform == 'linux'",
)
