"""From provider hits to the items a response returns.

`normalize` (one shape for every back end), `refusal` (`scope`: a domain filter no
chosen back end can honour), `clean` (markup, ads, snippets cut at a sentence),
`dedupe` (the same page, or the same content, found more than once; `dedupe_pages`
again on the pages' full text when they were read), `rank` (one
order over every back end) and `project` (each item cut to the fields asked for).
"""

from sleuth.stages.results.clean import clean
from sleuth.stages.results.dedupe import dedupe, dedupe_pages
from sleuth.stages.results.normalize import normalize
from sleuth.stages.results.project import check_include, project, served_include
from sleuth.stages.results.rank import rank
from sleuth.stages.results.scope import refusal

__all__ = [
    "check_include",
    "clean",
    "dedupe",
    "dedupe_pages",
    "normalize",
    "project",
    "rank",
    "refusal",
    "served_include",
]
