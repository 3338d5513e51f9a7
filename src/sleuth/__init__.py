"""sleuth: search for AI agents.

The public API is what `__all__` lists; everything else is reachable by its module
path. A test keeps this list honest.

The names are imported on first use (PEP 562): `import sleuth.errors`, or the
`sleuth` command's `--help`, then does not pay for importing the whole pipeline
behind `Sleuth`.

>>> from sleuth import SearchRequest
>>> SearchRequest(query="sleuth de-duplication", max_results=3).max_results
3
"""

from __future__ import annotations

import typing

from sleuth import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from sleuth.contract import (
        ErrorInfo,
        ProjectedItem,
        ResultItem,
        SearchRequest,
        SearchResponse,
        Task,
    )
    from sleuth.errors import InvalidRequest, PolicyViolation, ProviderError, SearchError
    from sleuth.gateway import Sleuth

__all__ = [
    "ErrorInfo",
    "InvalidRequest",
    "PolicyViolation",
    "ProjectedItem",
    "ProviderError",
    "ResultItem",
    "SearchError",
    "SearchRequest",
    "SearchResponse",
    "Sleuth",
    "Task",
]

__version__ = "0.1.0"

# Where each public name lives.
_HOMES = {
    "ErrorInfo": "sleuth.contract",
    "ProjectedItem": "sleuth.contract",
    "ResultItem": "sleuth.contract",
    "SearchRequest": "sleuth.contract",
    "SearchResponse": "sleuth.contract",
    "Task": "sleuth.contract",
    "InvalidRequest": "sleuth.errors",
    "PolicyViolation": "sleuth.errors",
    "ProviderError": "sleuth.errors",
    "SearchError": "sleuth.errors",
    "Sleuth": "sleuth.gateway",
}


__getattr__, __dir__ = _lazy_names.hooks(__name__, _HOMES)
