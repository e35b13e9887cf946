"""find_files with ripgrep matching the glob itself (`--glob`), the project's .gitignore
rules moved after it as excluding overrides (rg_globs): the same answers as the Python
engine, which matches every listed path, on a tree where a `--glob` alone would list
ignored and hidden files (an ignored file or folder the glob names, a rule of a nested
.gitignore, an anchored rule, a folder-only rule beside a file of that name, a
.gitignore that is a symlink, CRLF lines, trailing spaces, comments); and a project
whose rules cannot all be moved (a negation, an escape, a folder named with glob
characters, a repository inside) is listed and matched in Python as before."""

from __future__ import annotations

import os
import random
import subprocess

import pytest

from melgui.tools.context import ToolContext
from melgui.tools.search.glob_match import GlobMatcher
from melgui.tools.search.project_search import (
    FIND_FILES_TOOL,
    _path_text,
    _paths_text,
    _scan,
    first_sorted,
)
from melgui.tools.search.rg_globs import (
    gitignore_globs,
    hidden_name_globs,
    pattern_globs,
    top_hidden_folders,
)
from melgui.tools.search.ripgrep import find_ripgrep, glob_files_argv
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

FILES = [
    "a.py",
    "A.PY",
    "top-only.txt",  # ignored by an anchored rule at the top
    "sub/top-only.txt",  # … which does not reach here
    "src/app.py",
    "src/gen_models.py",  # ignored by a file rule with a folder
    "src/local.txt",  # ignored by src/.gitignore's anchored rule
    "src/util/local.txt",  # … which does not reach here
    "src/util/test_util.py",
    "src/build",  # a file: the folder rule `build/` leaves it
    "src/x.py/inner.py",  # a folder named like the glob
    "tests/test_app.py",
    "tests/cache/test_cached.py",  # ignored by `**/cache/`
    "build/out.py",  # ignored by a folder rule
    "build/test/test_built.py",
    "logs/app.log",  # ignored
    "logs/keep.log",  # ignored too: no negation here
    "notes.tmp",  # ignored by a rule with trailing spaces
    "docs/guide.md",
    "docs/tmp/scratch.md",  # ignored by a nested .gitignore
    "docs/tmp/test/test_doc.py",
    "docs/caf\u00e9 notes.md",
    "linked/a.bak",  # ignored by a .gitignore that is a symlink
    "linked/a.txt",
    "other/b.bak",
    ".env.py",  # hidden file at the top
    ".tools/run.py",  # hidden folder
    ".tools/test/test_hidden.py",
    "src/.hid/secret.py",
    "src/.cache.py",
    "src/.gen.py/inner.py",  # a hidden folder named like the glob
    ".tools/.deeper/x.py",  # a hidden folder in a hidden folder
]
GITIGNORE = (
    "# comments and blank lines are no rules\n\nbuild/\n*.log\r\nsrc/gen_*.py\n"
    "/top-only.txt\n*.tmp   \n**/cache/\n"
)
EXCLUDES = [
    "!/**/build/",
    "!/**/*.log",
    "!/src/gen_*.py",
    "!/top-only.txt",
    "!/**/*.tmp",
    "!/**/cache/",
    "!/docs/**/tmp/",
    "!/linked/**/*.bak",
    "!/src/local.txt",
]
PATTERNS = [
    "*.py",
    "*.PY",
    "*.{py,PY,Py}",
    "**/*.py",
    "**/test_*.py",
    "**/test/**",
    "src/**",
    "src/**/*.py",
    "src/{util,x.py}/*",
    "**/gen_*.py",
    "*.log",
    "logs/*",
    "*.md",
    "docs/**",
    "**/*caf\u00e9*",
    "docs/caf? notes.md",  # `?` is one character, é two bytes
    "?.py",
    "build/**",
    "build",
    "**/tmp/**",
    "**/cache/**",
    "*.bak",
    "*.tmp",
    "top-only.txt",
    "local.txt",
    "*/*.txt",
    ".env.py",
    "**/.hid/*",
    ".tools/**",
    "x.py",
    "**/x.py/**",
    "*",
    "**",
]


@pytest.fixture
def tree(workspace: Workspace) -> Workspace:
    for name in FILES:
        path = workspace.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name + "\n")
    root = workspace.root
    (root / ".gitignore").write_text(GITIGNORE, newline="")
    (root / "docs" / ".gitignore").write_text("tmp/\n")
    (root / "src" / ".gitignore").write_text("/local.txt\n")
    (root / "shared-rules").write_text("*.bak\n")
    (root / "linked" / ".gitignore").symlink_to("../shared-rules")
    (root / ".tools" / ".gitignore").write_text("!never-read\n")  # hidden: never walked
    return workspace


async def found(workspace: Workspace, engine: str, pattern: str) -> list[str]:
    settings = ToolSettings(search_engine=engine)  # type: ignore[arg-type]
    outcome = await FIND_FILES_TOOL.run(ToolContext(workspace, settings), {"pattern": pattern})
    assert outcome.status == "ok", outcome.content
    text = outcome.content
    return [] if text.startswith("No files match") else text.splitlines()[1:]


def needs_rg() -> None:
    if find_ripgrep() is None:
        pytest.skip("no rg executable")


def test_the_projects_rules_become_excluding_overrides(tree: Workspace) -> None:
    assert sorted(_scan(tree.root, True).excludes or []) == sorted(EXCLUDES)


async def test_ripgreps_glob_and_the_python_matcher_agree(tree: Workspace) -> None:
    needs_rg()
    assert _scan(tree.root, True).excludes is not None
    for pattern in PATTERNS:
        assert GlobMatcher(pattern).rg_globs is not None, pattern
        assert await found(tree, "ripgrep", pattern) == await found(tree, "python", pattern), (
            pattern
        )


async def test_what_the_rules_ignore_stays_out_though_the_glob_names_it(tree: Workspace) -> None:
    needs_rg()
    assert await found(tree, "ripgrep", "*.log") == []
    assert await found(tree, "ripgrep", "build/**") == []
    assert await found(tree, "ripgrep", "**/test/**") == []  # ignored or hidden, each
    assert await found(tree, "ripgrep", "**/tmp/**") == []
    assert await found(tree, "ripgrep", "**/cache/**") == []
    assert await found(tree, "ripgrep", "*.bak") == ["other/b.bak"]
    assert await found(tree, "ripgrep", "top-only.txt") == ["sub/top-only.txt"]
    assert await found(tree, "ripgrep", "local.txt") == ["src/util/local.txt"]
    assert await found(tree, "ripgrep", "build") == ["src/build"]
    assert await found(tree, "ripgrep", "**/test_*.py") == [
        "src/util/test_util.py",
        "tests/test_app.py",
    ]
    assert await found(tree, "ripgrep", "docs/caf? notes.md") == ["docs/caf\u00e9 notes.md"]
    assert await found(tree, "ripgrep", ".tools/**") == []


@pytest.mark.parametrize(
    ("where", "text"),
    [
        (".gitignore", "*.log\n!keep.log\n"),  # a negation
        (".gitignore", "\\#odd.txt\n"),  # an escape
        ("we[ird]/.gitignore", "*.log\n"),  # a folder named with glob characters
        ("inner/.git", "gitdir: elsewhere\n"),  # a repository inside the project
    ],
)
async def test_rules_that_cannot_be_moved_leave_the_matching_to_python(
    workspace: Workspace, where: str, text: str
) -> None:
    needs_rg()
    for name in ["a.log", "keep.log", "#odd.txt", "we[ird]/b.log", "inner/c.log", "d.txt"]:
        path = workspace.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (workspace.root / where).write_text(text)
    if where != ".gitignore":
        (workspace.root / ".gitignore").write_text("*.tmp\n")
    assert _scan(workspace.root, True).excludes is None
    for pattern in ["*.log", "**/*.txt", "*"]:
        assert await found(workspace, "ripgrep", pattern) == await found(
            workspace, "python", pattern
        ), (where, pattern)


async def test_a_changed_gitignore_is_read_again(tree: Workspace) -> None:
    needs_rg()
    assert await found(tree, "ripgrep", "*.py") == await found(tree, "python", "*.py")
    (tree.root / "src" / ".gitignore").write_text("/local.txt\napp.py\n")
    assert "src/app.py" not in await found(tree, "ripgrep", "*.py")
    (tree.root / "src" / ".gitignore").unlink()
    assert "src/local.txt" in await found(tree, "ripgrep", "local.txt")
    (tree.root / "src" / ".gitignore").write_text("!app.py\n")  # now a negation
    assert await found(tree, "ripgrep", "**") == await found(tree, "python", "**")


def test_gitignore_lines_become_overrides_anchored_to_their_folder() -> None:
    rules = "# c\n\n*.o\nbuild/\n/top\nsrc/gen.py\n**/deep\na/**\nend  \r\n"
    assert gitignore_globs(rules, "") == [
        "!/**/*.o",
        "!/**/build/",
        "!/top",
        "!/src/gen.py",
        "!/**/deep",
        "!/a/**",
        "!/**/end",
    ]
    assert gitignore_globs("*.o\n/top\nx/y/\n", "p/q") == [
        "!/p/q/**/*.o",
        "!/p/q/top",
        "!/p/q/x/y/",
    ]
    for unmovable in ["!keep", "\\#x", "a\\ ", "a**b", "a//b", "/", "\ufeff*.o", "x\x1c"]:
        assert gitignore_globs(unmovable, "") is None, unmovable
    assert gitignore_globs("*.o\n", "we[ird]") is None


def test_pattern_alternatives_become_globs_or_none() -> None:
    plain = pattern_globs(["*.py", "src/**/test_*.py"])
    assert plain is not None and plain.globs == ("*.py", "src/**/test_*.py") and plain.exact
    loose = pattern_globs(["a?.txt"])
    assert loose is not None and loose.globs == ("a*.txt",) and not loose.exact
    for odd in ["[ab].py", "a\\*", "a**b", "#x", "!x", "x ", "a//b", "\ud800"]:
        assert pattern_globs([odd]) is None, odd


def test_the_first_records_in_order_without_sorting_them_all() -> None:
    rng = random.Random(7)
    for size, limit in [(0, 5), (10, 5), (30, 5), (2000, 500), (5000, 500), (9000, 50)]:
        for shape in ("random", "sorted", "reversed", "clustered"):
            records = [b"./%08d" % rng.randrange(10**8) for _ in range(size)]
            if shape == "sorted":
                records.sort()
            elif shape == "reversed":
                records.sort(reverse=True)
            elif shape == "clustered":  # the smallest ones all where the sample misses
                records = [b"./z%05d" % n for n in range(size)]
                for n in range(1, size, 16):
                    records[n] = b"./a%05d" % n
            assert first_sorted(list(records), limit) == sorted(records)[:limit], (size, shape)


def test_ripgrep_reads_no_gitignore_when_it_is_given_the_rules(tree: Workspace) -> None:
    """The rules come as overrides with --no-ignore-vcs: a .gitignore ripgrep would
    wait on is never opened (find_files names it from its own walk)."""
    needs_rg()
    rg = find_ripgrep()
    assert rg is not None
    os.mkfifo(tree.root / "other" / ".gitignore")
    done = subprocess.run(
        glob_files_argv(rg, ["*.md", *EXCLUDES, "!.*"]),
        cwd=tree.root,
        capture_output=True,
        timeout=30,
    )
    listed = sorted(done.stdout.decode().split("\0")[:-1])
    assert listed == ["./docs/caf\u00e9 notes.md", "./docs/guide.md"]


def test_hidden_folders_stay_unwalked_without_the_hidden_regex(tree: Workspace) -> None:
    """`!.*` is a regex ripgrep tries on every path: without it, no hidden folder is
    walked (each the pattern could name is excluded by name), and hidden files are
    listed only where Python drops them."""
    needs_rg()
    rg = find_ripgrep()
    assert rg is not None
    scan = _scan(tree.root, True)
    assert sorted(scan.hidden or []) == [".tools", "src/.gen.py", "src/.hid"]
    kept_regex = 0
    for pattern in PATTERNS:
        globs = GlobMatcher(pattern).rg_globs
        assert globs is not None, pattern
        hidden, listed = hidden_name_globs(globs.globs, scan.hidden)
        kept_regex += hidden == ["!.*"]
        done = subprocess.run(
            glob_files_argv(rg, [*globs.globs, *EXCLUDES, *hidden]),
            cwd=tree.root,
            capture_output=True,
            timeout=30,
        )
        records = done.stdout.split(b"\0")[:-1]
        assert not [r for r in records if b"/." in r.rpartition(b"/")[0]], pattern
        if not listed:
            assert not [r for r in records if b"/." in r], pattern
    assert 0 < kept_regex < len(PATTERNS)  # `**` at the end keeps it


def test_what_keeps_hidden_names_out() -> None:
    folders = [".git", "src/.hid"]
    # A literal first letter names no hidden file or folder: nothing needed.
    assert hidden_name_globs(["test_*.py", "src/**/x.py"], folders) == ([], False)
    # A wildcard first: hidden files for Python to drop, the folders excluded by name.
    assert hidden_name_globs(["*.py"], folders) == (["!/.git/", "!/src/.hid/"], True)
    assert hidden_name_globs(["test_*.py", "src/*"], []) == ([], True)
    # `**` last would let every hidden folder below be walked; too many folders, or none
    # known: the regex.
    assert hidden_name_globs(["src/**"], folders) == (["!.*"], False)
    assert hidden_name_globs(["*.py"], None) == (["!.*"], False)


def test_the_top_hidden_folders_of_a_project() -> None:
    assert top_hidden_folders([".git", "a/.venv", "a/.venv/.x", ".git/.y", "b/c"]) == [
        ".git",
        "a/.venv",
        "b/c",
    ]
    assert top_hidden_folders(["a/.we[ird]"]) is None
    assert top_hidden_folders([f"d{n}/.h" for n in range(65)]) is None
    assert top_hidden_folders([f"d{n}/.h" for n in range(64)]) is not None


def test_the_paths_shown_decode_at_once_as_each_alone() -> None:
    """Joined by NULs, bad UTF-8 (cut sequences, stray continuation bytes, surrogates,
    0xff) is replaced in each path exactly as when each is decoded on its own."""
    rng = random.Random(3)
    pieces = [b"a", b"/", b"\xe2", b"\x82", b"\xac", b"\xf0", b"\x9f", b"\xc3", b"\xff", b"\xed"]
    for _ in range(5000):
        records = [
            b"./" + b"".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
            for _ in range(rng.randrange(1, 5))
        ]
        assert _paths_text(records) == [_path_text(record) for record in records], records
    assert _paths_text([]) == []
