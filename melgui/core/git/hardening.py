"""What a git child may run: nothing a folder supplies, unless the folder is trusted.

git runs commands named in configuration: hooks, fsmonitor, filter drivers, diff and
merge drivers, pagers, editors, credential helpers, ssh, gpg. For melgui's own shadow
repository (which also reads no system or global configuration) and an untrusted
folder's repository, `-c` settings (highest precedence, and passed down to any git git
itself starts, through GIT_CONFIG_PARAMETERS) switch each of those off over whatever the
configuration (the repository's own, anything it includes, the person's) says.

Keys with a driver name (`filter.<driver>.clean`) cannot be switched off by one setting,
so the repository's configuration is listed first (`git config --list --name-only`,
which runs nothing) and every named driver is overridden to an empty command, which git
treats as no driver (a merge driver becomes git's own `merge-file`). Diffs also get
`--no-ext-diff --no-textconv`.

Every git child, trusted or not, gets a minimal environment: no API keys, no GIT_*
variables from melgui's own environment, no prompts, C locale (messages are parsed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

NULL = os.devnull
# ":" is the editor git itself treats as "do not start an editor".
NO_EDITOR = ":"

# Settings that switch off every command git could take from configuration.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", NULL),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", NO_EDITOR),
    ("sequence.editor", NO_EDITOR),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.attributesFile", NULL),
    ("credential.helper", ""),  # an empty value resets the list of helpers
    ("diff.external", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

# Per-driver keys that name a command, by section.
DRIVER_KEYS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", "")),
    # git's own three-way text merge in the driver's place: the file merges as if the
    # attribute named no driver, conflicts marked as usual.
    "merge": (("driver", "git merge-file --marker-size=%L %A %O %B"),),
    "credential": (("helper", ""),),
    "gpg": (("program", ""),),
}
SINGLE_KEYS = ("pager", "gpg")  # `pager.<command>`, `gpg.program`: no subsection

# Subcommands whose output can go through an external diff or a textconv driver.
DIFFING = frozenset({"diff", "log", "show", "diff-tree", "diff-index", "diff-files"})

# What a git child may see of melgui's environment. HOME stays: the person's own
# ~/.gitconfig (their name, their aliases) is theirs, not the folder's, and the overrides
# win over it too. melgui's shadow repository sets its own HOME and no global config.
PASSED = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "TZ")

QUIET: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": NO_EDITOR,
    "GIT_SEQUENCE_EDITOR": NO_EDITOR,
    "GIT_MERGE_AUTOEDIT": "no",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}


def child_env(*, hardened: bool, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a git child."""
    env = {name: os.environ[name] for name in PASSED if name in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.update(QUIET)
    if hardened:
        env["GIT_ATTR_NOSYSTEM"] = "1"
    if extra:
        env.update(extra)
    return env


def config_args(pairs: Iterable[tuple[str, str]]) -> list[str]:
    args: list[str] = []
    for key, value in pairs:
        args += ["-c", f"{key}={value}"]
    return args


def driver_overrides(names: Iterable[str]) -> list[tuple[str, str]]:
    """Overrides for every driver the listed configuration names define.

    `names` are config key names as `git config --list --name-only` prints them
    (`filter.lfs.clean`, `pager.log`).
    """
    found: set[tuple[str, str]] = set()
    for name in names:
        section, _, rest = name.partition(".")
        section = section.lower()
        subsection, _, key = rest.rpartition(".")
        if not subsection:
            if section == "pager":
                found.add((f"pager.{key}", "false"))
            continue
        for override, value in DRIVER_KEYS.get(section, ()):
            found.add((f"{section}.{subsection}.{override}", value))
    return sorted(found)


def list_names(listing: bytes) -> list[str]:
    """Key names from `git config --list --name-only -z`."""
    return [part.decode("utf-8", "replace") for part in listing.split(b"\0") if part]


def diff_flags(args: list[str]) -> list[str]:
    """`args` with `--no-ext-diff --no-textconv` after a diffing subcommand."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] == "-c" else 1  # git's own options before the subcommand
    if at < len(args) and args[at] in DIFFING:
        return [*args[: at + 1], "--no-ext-diff", "--no-textconv", *args[at + 1 :]]
    return args
