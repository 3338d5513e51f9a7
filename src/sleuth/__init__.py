"""sleuth: search for AI agents.

The public API is what `__all__` lists; everything else is reachable by its module
path. A test keeps this list honest.

>>> from sleuth import SearchRequest
>>> SearchRequest(query="sleuth de-duplication", max_results=3).max_results
3
"""

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
