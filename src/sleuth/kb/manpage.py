"""Man pages rendered to text (`man PAGE > page.txt`, `mandoc -T utf8 | col -bx`): their
title and sections.

A rendered man page opens with a header line that names the page twice, `LS(1)  User
Commands  LS(1)`, and closes with a footer of the same kind. Its section headings
(`NAME`, `DESCRIPTION`, 名称, `描述 DESCRIPTION`) start at the left margin, its
subsection headings a few spaces in, and the text under them is indented further.
Each heading starts a section. The title is the NAME section's one line, `tee - read
from standard input and write to standard output and files`: what a person asks for
is what the page says it does, and a file name such as `tee.1` says nothing of that.

Any other text file is not a man page (`read_manpage` returns None) and stays one
section, as before. Text files have no anchors: headings link to the file itself.

>>> title, items = read_manpage("TEE(1)   User Commands   TEE(1)\\n\\nNAME\\n       tee - "
...     "copy input\\n\\nOPTIONS\\n       -a     append\\n")
>>> title, [str(item) if isinstance(item, str) else item.text for item in items]
('tee - copy input', ['OPTIONS', '-a append'])
"""

from __future__ import annotations

import re

from sleuth.kb.sections import Heading, join_lines

Items = list[Heading | str]

# `LS(1)   User Commands   LS(1)`: the page's name and section, repeated at the end.
# The middle may be empty (`SMB.CONF(5)   SMB.CONF(5)`, `init_module()   init_module()`),
# and a long name leaves no room for the section on the right, where it is lower-cased
# (`SYSTEMD-MACHINE-ID-SETUP(1)   systemd-machine-id-setup`).
_HEADER = re.compile(r"^\s*(\S.*?)\((\w*)\)(?:\s.*\S)?\s+(?i:\1)(?:\(\2\))?\s*$")
# The section that names the page and says in one line what it does.
_NAME_HEADINGS = re.compile(r"^(?:NAME|名称|名字|名稱|名 称|命令名)\b", re.IGNORECASE)
# Headings are at most this far in (subsections: three spaces); text is further in.
_HEADING_INDENT = 3


def read_manpage(text: str) -> tuple[str | None, Items] | None:
    """The title and the headings and blocks of a rendered man page; None when `text`
    is not one."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    header = _HEADER.match(lines[first])
    if header is None:
        return None
    lines = lines[first + 1 :]
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
    # The footer (`GNU coreutils 9.1   2022年9月   TEE(1)`) ends with the page's name too.
    if last is not None and lines[last].rstrip().endswith(f"{header[1]}({header[2]})"):
        lines = lines[:last]
    items: Items = []
    block: list[str] = []
    title: str | None = None
    in_name = False

    def flush() -> None:
        nonlocal title
        if block:
            paragraph = join_lines(block)
            if not in_name:
                items.append(paragraph)
            elif title is None:
                title = paragraph
            block.clear()

    for line in lines:
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent <= _HEADING_INDENT:  # a heading, a blank line before it or not
            flush()
            heading = " ".join(stripped.split())
            in_name = indent == 0 and _NAME_HEADINGS.match(heading) is not None
            if not in_name:  # its line is the title, on every section already
                items.append(Heading(heading, None, slug=False))
        else:
            block.append(" ".join(stripped.split()))
    flush()
    return title, items
