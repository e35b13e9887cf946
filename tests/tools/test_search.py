"""grep and find_files on both engines: same results, ignore rules, caps, bad regexes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.context import ToolContext
from melgui.tools.search.project_search import FIND_FILES_TOOL, GREP_TOOL
from melgui.tools.search.ripgrep import find_ripgrep
from melgui.tools.settings import SearchEngine, ToolSettings
from melgui.tools.workspace import Workspace

ENGINES: list[SearchEngine] = ["ripgrep", "python"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> SearchEngine:
    if request.param == "ripgrep" and find_ripgrep() is None:
        pytest.skip("no rg executable")
    return request.param


def make_tree(root: Path) -> None:
    files = {
        "README.md": "# Demo\nneedle in the readme\n",
        "src/app.py": "import os\n\ndef needle():\n    return 'needle'\n",
        "src/util/helpers.py": "NEEDLE = 1\nneedle_count = 2\n",
        "src/util/notes.txt": "no match here\r\nneedle with crlf\r\n",
        "src/no_newline.txt": "ends with needle",
        "src/unicode.txt": "café needle ünïcode\n",
        "build/out.py": "needle in build output\n",
        "logs/app.log": "needle in a log\n",
        "logs/keep.log": "needle kept by negation\n",
        "docs/guide.md": "needle in docs\n",
        "docs/tmp/scratch.md": "needle in docs tmp\n",
        ".hidden/secret.txt": "needle hidden\n",
        ".env": "needle=hidden file\n",
        "src/.secret.py": "needle = 'hidden file in a plain folder'\n",
        "long.txt": "start " + "z" * 10_000 + " needle " + "z" * 100 + "\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    (root / "data.bin").write_bytes(b"needle\x00\x01\x02 needle")
    (root / ".gitignore").write_text("# comment\nbuild/\n*.log\n!keep.log\n/long_ignored.txt\n")
    (root / "docs" / ".gitignore").write_text("tmp/\n")
    (root / "long_ignored.txt").write_text("needle\n")
    os.mkfifo(root / "src" / "pipe.py")  # never opened: reading it would block forever
    os.symlink(root / "README.md", root / "readme_link.md")
    os.symlink(root / "src", root / "src_link")


async def run_grep(workspace: Workspace, engine: SearchEngine, pattern: str, **kw: object) -> str:
    outcome = await GREP_TOOL.run(
        ToolContext(workspace, ToolSettings(search_engine=engine, **kw)), {"pattern": pattern}
    )  # type: ignore[arg-type]
    assert outcome.status == "ok", outcome.content
    return outcome.content


async def test_grep_respects_ignores_hidden_binary_and_links(
    workspace: Workspace, engine: SearchEngine
) -> None:
    make_tree(workspace.root)
    text = await run_grep(workspace, engine, "needle")
    lines = text.splitlines()
    assert lines[0] == "10 matching lines in 9 files:"
    assert lines[1:] == [
        "README.md:2:needle in the readme",
        "docs/guide.md:1:needle in docs",
        "logs/keep.log:1:needle kept by negation",
        "long.txt:1:start " + "z" * 294 + " …[line cut]",
        "src/app.py:3:def needle():",
        "src/app.py:4:    return 'needle'",
        "src/no_newline.txt:1:ends with needle",
        "src/unicode.txt:1:café needle ünïcode",
        "src/util/helpers.py:2:needle_count = 2",
        "src/util/notes.txt:2:needle with crlf",
    ]


async def test_engines_agree(workspace: Workspace) -> None:
    if find_ripgrep() is None:
        pytest.skip("no rg executable")
    make_tree(workspace.root)
    for pattern in [
        "needle",
        r"^needle",
        r"needle$",
        r"(?i)NEEDLE",
        r"\bneedle_\w+",
        "é",
        r"^$",
        "z{50}",
    ]:
        fast = await GREP_TOOL.run(
            ToolContext(workspace, ToolSettings(search_engine="ripgrep")), {"pattern": pattern}
        )
        slow = await GREP_TOOL.run(
            ToolContext(workspace, ToolSettings(search_engine="python")), {"pattern": pattern}
        )
        assert fast == slow, pattern
    globs = [
        "*.py",
        "**/*.md",
        "src/**",
        "src/*.txt",
        "*.{md,log}",
        "**/util/*",
        "*",
        "src/**/*.py",
    ]
    for glob in [*globs, "**/test_*.py", "s?c/*.py", "*.[mt]*", "{src,docs}/**/*.{py,md}"]:
        fast = await FIND_FILES_TOOL.run(
            ToolContext(workspace, ToolSettings(search_engine="ripgrep")), {"pattern": glob}
        )
        slow = await FIND_FILES_TOOL.run(
            ToolContext(workspace, ToolSettings(search_engine="python")), {"pattern": glob}
        )
        assert fast == slow, glob


async def test_grep_caps_with_a_note(workspace: Workspace, engine: SearchEngine) -> None:
    (workspace.root / "many.txt").write_text("".join(f"hit {i}\n" for i in range(5000)))
    text = await run_grep(workspace, engine, "hit", grep_max_matches=20)
    lines = text.splitlines()
    assert lines[0] == "more than 200 matching lines in at least 1 file:"
    assert len(lines) == 1 + 20 + 1
    assert lines[-1].startswith("[Capped: showing the first 20 of more than 200 matching lines")


async def test_grep_no_match(workspace: Workspace, engine: SearchEngine) -> None:
    (workspace.root / "a.txt").write_text("hay\n")
    text = await run_grep(workspace, engine, "needle")
    assert text.startswith("No matches for 'needle' in the project")


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "*x"])
async def test_invalid_regex_is_an_error(
    workspace: Workspace, engine: SearchEngine, pattern: str
) -> None:
    (workspace.root / "a.txt").write_text("(x\n")
    with pytest.raises(ToolError, match="Invalid regex") as caught:
        await GREP_TOOL.run(
            ToolContext(workspace, ToolSettings(search_engine=engine)), {"pattern": pattern}
        )
    assert "\n" not in str(caught.value)


async def test_catastrophic_regex_does_not_hang(workspace: Workspace, engine: SearchEngine) -> None:
    (workspace.root / "evil.txt").write_text("a" * 40 + "!\n")
    outcome = await GREP_TOOL.run(
        ToolContext(workspace, ToolSettings(search_engine=engine, search_timeout=2.0)),
        {"pattern": "(a+)+$"},
    )
    if engine == "ripgrep":  # a linear-time engine just answers
        assert outcome.status == "ok" and outcome.content.startswith("No matches")
    else:
        assert outcome.status == "error"
        assert "grep stopped after 2 s" in outcome.content


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'pattern'"),
        ({"pattern": 1}, "must be a string"),
        ({"pattern": ""}, "empty"),
        ({"pattern": "a\x00b"}, "NUL"),
    ],
)
async def test_grep_bad_arguments(
    workspace: Workspace, arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await GREP_TOOL.run(ToolContext(workspace, ToolSettings()), arguments)


async def test_find_files_globs(workspace: Workspace, engine: SearchEngine) -> None:
    make_tree(workspace.root)
    settings = ToolSettings(search_engine=engine)

    async def find(pattern: str) -> list[str]:
        outcome = await FIND_FILES_TOOL.run(ToolContext(workspace, settings), {"pattern": pattern})
        assert outcome.status == "ok"
        return outcome.content.splitlines()[1:]

    assert await find("*.py") == ["src/app.py", "src/util/helpers.py"]
    assert await find("src/*.txt") == ["src/no_newline.txt", "src/unicode.txt"]
    assert await find("**/util/*") == ["src/util/helpers.py", "src/util/notes.txt"]
    assert await find("*.{md,log}") == ["README.md", "docs/guide.md", "logs/keep.log"]
    assert await find("./README.md") == ["README.md"]
    assert "data.bin" in await find("*")
    nothing = await FIND_FILES_TOOL.run(ToolContext(workspace, settings), {"pattern": "*.rs"})
    assert nothing.content.startswith("No files match '*.rs'")


async def test_find_files_caps(workspace: Workspace, engine: SearchEngine) -> None:
    for i in range(120):
        (workspace.root / f"f{i:03d}.txt").touch()
    outcome = await FIND_FILES_TOOL.run(
        ToolContext(workspace, ToolSettings(search_engine=engine, find_max_results=5)),
        {"pattern": "*.txt"},
    )
    lines = outcome.content.splitlines()
    assert lines[0] == "120 files match '*.txt':"
    assert lines[1:6] == [f"f{i:03d}.txt" for i in range(5)]
    assert lines[6].startswith("[Capped: showing the first 5 of 120 paths (sorted).")


async def test_find_files_empty_glob(workspace: Workspace) -> None:
    with pytest.raises(ToolError, match="Glob pattern is empty"):
        await FIND_FILES_TOOL.run(ToolContext(workspace, ToolSettings()), {"pattern": "  "})


async def test_project_modules_cannot_shadow_the_python_engine(workspace: Workspace) -> None:
    """A project with its own re.py or melgui/ must not change how the engine runs."""
    (workspace.root / "re.py").write_text("raise SystemExit('shadowed')\n")
    (workspace.root / "melgui").mkdir()
    (workspace.root / "melgui" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    text = await run_grep(workspace, "python", "shadowed")
    assert text.splitlines()[0] == "2 matching lines in 2 files:"
