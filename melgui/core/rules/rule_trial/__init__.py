"""Rules tried before they are adopted: one rule on past commands as it is typed
(commands), a draft rule set replayed on the recorded calls (replay), and the smallest
set of rules that would have removed the prompts a person always approved (proposal)."""

from melgui.core.rules.rule_trial.commands import RuleTrial

__all__ = ["RuleTrial"]
