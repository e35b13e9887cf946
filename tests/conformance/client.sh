#!/bin/sh
# The conformance suite's client: plain `melgui exec`, the same flags for every scenario.
# The suite appends the server's URL; the model is tests/fakes/tool_caller.py (its base
# URL in $MELGUI_CONFORMANCE_MODEL), which calls each MCP tool it is offered once. The
# sign-in's browser is $BROWSER (the test sets the stand-in that follows redirects).
exec "${MELGUI_PYTHON:-python}" -m melgui exec --transport openai --url "$MELGUI_CONFORMANCE_MODEL" \
    --model conformance --no-history --no-mcp --approve all --mcp-input defaults --json \
    "Call each MCP tool once." --mcp-url "$@"
