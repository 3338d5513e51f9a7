"""Every error knows its code, category and status; adapters need no isinstance chains."""

import pytest

from sleuth import errors


@pytest.mark.parametrize(
    ("status", "code", "category"),
    [
        (429, "rate_limited", "recoverable"),
        (503, "provider_unavailable", "recoverable"),
        (502, "provider_unavailable", "recoverable"),
        (504, "provider_unavailable", "recoverable"),
        (401, "auth_failed", "non_recoverable"),
        (403, "auth_failed", "non_recoverable"),
        (400, "provider_rejected", "non_recoverable"),
        (500, "bad_response", "unexpected"),
    ],
)
def test_http_status_maps_to_code_and_category(status: int, code: str, category: str) -> None:
    error = errors.from_status("brave", status, "body text", retry_after_s=7)
    info = error.info()
    assert (info.code, info.category, info.http_status, info.provider) == (
        code,
        category,
        status,
        "brave",
    )
    assert info.retry_after_s == 7
    assert "HTTP " + str(status) in info.message


def test_every_error_class_has_its_own_code() -> None:
    classes = [errors.SearchError, *_subclasses(errors.SearchError)]
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes))
    assert all(cls.category in ("recoverable", "non_recoverable", "unexpected") for cls in classes)


def test_invalid_request_carries_field_and_allowed_values() -> None:
    error = errors.InvalidRequest("time_range: bad", field="time_range", allowed=["any"])
    assert error.status_hint == 422
    assert error.info().field == "time_range"
    assert error.details[0].allowed == ["any"]


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found
