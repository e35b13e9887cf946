"""run_command: the shell, its sandbox, and its output as the model gets it."""
