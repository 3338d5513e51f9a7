"""`read_first`: a body read whole, under the limits, before an app that would swallow
the refusal sees it (the MCP endpoint's use; over real sockets in test_wire_limits)."""

from __future__ import annotations

import pytest
from starlette.types import Message, Receive

from sleuth.api.body_limits import Refused, _limited, read_first


def receiving(messages: list[Message]) -> Receive:
    queue = list(messages)

    async def receive() -> Message:
        return queue.pop(0)

    return receive


def part(body: bytes, more: bool) -> Message:
    return {"type": "http.request", "body": body, "more_body": more}


async def test_a_chunked_body_is_handed_on_as_one_message_then_the_disconnect() -> None:
    disconnect: Message = {"type": "http.disconnect"}
    receive = receiving([part(b'{"a"', True), part(b": 1}", True), part(b"", False), disconnect])
    replay = await read_first(receive)
    assert await replay() == part(b'{"a": 1}', False)
    assert await replay() == {"type": "http.disconnect"}


async def test_a_body_cut_short_by_a_disconnect_says_it_is_incomplete() -> None:
    replay = await read_first(receiving([part(b"{", True), {"type": "http.disconnect"}]))
    assert await replay() == part(b"{", True)
    assert await replay() == {"type": "http.disconnect"}


async def test_a_chunked_body_past_the_limit_is_refused_while_it_is_read_first() -> None:
    chunks = [part(b"x" * 600, True) for _ in range(3)] + [part(b"", False)]
    with pytest.raises(Refused) as refused:
        await read_first(_limited(receiving(chunks), 1024, timeout_s=5))
    assert (refused.value.error.code, refused.value.error.field) == ("request_too_large", "body")
