"""`ConnectionShare`: when a worker of `sleuth serve --processes N` sends a keep-alive
connection away. The workers' shared table is a plain list here."""

from __future__ import annotations

import pytest

from sleuth.api.connection_share import ConnectionShare


def test_a_worker_over_its_share_sends_away_only_what_it_holds_over_it() -> None:
    counts = [0, 4]
    mine = ConnectionShare(counts, 0)
    mine.held(12)  # 16 in all, an even share is 8
    told = [mine.should_leave() for _ in range(6)]
    assert told == [True, True, True, True, False, False]


def test_a_connection_that_left_frees_a_place_to_send_away_again() -> None:
    counts = [0, 7]
    mine = ConnectionShare(counts, 0)
    mine.held(9)
    assert mine.should_leave()
    assert not mine.should_leave()  # the one told is still open
    mine.held(8)
    mine.left()
    mine.held(9)  # it came back to this worker
    assert mine.should_leave()


def test_a_worker_at_or_under_its_share_keeps_its_connections() -> None:
    counts = [0, 7]
    mine = ConnectionShare(counts, 0)
    mine.held(8)  # 15 in all: a share of 8
    assert not mine.should_leave()
    other = ConnectionShare(counts, 1)
    assert not other.should_leave()


def test_one_worker_alone_never_sends_a_connection_away() -> None:
    mine = ConnectionShare([0], 0)
    mine.held(50)
    assert not mine.should_leave()


def test_a_slot_outside_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="slot 2 is outside a table of 2 workers"):
        ConnectionShare([0, 0], 2)
