"""`melgui checkpoints list|show|restore`: the project's checkpoints from the command line.

    melgui checkpoints list [--folder DIR] [--conversation ID] [--json]
    melgui checkpoints show ID [--folder DIR]
    melgui checkpoints restore ID [ID …] [--folder DIR] [--conflicts before|agent|now]
    melgui checkpoints prune [--folder DIR] [--keep-days D]

A restore undoes what the checkpoints' calls changed. When a file changed again since,
nothing is written unless --conflicts says which version wins; the restore is itself a
checkpoint, so `restore` of its id undoes it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import TextIO

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.core.store.checkpoints.restore import CHOICES, Choice
from melgui.core.store.checkpoints.shadow import GitError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melgui checkpoints", description="List, show and restore checkpoints."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the folder's checkpoints, oldest first")
    listing.add_argument("--conversation", metavar="ID", help="only this conversation's")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    show = commands.add_parser("show", help="what one checkpoint's call changed, as a diff")
    show.add_argument("id", type=int)
    restore = commands.add_parser("restore", help="undo what these checkpoints' calls changed")
    restore.add_argument("ids", type=int, nargs="+", metavar="ID")
    restore.add_argument(
        "--conflicts",
        choices=CHOICES,
        help="for files changed again since: the version before the call, the agent's, or "
        "the one now (default: stop and name them)",
    )
    prune = commands.add_parser("prune", help="drop checkpoints older than --keep-days")
    prune.add_argument("--keep-days", type=float, default=30.0)
    for sub in (listing, show, restore, prune):
        sub.add_argument("--folder", default=".", help="project folder (default: .)")
    return parser


def line(record: CheckpointRecord) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.started_at))
    files = f"{len(record.files)} file{'s' if len(record.files) != 1 else ''}"
    state = "" if record.state == "done" else f" [{record.state}]"
    what = f"{record.tool} {record.summary}".strip()
    return f"#{record.id}  {when}  {record.source:<10} {what}  — changed {files}{state}"


def as_json(record: CheckpointRecord) -> str:
    return json.dumps(
        {
            "id": record.id,
            "source": record.source,
            "call_id": record.call_id,
            "tool": record.tool,
            "summary": record.summary,
            "state": record.state,
            "started_at": record.started_at,
            "files": [{"path": f.path, "status": f.status} for f in record.files],
            "skipped": list(record.skipped),
            "restores": list(record.restores),
        },
        ensure_ascii=False,
    )


async def run(options: argparse.Namespace, out: TextIO) -> int:
    folder = os.path.realpath(options.folder)
    if not os.path.isdir(folder):
        print(f"melgui: --folder {options.folder!r} is not a folder", file=sys.stderr)
        return 2
    checkpoints = Checkpointer(folder)
    try:
        if options.command == "list":
            await checkpoints.recover()
            records = (
                checkpoints.log.for_conversation(options.conversation)
                if options.conversation
                else checkpoints.records()
            )
            for record in records:
                out.write((as_json(record) if options.json else line(record)) + "\n")
            return 0
        if options.command == "show":
            found = checkpoints.log.get(options.id)
            if found is None or found.folder != checkpoints.folder:
                print(f"melgui: no checkpoint #{options.id} in {folder}", file=sys.stderr)
                return 1
            out.write(line(found) + "\n" + await checkpoints.diff(found))
            return 0
        if options.command == "prune":
            checkpoints.keep_days = options.keep_days
            out.write(f"dropped {await checkpoints.prune()} checkpoint(s)\n")
            return 0
        return await _restore(checkpoints, options.ids, options.conflicts, out)
    except (GitError, KeyError, ValueError) as exc:
        print(f"melgui: {exc}", file=sys.stderr)
        return 1
    finally:
        checkpoints.close()


async def _restore(
    checkpoints: Checkpointer, ids: list[int], conflicts: Choice | None, out: TextIO
) -> int:
    plan = await checkpoints.plan(ids)
    if plan.conflicts and conflicts is None:
        print("melgui: these files changed again after the agent's change:", file=sys.stderr)
        for path in plan.conflicts:
            print(f"  {path.path}", file=sys.stderr)
        print("nothing was restored; pass --conflicts before|agent|now", file=sys.stderr)
        return 1
    choices = {path.path: conflicts for path in plan.conflicts if conflicts is not None}
    record = await checkpoints.restore(ids, choices)
    for skipped in checkpoints.skipped:
        print(f"melgui: {skipped}", file=sys.stderr)
    out.write(line(record) + "\n")
    out.write(f"undo this restore with: melgui checkpoints restore {record.id}\n")
    return 0


def main(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    return asyncio.run(run(options, sys.stdout))
