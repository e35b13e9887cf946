#!/bin/sh
# The conformance suite's client: plain `melgui exec`, the same flags for every scenario.
# The suite appends the server's URL; it becomes an mcp.json entry whose `oauth` holds
# what the scenario's context gives (context_config.py: one mapping for all scenarios).
# The model is tests/fakes/tool_caller.py (its base URL in $MELGUI_CONFORMANCE_MODEL),
# which calls each MCP tool it is offered once. The sign-in's browser is $BROWSER (the
# test sets the stand-in that follows redirects).
set -e
python="${MELGUI_PYTHON:-python}"
config="$(mktemp "${TMPDIR:-/tmp}/conformance-mcp.XXXXXX")"
"$python" -m tests.conformance.context_config "$1" > "$config"
exec "$python" -m melgui exec --transport openai --url "$MELGUI_CONFORMANCE_MODEL" \
    --model conformance --no-history --no-mcp --approve all --mcp-input defaults --json \
    --mcp-config "$config" "Call each MCP tool once."
