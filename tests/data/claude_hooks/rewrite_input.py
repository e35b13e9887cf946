#!/usr/bin/env python3
# A PreToolUse hook answering with JSON in Claude Code's shape (`hookSpecificOutput`,
# `permissionDecision`, `updatedInput`): it adds `--color=never` to a Bash `ls`, and for
# an Edit fixes the case of `old_string` and moves the edit to the file named in
# `new_string`'s first line when that line is `# file: NAME`.
import json
import os
import sys

data = json.load(sys.stdin)
tool_input = data["tool_input"]
if data["tool_name"] == "Bash" and tool_input["command"].startswith("ls "):
    updated = {"command": tool_input["command"].replace("ls ", "ls --color=never ", 1)}
elif data["tool_name"] == "Edit":
    updated = dict(tool_input)
    updated["old_string"] = tool_input["old_string"].lower()
    first = tool_input["new_string"].splitlines()[0]
    if first.startswith("# file: "):
        folder = os.path.dirname(tool_input["file_path"])
        updated["file_path"] = os.path.join(folder, first[len("# file: ") :])
        updated["new_string"] = tool_input["new_string"].split("\n", 1)[1]
else:
    sys.exit(0)
json.dump(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "rewritten by the project's hook",
            "updatedInput": updated,
        }
    },
    sys.stdout,
)
