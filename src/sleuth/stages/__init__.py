"""The pipeline's stages: pure functions over contract types, grouped by concern.

Only `sleuth.gateway` sequences them. A search passes through the groups in this order:

- `safety.guard`: what a query may contain, before anything reads it;
- `query.rewrite`: the query as search keywords, follow-ups completed;
- (the fan-out to the back ends is `sleuth.resilience`; `results.normalize` gives
  every back end's hits one shape as they arrive);
- `safety.screen`: results whose text addresses the agent are flagged;
- `results.clean`, then `safety.sanitise_items` and `safety.apply_content_policy`;
- `results.dedupe`: the same page, or the same content, found more than once;
- `results.rank` orders them; `safety.sanitise_extras` makes the shown results'
  provider extras safe; `verify.date_items` and `verify.score_items` then judge the
  results shown: dates from their own text, source trust;
- `facts.check_facts`: numeric claims checked across the sources returned;
- `results.project` cuts each item to the fields asked for; `summary.summarize`
  writes the cited summary; `verify.confidence` scores the answer;
  `safety.sanitise_response` holds what leaves to safe text and links.

Each group's package exports its stages; helpers stay in their modules. What several
stages read of one text or link is read once, by `sleuth.text` (tokens, sentences)
and `sleuth.stages.links` (a link's parts). Import a
module's internals from the module itself (`sleuth.stages.results.dedupe.simhash`):
where a stage is named like its module (`dedupe`), the package name is the stage.
"""
