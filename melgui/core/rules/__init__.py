"""The approval rules: a command parsed as the shell would, the rules and their scopes
(project, user, built in), the policy that judges a call by them, Claude Code's rules
imported, and rules tried on the recorded history before they are saved."""
