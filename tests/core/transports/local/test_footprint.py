"""What `melgui exec` loads before the local model: no MCP SDK and no language-server
client while no server is configured. They were 45 MB and about 1 s of CPU of the
newcomer's local turn, whose peak must stay under 300 MB."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("mcp", "mcp_types", "lsprotocol", "pygls")


def test_exec_loads_no_mcp_sdk_and_no_lsp_client() -> None:
    probe = (
        "import json, sys\n"
        "import melgui.headless\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert loaded == [], f"{loaded} load with exec: import them where a server is used"
