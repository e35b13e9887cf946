"""Command rules: a program, its leading words, and which dangerous forms may follow.

A rule is written as words: `git status`, `pytest`, `npm run *` (`*` is any one word).
It covers a simple command whose words start with the rule's words. Words after `...`
name dangerous forms the rule allows anywhere after: `find ... -delete`, `sed ... -i`.

Known-dangerous forms are never covered by a rule that does not name them (as a leading
word or after `...`):

- `find` with `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint*`, `-fls`
- `git -c …` / `--config-env` / `--exec-path`, `git … --output`, `--upload-pack`,
  `--receive-pack`
- `sed -i` (also `-i.bak`, `--in-place`, `-ni`), sed scripts that write or run (`w`, `e`,
  `s///w`), `awk` programs that call `system`
- interpreters with code on the command line: `python -c`, `perl -e`, `node -e`, …
- `sudo`/`doas`: the rule for the wrapped command applies, but must name `sudo`
- `xargs` and `eval` run what they are given: only a rule for them covers them

Wrappers `env`, `nohup`, `timeout`, `nice`, `stdbuf`, `time`, `command`, `exec`: the rule
applies to the wrapped command. `sh -c '…'` / `bash -c '…'` with literal code: the code is
read as a command line of its own and every part of it must be covered.

Deny rules are broad on purpose: a deny rule matches the program by its base name
(`/bin/rm` is `rm`), at any wrapper depth, whatever dangerous forms appear.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from melgui.core.rules.shell_parse import SimpleCommand, Word

ELLIPSIS = "..."

_FIND_DANGERS = {
    "-exec": "-exec",
    "-execdir": "-exec",
    "-ok": "-exec",
    "-okdir": "-exec",
    "-delete": "-delete",
    "-fprint": "-fprint",
    "-fprint0": "-fprint",
    "-fprintf": "-fprint",
    "-fls": "-fprint",
}
_GIT_GLOBAL_DANGERS = {"-c": "-c", "--config-env": "-c", "--exec-path": "--exec-path"}
_GIT_ANYWHERE = ("--output", "--upload-pack", "--receive-pack", "--exec")
_INTERPRETERS: dict[str, tuple[str, ...]] = {
    "python": ("-c",),
    "python3": ("-c",),
    "python2": ("-c",),
    "pypy3": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
}
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox"})
_RUNS_ITS_INPUT = frozenset({"xargs", "eval", "source", ".", "parallel"})
_TRANSPARENT = frozenset({"env", "nohup", "timeout", "nice", "stdbuf", "time", "command"})
_TRANSPARENT |= {"exec", "builtin", "ionice", "chronic", "unbuffer"}
_ELEVATING = frozenset({"sudo", "doas"})
# Options of wrappers that take a value (so the value is not the wrapped program).
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "exec": frozenset({"-a"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
}
_POSITIONAL_ARGS = {"timeout": 1}  # the duration comes before the wrapped command
# sed's `w file` / `e command` commands and the s///w and s///e flags (GNU sed).
_SED_WRITES = re.compile(r"(?:^|[;{}\n]|[0-9$/]|\s)[wWe](?:\s|$)|s(.).*\1.*\1[gpiImM0-9]*[we]")
# Variables that change what later commands run or read.
DANGEROUS_VARIABLES = frozenset(
    {"PATH", "IFS", "ENV", "BASH_ENV", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS"}
    | {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP"}
    | {"NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GIT_DIR", "GIT_CONFIG", "GIT_SSH"}
    | {"GIT_SSH_COMMAND", "GIT_EXEC_PATH", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER"}
)


@dataclass(frozen=True, slots=True)
class Danger:
    """A dangerous form found in a command: `key` is what a rule must name."""

    key: str
    why: str


@dataclass(frozen=True, slots=True)
class CommandRule:
    words: tuple[str, ...]
    named: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> CommandRule:
        """`git status`, `npm run *`, `find ... -delete`; raises ValueError."""
        parts = text.split()
        if ELLIPSIS in parts:
            index = parts.index(ELLIPSIS)
            lead, named = parts[:index], parts[index + 1 :]
            if not named:
                raise ValueError(f"{text!r}: name the dangerous forms after '...'")
        else:
            lead, named = parts, []
        if not lead or lead[0] == "*":
            raise ValueError(f"{text!r}: a command rule starts with a program name")
        for word in lead:
            if any(mark in word for mark in "|&;<>()$`\"'\\"):
                raise ValueError(f"{text!r}: a rule is plain words, no shell syntax")
        return cls(tuple(lead), frozenset(lead) | frozenset(named))

    @property
    def text(self) -> str:
        extra = sorted(self.named - set(self.words))
        return " ".join(self.words) + (f" {ELLIPSIS} " + " ".join(extra) if extra else "")

    @property
    def program(self) -> str:
        return self.words[0]

    def matches(self, words: Sequence[Word]) -> bool:
        if len(words) < len(self.words):
            return False
        for want, word in zip(self.words, words, strict=False):
            if want == "*":
                continue
            if not word.literal or word.text != want:
                return False
        return True

    def names(self, dangers: Sequence[Danger]) -> bool:
        return all(d.key in self.named for d in dangers)

    def denies(self, layers: Sequence[Sequence[Word]]) -> bool:
        """A deny rule: the program by base name, at any wrapper depth."""
        for words in layers:
            if not words or not words[0].literal:
                continue
            head = Word(os.path.basename(words[0].text), True, 0, 0)
            if self.matches((head, *words[1:])):
                return True
        return False


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """A simple command seen through its wrappers: `layers[0]` is the whole command,
    the last is the wrapped program; `dangers` lists every dangerous form found."""

    layers: tuple[tuple[Word, ...], ...]
    dangers: tuple[Danger, ...]
    shell_code: Word | None  # `sh -c CODE`: the code, to be read as a command line


def unwrap(command: SimpleCommand) -> Unwrapped:
    words = command.words
    layers: list[tuple[Word, ...]] = [words]
    dangers: list[Danger] = [
        Danger(name, f"sets {name}") for name in command.assigns if name in DANGEROUS_VARIABLES
    ]
    while words and words[0].literal:
        program = os.path.basename(words[0].text)
        if program in _ELEVATING:
            dangers.append(Danger("sudo", f"runs it as another user ({program})"))
        elif program == "env":
            if any(w.literal and w.text in ("-S", "--split-string") for w in words[1:]):
                dangers.append(Danger("env -S", "env -S splits a string into a command"))
                break
            for w in words[1:]:
                name = w.text.split("=", 1)[0] if w.literal and "=" in w.text else ""
                if name in DANGEROUS_VARIABLES:
                    dangers.append(Danger(name, f"sets {name}"))
        if program not in _TRANSPARENT and program not in _ELEVATING:
            break
        inner = _wrapped(program, words)
        if not inner:
            break
        words = inner
        layers.append(words)
    shell_code: Word | None = None
    if words and words[0].literal:
        program = os.path.basename(words[0].text)
        dangers.extend(_dangers_of(program, words))
        if program in SHELLS:
            shell_code = _shell_code(words)
    return Unwrapped(tuple(layers), tuple(dangers), shell_code)


def _wrapped(program: str, words: tuple[Word, ...]) -> tuple[Word, ...]:
    values = _VALUE_OPTIONS.get(program, frozenset())
    positional = _POSITIONAL_ARGS.get(program, 0)
    i = 1
    while i < len(words):
        word = words[i]
        if not word.literal:
            return words[i:]
        text = word.text
        if text == "--":
            return words[i + 1 :]
        if program == "env" and "=" in text and not text.startswith("-"):
            i += 1
        elif text.startswith("-") and len(text) > 1:
            i += 2 if text in values else 1
        elif positional:
            positional -= 1
            i += 1
        else:
            return words[i:]
    return ()


def _dangers_of(program: str, words: tuple[Word, ...]) -> list[Danger]:
    texts = [w.text if w.literal else "" for w in words[1:]]
    found: list[Danger] = []
    if program == "find":
        for text in texts:
            if text in _FIND_DANGERS:
                found.append(Danger(_FIND_DANGERS[text], f"find {text} runs or deletes"))
    elif program == "git":
        for text in _git_globals(texts):
            key = _GIT_GLOBAL_DANGERS.get(text.split("=", 1)[0])
            if key:
                found.append(Danger(key, f"git {key} changes what git runs"))
        for text in texts:
            for option in _GIT_ANYWHERE:
                if text == option or text.startswith(option + "="):
                    found.append(Danger(option, f"git {option} writes or runs elsewhere"))
    elif program in ("sed", "gsed"):
        for text in texts:
            if text == "--in-place" or text.startswith("--in-place=") or _short_has(text, "i"):
                found.append(Danger("-i", "sed -i edits files in place"))
                break
        if any(_SED_WRITES.search(t) for t in texts if not t.startswith("-")):
            found.append(Danger("write", "the sed script writes files or runs commands (w, e)"))
    elif program in ("awk", "gawk", "mawk", "nawk"):
        if any("system" in text or "|" in text for text in texts):
            found.append(Danger("system", "the awk program runs commands"))
    elif program in _INTERPRETERS:
        flags = _INTERPRETERS[program]
        for text in _leading_options(texts):
            for flag in flags:
                if text == flag or (len(flag) == 2 and _short_has(text, flag[1])):
                    found.append(Danger(flag, f"{program} {flag} runs code from the line"))
                    break
    elif program in SHELLS and any(_short_has(t, "c") for t in _leading_options(texts)):
        found.append(Danger("-c", f"{program} -c runs code from the line"))
    if program in _RUNS_ITS_INPUT:
        found.append(Danger(program, f"{program} runs what it is given"))
    if any(not w.literal for w in words[:1]):
        found.append(Danger("$program", "the program name is computed"))
    return found


_OPTION_VALUE = ("-W", "-X")  # python's options whose value is the next word


def _leading_options(texts: list[str]) -> list[str]:
    """An interpreter's own options: those before its script or module name (`-m` ends
    them; the value after `-W`/`-X` is skipped, so `python -W ignore -c CODE` is seen)."""
    out: list[str] = []
    words = iter(texts)
    for text in words:
        if not text.startswith("-") or text == "-":
            break
        out.append(text)
        if text == "-m":
            break
        if text in _OPTION_VALUE:
            next(words, None)
    return out


def _git_globals(texts: list[str]) -> list[str]:
    """git's options before the subcommand (`git -c k=v -C dir log`)."""
    out: list[str] = []
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        out.append(texts[i])
        if texts[i] in ("-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace"):
            if i + 1 < len(texts):
                out.append(texts[i] + "=" + texts[i + 1])
                out.pop(-2)
            i += 1
        i += 1
    return out


def _short_has(text: str, letter: str) -> bool:
    """`-i`, `-i.bak`, `-ni`, `-Ei`: a short option cluster containing `letter`."""
    if not text.startswith("-") or text.startswith("--") or len(text) < 2:
        return False
    cluster = text[1:]
    if cluster[0] == letter:
        return True
    head = cluster.split(".", 1)[0]
    return head.isalpha() and letter in head


def _shell_code(words: tuple[Word, ...]) -> Word | None:
    """`sh -c CODE [name args…]`: the code word, when the shell has no other options."""
    rest = words[1:]
    if len(rest) >= 2 and rest[0].literal and rest[0].text in ("-c", "-lc", "-ec", "-xc"):
        return rest[1] if rest[1].literal else None
    return None


def suggest_rule(command: SimpleCommand) -> str | None:
    """The rule "always allow" proposes for one simple command: the wrapped program, a
    plain subcommand, and the dangerous forms it uses. None when no rule can be made."""
    seen = unwrap(command)
    words = seen.layers[-1]
    if not words or not words[0].literal or seen.shell_code is not None:
        return None
    if any(d.key == "$program" or d.key in DANGEROUS_VARIABLES for d in seen.dangers):
        return None
    lead = [words[0].text]
    if len(words) > 1 and words[1].literal and _plain_subcommand(words[1].text):
        lead.append(words[1].text)
    named = sorted({d.key for d in seen.dangers} - set(lead))
    text = " ".join(lead) + (f" {ELLIPSIS} " + " ".join(named) if named else "")
    try:  # a word no rule can hold: "...", a documentation placeholder, or shell marks
        CommandRule.parse(text)
    except ValueError:
        return None
    return text


def _plain_subcommand(text: str) -> bool:
    return (
        text.replace("-", "").replace("_", "").replace(":", "").isalnum()
        and not text.startswith("-")
        and not text[0].isdigit()
    )
