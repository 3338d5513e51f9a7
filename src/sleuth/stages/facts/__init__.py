"""Numeric claims: read from text, checked across sources, and held against the summary.

`check_facts` (`agreement`: cross-domain agreement on the claims of the results
returned, over `claims`, `claim_subjects` and the unit tables in `claim_units`) and
`verify_summary` (`grounding`: whether each summary sentence is supported by the
source it cites, with `grounding_facts` for the numbers and names in it).
"""

from sleuth.stages.facts.agreement import check_facts
from sleuth.stages.facts.grounding import verify_summary

__all__ = ["check_facts", "verify_summary"]
