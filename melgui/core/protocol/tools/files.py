"""read_file, list_dir, write_file, edit_file: docs/tools.md's definitions, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

READ_FILE = ToolDef(
    "read_file",
    "Read a file from the workspace. offset and limit are in lines; a truncated "
    "read reports the offset to resume from.",
    {
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
        },
    },
    read_only=True,
    summary_argument="path",
    path_argument="path",
    must_exist="file",
)

LIST_DIR = ToolDef(
    "list_dir",
    "List one folder of the workspace (default: the project root), with sizes.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    read_only=True,
    summary_argument="path",
    summary_default=".",
    path_argument="path",
    must_exist="folder",
)

WRITE_FILE = ToolDef(
    "write_file",
    "Write a file in the workspace, creating folders as needed.",
    {
        "type": "object",
        "required": ["path", "content"],
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    },
    summary_argument="path",
    path_argument="path",
    diff_preview=True,
)

EDIT_FILE = ToolDef(
    "edit_file",
    "Replace old_string with new_string in a file. old_string must match exactly "
    "and uniquely unless replace_all is true.",
    {
        "type": "object",
        "required": ["path", "old_string", "new_string"],
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
    },
    summary_argument="path",
    path_argument="path",
    must_exist="file",
    diff_preview=True,
)
