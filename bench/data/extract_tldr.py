"""Make tldr_commands.txt: example command lines of tldr-pages' English pages.

    python bench/data/extract_tldr.py /path/to/tldr-checkout [COMMIT]

Every example line (a backticked line after "- description:") of the pages of Unix-like
platforms (pages/common, linux, osx, the BSDs, android, sunos; not windows), with the
`{{placeholder}}` braces removed (`{{path/to/file}}` → `path/to/file`) and option
alternatives reduced to the first (`{{[-v|--verbose]}}` → `-v`); then every second line
in a stable order, so the file stays small. tldr-pages is CC-BY 4.0 (see
tldr_commands.LICENSE.md).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

EXAMPLE = re.compile(r"^`(.+)`$")
CHOICE = re.compile(r"\{\{\[([^|\]]*)\|[^\]]*\]\}\}")
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
KEEP_EVERY = 2
PLATFORMS = ("common", "linux", "osx", "android", "freebsd", "netbsd", "openbsd", "sunos")


def commands(root: Path) -> list[str]:
    out: list[str] = []
    pages = (p for platform in PLATFORMS for p in (root / "pages" / platform).glob("*.md"))
    for page in sorted(pages):
        for line in page.read_text(encoding="utf-8").splitlines():
            match = EXAMPLE.match(line.strip())
            if match:
                command = PLACEHOLDER.sub(r"\1", CHOICE.sub(r"\1", match.group(1))).strip()
                if command and "\n" not in command:
                    out.append(command)
    unique = list(dict.fromkeys(out))
    return unique[::KEEP_EVERY]


def main() -> int:
    root = Path(sys.argv[1])
    lines = commands(root)
    target = Path(__file__).with_name("tldr_commands.txt")
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} commands written to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
