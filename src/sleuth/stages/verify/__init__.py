"""What the results are worth: their dates, their sources' trust, the answer's confidence.

`date_items` (`dates`: an undated result dated from its title, snippet or URL, which
feeds `freshness` and `dated_from`, never `published_at`), `date_from_pages` (a read
page's own dates, which do set `published_at`), `score_items` (`trust`: the source
trust score and its breakdown, with a read page's TLS) and `confidence` (one number
for the answer).
"""

from sleuth.stages.verify.confidence import confidence
from sleuth.stages.verify.dates import date_from_pages, date_items
from sleuth.stages.verify.trust import score_items

__all__ = ["confidence", "date_from_pages", "date_items", "score_items"]
