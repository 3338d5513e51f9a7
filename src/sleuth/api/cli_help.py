"""Readable `--help` for every `sleuth` command: no Python type names in the labels.

Typer 0.29 labels each parameter with its annotation: `<bool>` beside flags, which take
no value, and `<list[str]>` beside repeatable options and variadic arguments. Here a
flag gets no label, a repeatable or variadic one the label of one value (`<str>`, its
help saying it repeats), and a declared `metavar` is used as written, for arguments
too (Typer shows it only for options).

Typer builds its parameter objects itself, with no hook for their class, so
`ReadableHelpGroup` (the `cls` of every `typer.Typer` of the CLI) gives each parameter
of a command it resolves, and of its own help, the readable subclass: the same object,
with only how its type is displayed changed.
"""

from __future__ import annotations

# Typer 0.29 carries its own copy of click; its commands and contexts are of these types.
from typer import _click as click
from typer.core import TyperArgument, TyperGroup, TyperOption

__all__ = ["ReadableHelpGroup"]


class _ReadableOption(TyperOption):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return self.metavar
        return _one_value(self, ctx)


class _ReadableArgument(TyperArgument):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.metavar is not None:
            return None  # the name column shows it
        return _one_value(self, ctx)


def _one_value(param: TyperOption | TyperArgument, ctx: click.Context) -> str:
    if param.type_descriptor.is_list and not param.type_descriptor.is_choice:
        return f"<{param.bare_type().removeprefix('list[').removesuffix(']')}>"
    return param.display_type(ctx)


def _make_readable(command: click.Command, ctx: click.Context) -> None:
    for param in command.get_params(ctx):
        if type(param) is TyperOption:
            param.__class__ = _ReadableOption
        elif type(param) is TyperArgument:
            param.__class__ = _ReadableArgument


class ReadableHelpGroup(TyperGroup):
    """A Typer group whose commands' help (and its own) shows readable labels."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _make_readable(command, ctx)
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _make_readable(self, ctx)
        super().format_help(ctx, formatter)
