"""Read a command line as bash will: its simple commands and its redirections.

The parser is tree-sitter's bash grammar (PyPI `tree-sitter` + `tree-sitter-bash`, MIT).
It was compared with
`bashlex` 0.18 on the 104 rows of the approval test table
(tests/core/rules/test_command_table.py; bench/compare_shell_parsers.py): bashlex
raised on 6 valid rows (`case`,
`[[ … ]]`, `$(( … ))` twice, `time`, a quoted here-doc delimiter), each of which would
have been asked for no reason; it has had no release since 2023, and it is GPLv3 while
melgui is MIT. tree-sitter read every valid row and flagged exactly the two broken ones
with ERROR/MISSING nodes (so "asked, never guessed" is a tree walk), and it gives the
spans the approval view uses to underline each part.

`parse_shell(text)` walks the whole tree and collects every `command` wherever it sits
(pipes, lists, subshells, `$(…)`, backticks, `<(…)`, here-doc bodies, function bodies,
loops, arithmetic), so nothing that runs can hide from the rules. A word is `literal`
only when its value is known without running anything (quotes removed, escapes undone);
`$VAR`, `$(…)`, a leading `~` or an unquoted glob leave it non-literal.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser

RedirectKind = Literal["file", "fd", "heredoc", "herestring"]

_DYNAMIC = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "translated_string",
    }
)
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})
_CHANGES_DIR = frozenset({"cd", "pushd", "popd"})


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a command: its value when `literal`, else its source text."""

    text: str
    literal: bool
    start: int  # character offsets into the parsed text
    end: int


@dataclass(frozen=True, slots=True)
class Redirect:
    """`> f`, `2>&1`, `<<EOF`, `<<< s`: `target` is the file for kind "file" only."""

    operator: str
    kind: RedirectKind
    target: Word | None
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """Words after any `NAME=value` prefixes; `assigns` names the variables it sets."""

    words: tuple[Word, ...]
    assigns: tuple[str, ...]
    start: int
    end: int
    text: str

    @property
    def program(self) -> str | None:
        return self.words[0].text if self.words and self.words[0].literal else None


@dataclass(frozen=True, slots=True)
class ParsedShell:
    """Every simple command and redirection of a command line, in source order.

    `problem` is set when the parser could not read all of it; then nothing in it may
    be trusted to a rule. `changes_dir` is true when a `cd`/`pushd`/`popd` runs, so a
    relative redirection target is no longer relative to the project.
    """

    text: str
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    problem: str | None
    changes_dir: bool


_local = threading.local()  # a tree-sitter Parser is not safe to share between threads


@functools.cache
def _language() -> Language:
    """The bash grammar, loaded with the first command read (a melgui host waiting for a
    window reads none)."""
    import tree_sitter_bash
    from tree_sitter import Language

    return Language(tree_sitter_bash.language())


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        from tree_sitter import Parser

        parser = _local.parser = Parser(_language())
    return parser


def parse_shell(text: str) -> ParsedShell:
    if not text.strip():
        return ParsedShell(text, (), (), "the command is empty", False)
    if "\x00" in text:
        return ParsedShell(text, (), (), "the command contains a NUL byte", False)
    source = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    walker = _Walker(source)
    walker.visit(tree.root_node)
    problem = walker.problem
    if problem is None and tree.root_node.has_error:
        problem = "the shell parser could not read part of it"
    changes_dir = any(c.program in _CHANGES_DIR for c in walker.commands)
    return ParsedShell(text, tuple(walker.commands), tuple(walker.redirects), problem, changes_dir)


class _Walker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.ascii = source.isascii()
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.problem: str | None = None

    def offset(self, byte: int) -> int:
        return byte if self.ascii else len(self.source[:byte].decode("utf-8", "replace"))

    def raw(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.problem = self.problem or f"cannot read {self.raw(node)[:40]!r}"
            return
        if kind == "command":
            self.command(node)
        elif kind in _DECLARATIONS:
            self.declaration(node)
        elif kind == "variable_assignment" and node.parent is not None:
            self.bare_assignment(node)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node)
            return
        for child in node.children:
            self.visit(child)

    # -- commands ------------------------------------------------------------------------

    def command(self, node: Node) -> None:
        words: list[Word] = []
        assigns: list[str] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assigns.append(self.assigned_name(child))
            elif child.type == "command_name":
                words.append(self.word(child.children[0] if child.children else child))
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                continue  # visited as children
            elif child.is_named and child.type != "comment":
                words.append(self.word(child))
        self.add(node, words, assigns)

    def declaration(self, node: Node) -> None:
        words: list[Word] = []
        assigns: list[str] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assigns.append(self.assigned_name(child))
            if child.is_named:
                words.append(self.word(child))
            else:  # the keyword: export, declare, local, readonly, typeset, unset
                start, end = self.offset(child.start_byte), self.offset(child.end_byte)
                words.append(Word(self.raw(child), True, start, end))
        self.add(node, words, assigns)

    def bare_assignment(self, node: Node) -> None:
        parent = node.parent
        if parent is None or parent.type in ("command", *_DECLARATIONS):
            return  # a prefix or a declaration: part of that command
        self.add(node, [], [self.assigned_name(node)])

    def assigned_name(self, node: Node) -> str:
        name = node.child_by_field_name("name")
        return self.raw(name) if name is not None else self.raw(node).split("=", 1)[0]

    def add(self, node: Node, words: list[Word], assigns: list[str]) -> None:
        start, end = self.offset(node.start_byte), self.offset(node.end_byte)
        if start == end:
            return  # a command the parser expected but did not find (already a problem)
        text = self.raw(node)
        self.commands.append(SimpleCommand(tuple(words), tuple(assigns), start, end, text))

    # -- redirections --------------------------------------------------------------------

    def redirect(self, node: Node) -> None:
        operator = "".join(self.raw(c) for c in node.children if not c.is_named)
        start, end = self.offset(node.start_byte), self.offset(node.end_byte)
        if node.type == "heredoc_redirect":
            self.redirects.append(Redirect(operator or "<<", "heredoc", None, start, end))
        elif node.type == "herestring_redirect":
            self.redirects.append(Redirect("<<<", "herestring", None, start, end))
        else:
            target_node = node.child_by_field_name("destination")
            if target_node is None:
                named = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
                target_node = named[-1] if named else None
            target = self.word(target_node) if target_node is not None else None
            is_fd = operator.endswith("&") and (
                target is None or target.text.isdigit() or target.text == "-"
            )
            kind: RedirectKind = "fd" if is_fd else "file"
            self.redirects.append(Redirect(operator, kind, None if is_fd else target, start, end))
        for child in node.children:  # substitutions inside targets and here-doc bodies
            self.visit(child)

    # -- words ---------------------------------------------------------------------------

    def word(self, node: Node) -> Word:
        start, end = self.offset(node.start_byte), self.offset(node.end_byte)
        value = self.literal(node)
        if value is None:
            return Word(self.raw(node), False, start, end)
        return Word(value, True, start, end)

    def literal(self, node: Node) -> str | None:
        """The word's value, or None when only running the shell would tell."""
        kind = node.type
        if kind in _DYNAMIC:
            return None
        if kind in ("word", "number", "variable_name", "test_operator"):
            text = self.raw(node)
            if text.startswith("~") or any(c.type in _DYNAMIC for c in node.children):
                return None
            if text not in ("[", "[[") and _has_glob(text):
                return None  # the shell expands it to file names
            return _unescape(text)
        if kind == "raw_string":
            return self.raw(node)[1:-1]
        if kind == "ansi_c_string":
            return None
        if kind == "string":
            parts: list[str] = []
            for child in node.children:
                if child.type == "string_content":
                    parts.append(_unescape_double(self.raw(child)))
                elif child.is_named:
                    return None
            return "".join(parts)
        if kind == "concatenation":
            values = [self.literal(c) for c in node.children]
            if any(v is None for v in values):
                return None
            return "".join(v for v in values if v is not None)
        if kind == "variable_assignment":
            return self.raw(node) if not _has_dynamic(node) else None
        return None


def _has_dynamic(node: Node) -> bool:
    return node.type in _DYNAMIC or any(_has_dynamic(c) for c in node.children)


def _has_glob(text: str) -> bool:
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "*?[":
            return True
    return False


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            if nxt != "\n":
                out.append(nxt)
        else:
            out.append(ch)
    return "".join(out)


def _unescape_double(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
