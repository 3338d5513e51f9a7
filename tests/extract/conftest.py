"""Page-reading tests: a threaded loopback web server the pages come from."""

from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer


@pytest.fixture
def site() -> Iterator[HTTPServer]:
    """A web server on 127.0.0.1 that answers several requests at once (a page that
    never finishes must not hold up the others). It has no robots.txt (404), as most
    sites; a test that wants one registers it first."""
    server = HTTPServer(host="127.0.0.1", threaded=True)
    server.start()
    server.expect_request("/robots.txt").respond_with_data("Not Found", status=404)
    yield server
    server.clear()
    server.stop()
