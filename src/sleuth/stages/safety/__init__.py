"""Safety: what may come in and what may go out.

- `guard`: the query, before anything reads it (characters, length, block list,
  content policy, prompt injection through `query_injection`, `query_injection_model`
  and `query_injection_rewrite`);
- `screen` (`injection`): results whose text addresses the agent are flagged and
  neutralised or dropped;
- `apply_content_policy` (`content_policy`): results the deployment's policy withholds;
- `sanitise_items` / `sanitise_extras` / `sanitise_response` (`sanitise`): text and
  links as they leave (the provider extras' values only for the results shown).

The two injection screens share how they read text (`injection_text`) and how their
pattern tables compile (`rule_patterns`); their default patterns compile on first use,
or at `compile_screens` (`warm_up`).
"""

from sleuth.stages.safety.content_policy import apply_content_policy
from sleuth.stages.safety.guard import guard
from sleuth.stages.safety.injection import screen
from sleuth.stages.safety.sanitise import sanitise_extras, sanitise_items, sanitise_response
from sleuth.stages.safety.warm_up import compile_screens

__all__ = [
    "apply_content_policy",
    "compile_screens",
    "guard",
    "sanitise_extras",
    "sanitise_items",
    "sanitise_response",
    "screen",
]
