"""What the prompt box of a project folder uses: commands, history, attachable files."""
