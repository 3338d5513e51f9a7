"""The public API is exactly what sleuth.__all__ says."""

import sleuth


def test_all_names_exist_and_nothing_public_is_unlisted() -> None:
    for name in sleuth.__all__:
        assert hasattr(sleuth, name), name
    public = {
        name
        for name, value in vars(sleuth).items()
        if not name.startswith("_")
        and not isinstance(value, type(sleuth))
        and name != "annotations"
    }
    assert public == set(sleuth.__all__)
