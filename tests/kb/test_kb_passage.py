"""The snippet: one to three whole sentences with the most query-term overlap."""

from __future__ import annotations

from sleuth.kb.passage import MAX_CHARS, best_passage
from sleuth.kb.sections import CODE_MARK


def test_passage_starts_at_the_matching_sentence_and_adds_context() -> None:
    body = "Intro about nothing. Caches keep hot data. They expire after a while. Fourth one."
    assert best_passage(body, ("cache",)) == (
        "Caches keep hot data. They expire after a while. Fourth one."
    )


def test_passage_prefers_the_sentence_with_more_of_the_query() -> None:
    body = "缓存很常见。\n\n其他内容。\n\n缓存策略决定淘汰顺序。"
    assert best_passage(body, ("缓存", "策略", "缓存策略")) == "缓存策略决定淘汰顺序。"


def test_passage_never_runs_across_blocks() -> None:
    body = "Caching is fast.\n\nUnrelated next block. And more."
    assert best_passage(body, ("caching",)) == "Caching is fast."


def test_passage_stays_within_the_limit() -> None:
    sentence = "Caching " + "word " * 20 + "ends here."
    passage = best_passage(" ".join([sentence] * 3), ("caching",))
    assert passage == sentence + " " + sentence
    assert len(passage) <= MAX_CHARS


def test_a_single_long_sentence_is_returned_whole() -> None:
    sentence = "The cache " + "grows " * 80 + "forever."
    assert len(sentence) > MAX_CHARS
    assert best_passage(f"{sentence} Short one.", ("cache",)) == sentence


def test_without_a_match_the_opening_passage_is_used() -> None:
    assert best_passage("First. Second. Third. Fourth.\n\nLater.", ("absent",)) == (
        "First. Second. Third."
    )
    assert best_passage("", ("x",)) == ""


def test_prose_that_answers_beats_code_that_mentions_the_words() -> None:
    prose = "Intro. Dedupe removes duplicate results in three levels."
    code = 'sleuth search "how are duplicates removed"'
    assert best_passage(prose, ("duplicate", "removed"), code) == (
        "Dedupe removes duplicate results in three levels."
    )


def test_code_is_the_snippet_when_it_covers_much_more_of_the_query() -> None:
    prose = "Install it first. Then run it."
    code = "pip install sleuth-search"
    assert best_passage(prose, ("pip", "install", "sleuth"), code) == code


def test_without_a_match_prose_opens_before_code() -> None:
    assert best_passage("Prose here.", ("absent",), "code here") == "Prose here."
    assert best_passage("", ("absent",), "only code") == "only code"


def test_a_sentence_ending_in_a_colon_is_shown_with_the_example_it_introduces() -> None:
    body = f"Columns can be renamed. To rename a column:\n\n{CODE_MARK}\n\nIt is quick."
    code = "ALTER TABLE products\n    RENAME COLUMN product_no TO product_number;"
    assert best_passage(body, ("renam", "column"), code) == (
        "Columns can be renamed. To rename a column: "
        "ALTER TABLE products RENAME COLUMN product_no TO product_number;"
    )
    # A list introduced by a colon follows it in the same way.
    assert best_passage("The states are:\n\nReady. Done.", ("state",)) == (
        "The states are: Ready. Done."
    )


def test_a_long_example_is_cut_between_lines_and_marked() -> None:
    code = "\n".join(f"INSERT INTO t VALUES ({n}, 'row number {n}');" for n in range(20))
    passage = best_passage(f"To fill the table:\n\n{CODE_MARK}", ("fill", "table"), code)
    assert passage.startswith("To fill the table: INSERT INTO t VALUES (0, 'row number 0');")
    assert passage.endswith("'); …")
    assert len(passage) <= MAX_CHARS


def test_code_chosen_alone_is_led_by_the_sentence_introducing_it() -> None:
    body = f"Intro.\n\nFor example:\n\n{CODE_MARK}"
    assert best_passage(body, ("pg_ctl",), "$ pg_ctl stop") == "For example: $ pg_ctl stop"


def test_a_section_stored_without_code_marks_never_joins_code_to_prose() -> None:
    # Stored before the marks: where the code stood is not known.
    assert best_passage("To rename a column:", ("renam",), "ALTER TABLE t") == (
        "To rename a column:"
    )


def test_a_word_is_found_where_a_word_starts_not_inside_another() -> None:
    # "os" is not in "macOS", "ssl" not in "OpenSSL"; a stem is in the words it starts.
    body = (
        "On macOS, the length of the groups list may not exceed the system maximum.\n\n"
        "The os module lists groups."
    )

    assert best_passage(body, ("os",)) == "The os module lists groups."
    assert best_passage(body, ("os", "list")) == "The os module lists groups."
    tls = "OpenSSL refuses a hostname that does not match the certificate.\n\nThe ssl module."
    assert best_passage(tls, ("ssl",)) == "The ssl module."
    # Chinese words stand without spaces between them: found anywhere.
    assert (
        best_passage("第一段。\n\n用 tar 命令解压缩文件。", ("解压",)) == "用 tar 命令解压缩文件。"
    )


def test_an_item_asked_by_its_name_is_shown_by_its_description_not_its_declaration() -> None:
    # rustdoc: the declaration repeats the name the title holds; the prose says what it is.
    body = f"{CODE_MARK}\n\nAn iterator over the non-whitespace substrings of a string."
    code = "pub struct SplitWhitespace<'a> { /* private fields */ }"
    title = "SplitWhitespace in std::str - Rust — Struct std::str::SplitWhitespace"
    terms = ("splitwhitespace",)

    assert best_passage(body, terms, code, title) == (
        "An iterator over the non-whitespace substrings of a string."
    )
    assert best_passage(body, terms, code) == code  # the name is all the code is matched by
    # Words the title does not hold are still looked for in the code.
    assert best_passage(body, (*terms, "private"), code, title) == code


def test_without_a_match_a_label_gives_way_to_the_sentence_after_it() -> None:
    # Node.js opens each entry with its history: "Added in: v0.3.3".
    body = "Added in: v0.3.3\n\nReturns the total amount of system memory in bytes."
    assert best_passage(body, ("os.totalmem",)) == (
        "Returns the total amount of system memory in bytes."
    )
    # Not a block that introduces the next one, nor the only block there is.
    listed = "Platform dependent:\n\nthe time of the last change on Unix"
    assert best_passage(listed, ("st_ctime",)) == (
        "Platform dependent: the time of the last change on Unix"
    )
    assert best_passage("Added in: v0.3.3", ("os.totalmem",)) == "Added in: v0.3.3"


def test_a_label_is_shown_with_the_sentences_that_say_what_it_names() -> None:
    # A table's row: the function's signature in one cell, what it does in the next.
    body = (
        "rank () → bigint\n\nReturns the rank of the current row, with gaps.\n\n"
        "dense_rank () → bigint\n\nReturns the rank of the current row, without gaps."
    )
    assert best_passage(body, ("dense_rank",)) == (
        "dense_rank () → bigint Returns the rank of the current row, without gaps."
    )
    # Not with the next row's label, nor with what a colon goes on to.
    codes = "40P01 deadlock_detected\n\nClass 42 — Syntax Error or Access Rule Violation"
    assert best_passage(codes, ("deadlock_detected",)) == "40P01 deadlock_detected"
    assert best_passage("ssl_object instance\n\npipe:", ("ssl_object",)) == "ssl_object instance"
