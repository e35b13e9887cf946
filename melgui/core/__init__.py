"""Qt-free core: events, messages, transports, the agent loop, approval, persistence."""
