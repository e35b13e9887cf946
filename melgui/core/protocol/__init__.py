"""The contracts every layer speaks: stream events, messages, tool definitions,
the Transport and tool-runner interfaces, approval questions and loop events."""
