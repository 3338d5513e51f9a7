"""Sections: where a document is cut, the anchors that link to each part, chunks."""

from __future__ import annotations

import pytest

from sleuth.kb.sections import (
    CHUNK_CHARS,
    CODE_MARK,
    Chunk,
    Code,
    Heading,
    Section,
    prose,
    slug,
    split_sections,
)


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Dedupe", "dedupe"),
        ("How one search runs", "how-one-search-runs"),
        ("Set up & Run!", "set-up--run"),  # GitHub drops the punctuation, keeps both spaces
        ("0.1.0 (unreleased)", "010-unreleased"),
        ("SLEUTH_<KEY> and kb.path", "sleuth_key-and-kbpath"),
        ("本地知识库如何支持中文检索？", "本地知识库如何支持中文检索"),
        ("缓存策略：LRU 与 LFU", "缓存策略lru-与-lfu"),
        ("Café au lait", "café-au-lait"),
    ],
)
def test_anchor_is_githubs_slug_of_the_heading(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_each_heading_starts_a_section_and_text_before_the_first_has_no_anchor() -> None:
    sections = split_sections(
        [
            "Intro paragraph.",
            Heading("Install"),
            "Run pip.",
            "Then check.",
            Heading("本地知识库"),
            "中文段落。",
        ]
    )
    assert sections == (
        Section(None, None, ("Intro paragraph.",)),
        Section("Install", "install", ("Run pip.", "Then check.")),
        Section("本地知识库", "本地知识库", ("中文段落。",)),
    )


def test_repeated_headings_get_numbered_anchors() -> None:
    items: list[Heading | str] = [Heading("Usage"), "a", Heading("Usage"), "b", Heading("Usage")]
    items += ["c", Heading("Usage 1"), "d"]
    assert [section.anchor for section in split_sections(items)] == [
        "usage",
        "usage-1",
        "usage-2",
        "usage-1-1",  # GitHub: "usage-1" is taken by the second "Usage"
    ]


def test_explicit_ids_win_over_slugs() -> None:
    sections = split_sections([Heading("Install it", id="setup"), "Text."])
    assert sections[0].anchor == "setup"


def test_a_heading_with_no_text_is_folded_into_the_next_section() -> None:
    sections = split_sections(
        [
            Heading("Guide"),
            Heading("Stages"),
            Heading("Guard"),
            "Cleans the query.",
            Heading("Rank"),
        ]
    )
    assert sections == (
        Section("Guard", "guard", ("Cleans the query.",), above=("Guide", "Stages")),
        Section("Rank", "rank", ()),  # nothing follows: kept, so its words stay searchable
    )


def test_a_document_without_text_is_one_section() -> None:
    assert split_sections([]) == (Section(None, None, ()),)
    assert split_sections([Heading("Title"), Heading("Empty")]) == (
        Section("Empty", "empty", (), above=("Title",)),
    )


def test_code_blocks_are_kept_apart_from_prose() -> None:
    section = Section("Install", "install", ("Run it.", Code("pip install x"), "Done."))
    assert section.text == "Run it.\n\nDone."
    assert section.code == "pip install x"
    (chunk,) = section.chunks()
    assert (chunk.text, chunk.code) == ("Run it.\n\nDone.", "pip install x")
    # As stored, the prose keeps the code's place (for the snippet), one mark a piece.
    assert chunk.stored == f"Run it.\n\n{CODE_MARK}\n\nDone."
    assert prose(chunk.stored) == chunk.text
    two_pieces = Section(None, None, ("Like this:", Code("a = 1\n\nb = 2"))).chunks()[0]
    assert two_pieces.stored == f"Like this:\n\n{CODE_MARK * 2}"


def test_a_long_section_is_chunked_between_blocks() -> None:
    blocks = tuple(f"Paragraph {n} " + "word " * (40 + n % 7) for n in range(40))
    chunks = Section("Long", "long", blocks).chunks()
    assert len(chunks) == -(-sum(len(block) + 2 for block in blocks) // CHUNK_CHARS)
    assert "\n\n".join(chunk.text for chunk in chunks) == "\n\n".join(blocks)  # none cut
    sizes = [len(chunk.text) for chunk in chunks]
    assert max(sizes) <= CHUNK_CHARS + max(map(len, blocks))
    assert min(sizes) >= CHUNK_CHARS / 2


def test_a_short_section_and_a_single_long_block_are_one_chunk_each() -> None:
    assert len(Section(None, None, ("Short.",)).chunks()) == 1
    long_block = "word " * 1000
    assert Section(None, None, (long_block,)).chunks() == [Chunk(long_block, "")]
    assert Section(None, None, ()).chunks() == [Chunk("", "")]
