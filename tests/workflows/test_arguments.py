"""A call's arguments as the tool's parameters allow them, with every complaint naming
the parameter and its allowed values."""

import pytest

from sleuth.errors import InvalidRequest
from sleuth.workflows.arguments import check_arguments, from_command_line
from sleuth.workflows.tool_models import ParameterSpec

PARAMS = {
    "product_name": ParameterSpec(required=True, max_length=40),
    "tone": ParameterSpec(enum=["angry", "calm"], default="calm"),
    "days": ParameterSpec(type="integer", default=7, minimum=1, maximum=30),
    "strict": ParameterSpec(type="boolean", default=False),
}


def refused(arguments: dict[str, object]) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        check_arguments(PARAMS, arguments)
    return caught.value


def test_defaults_fill_what_the_caller_left_out_and_null_means_the_default() -> None:
    assert check_arguments(PARAMS, {"product_name": " X1 ", "days": None}) == {
        "product_name": "X1",
        "tone": "calm",
        "days": 7,
        "strict": False,
    }


def test_every_bad_argument_is_named_at_once_with_its_allowed_values() -> None:
    error = refused({"tone": "sad", "days": 45, "colour": "red"})
    by_field = {detail.field: detail for detail in error.details}
    assert set(by_field) == {"colour", "product_name", "tone", "days"}
    assert by_field["colour"].allowed == ["product_name", "tone", "days", "strict"]
    assert by_field["tone"].allowed == ["angry", "calm"]
    assert by_field["days"].allowed == ["integer 1..30"]
    assert "product_name: required" in by_field["product_name"].message
    assert all(detail.code == "invalid_request" for detail in error.details)


def test_json_types_are_held_to_as_the_schema_says() -> None:
    assert refused({"product_name": "X1", "days": "7"}).field == "days"
    assert refused({"product_name": "X1", "days": True}).field == "days"
    assert refused({"product_name": "X1", "strict": 1}).allowed == ["true", "false"]
    assert refused({"product_name": 5}).field == "product_name"
    # A whole float is an integer to JSON Schema.
    assert check_arguments(PARAMS, {"product_name": "X1", "days": 5.0})["days"] == 5


def test_text_too_long_or_only_spaces_is_refused_with_the_length_allowed() -> None:
    assert refused({"product_name": "x" * 41}).allowed == ["1..40 characters"]
    assert refused({"product_name": "   "}).field == "product_name"


def test_command_line_pairs_are_read_as_their_parameters_types() -> None:
    pairs = ["product_name=X1 Pro", "days=3", "strict=yes", "tone=angry"]
    assert check_arguments(PARAMS, from_command_line(PARAMS, pairs)) == {
        "product_name": "X1 Pro",
        "tone": "angry",
        "days": 3,
        "strict": True,
    }
    # Text that does not read as the type fails as it would over HTTP.
    with pytest.raises(InvalidRequest, match="days: expected integer"):
        check_arguments(PARAMS, from_command_line(PARAMS, ["product_name=a", "days=three"]))
    with pytest.raises(InvalidRequest, match="NAME=VALUE"):
        from_command_line(PARAMS, ["days"])
