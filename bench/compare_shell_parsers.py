"""tree-sitter's bash grammar against bashlex on the approval test table's commands.

    pip install bashlex   # GPLv3: for this comparison only, never a melgui dependency
    python bench/compare_shell_parsers.py

Counts the command lines each parser cannot read. A valid line a parser rejects would
be asked for no reason; an invalid one it accepts would be guessed at. The result is the
reason shell_parse.py uses tree-sitter.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from melgui.core.rules.shell_parse import parse_shell  # noqa: E402

TABLE = ROOT / "tests" / "core" / "agent" / "test_command_table.py"
INVALID = {"echo 'unterminated", "ls &&"}  # the table's two broken lines


def table_commands() -> list[str]:
    for node in ast.parse(TABLE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "TABLE":
            assert node.value is not None
            return [row[0] for row in ast.literal_eval(node.value)]
    raise SystemExit(f"no TABLE in {TABLE}")


def main() -> int:
    commands = table_commands()
    unread = [c for c in commands if parse_shell(c).problem is not None]
    print(f"{len(commands)} command lines, {len(INVALID)} of them invalid shell")
    print(f"tree-sitter: cannot read {len(unread)}: {unread}")
    try:
        import bashlex  # type: ignore[import-not-found]
    except ImportError:
        print("bashlex: not installed (pip install bashlex to compare)")
        return 0
    failed: list[str] = []
    for command in commands:
        try:
            bashlex.parse(command)
        except Exception as exc:  # bashlex raises several unrelated types
            failed.append(f"{command!r} ({type(exc).__name__})")
    valid_failed = [f for f in failed if not any(f.startswith(repr(i)) for i in INVALID)]
    print(f"bashlex: cannot read {len(failed)}, of which {len(valid_failed)} valid:")
    for line in valid_failed:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
