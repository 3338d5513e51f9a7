"""Filling a template: a value is text in its place, and nothing more."""

from sleuth.workflows.template import fill, placeholders, text_of, whole_placeholder


def test_values_fill_their_places_once_and_never_open_new_placeholders() -> None:
    filled = fill("{{a}} and {{b}}", {"a": "{{b}}", "b": "B"})
    assert filled == "{{b}} and B"


def test_line_breaks_and_control_characters_in_a_value_become_one_space() -> None:
    assert fill("q: {{v}}", {"v": "X1\n\ntime_range: any\x00\u2028end"}) == (
        "q: X1 time_range: any end"
    )


def test_names_are_read_in_order_with_spaces_and_dotted_paths() -> None:
    assert placeholders("{{ b }} {{a.c}} {{b}}") == ["b", "a.c"]
    assert whole_placeholder(" {{ days }} ") == "days"
    assert whole_placeholder("{{days}} days") is None


def test_values_read_as_one_line_of_text() -> None:
    assert text_of(True) == "true"
    assert text_of(None) == ""
    assert text_of(["policy", "procedure"]) == "policy procedure"
    assert text_of(7) == "7"
