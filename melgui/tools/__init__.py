"""Qt-free executors behind the tools the model can call."""
