"""`--help` of every sleuth command, as a person reads it: no Python type names."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from sleuth.api.cli import app

#: `<bool>` beside a flag (which takes no value) or a Python generic such as `<list[str]>`.
PYTHON_LABEL = re.compile(r"<bool>|<[^<>\s]*\[[^<>]*\]>")


def command_paths() -> Iterator[list[str]]:
    """Every command and group of the CLI, the root first, as the words that reach it."""

    def walk(command: typer.core.TyperGroup, path: list[str]) -> Iterator[list[str]]:
        yield path
        context = typer.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if isinstance(sub, typer.core.TyperGroup):
                yield from walk(sub, [*path, name])
            else:
                yield [*path, name]

    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    yield from walk(root, [])


PATHS = list(command_paths())


def help_of(path: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "200")  # one line per option: a label is never wrapped
    shown = CliRunner().invoke(app, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    return shown.output


def test_every_command_is_walked() -> None:
    names = {" ".join(path) for path in PATHS}
    assert {"", "search", "extract", "serve", "fields profile", "keys create"} <= names
    assert {"cache prune", "worker", "providers", "index"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(path) or "sleuth")
def test_help_has_no_python_type_labels(path: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    shown = help_of(path, monkeypatch)
    assert "--help" in shown
    assert PYTHON_LABEL.findall(shown) == []


def test_flags_have_no_label_and_repeatable_options_show_one_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = {
        line.split()[1]: line
        for line in help_of(["search"], monkeypatch).splitlines()
        if line.startswith("│ --")
    }
    assert lines["--json"].split()[2] == "Print"  # the help text follows the name
    assert lines["--domain"].split()[2] == "<str>"
    assert lines["--max-results"].split()[2] == "<int>"
