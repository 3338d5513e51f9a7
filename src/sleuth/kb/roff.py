"""Man pages as installed (`/usr/share/man/zh_CN/man1/tee.1.gz`): their roff source read
into a title and sections, as `sleuth.kb.manpage` reads one rendered to text.

No library reads roff into text; the formatters (groff, mandoc) are programs a machine
may lack. This reader knows the man(7) macros man pages are written in (and the common
ones of mdoc(7)) well enough for search: `.SH` and `.SS` (`.Sh`, `.Ss`) are headings;
`.PP`, `.TP`, `.IP` and their kin end a paragraph (a `.TP` tag and its text make one,
as a formatter lays them out); the font macros' arguments are text; `.EX`/`.EE` (and
pod2man's `.Vb`/`.Ve`, Tcl's `.CS`/`.CE`, mdoc's literal `.Bd`) are code; tables
(`.TS`/`.TE`) are read row by row. Escapes become their characters (`\\-` a hyphen,
`\\(em` a dash, `\\fB` nothing); strings defined by `.ds` are expanded; a conditional
is read as nroff reads it (`n` true, `t` false, anything else false), and macro
definitions are skipped. Any other request sets layout and is dropped, any other
macro's arguments are kept as text (a page's own macros carry its words).

The title is the NAME section's line (`tee - 从标准输入读入并写往标准输出和文件`),
which is not a section of its own: the title is on every section already.

>>> title, items = read_roff('.TH TEE 1\\n.SH NAME\\ntee \\\\- copy input\\n.SH OPTIONS\\n'
...     '.TP\\n\\\\fB\\\\-a\\\\fR\\nappend\\n')
>>> title, [item if isinstance(item, str) else item.text for item in items]
('tee - copy input', ['OPTIONS', '-a append'])
"""

from __future__ import annotations

import re

from sleuth.kb.sections import Code, Heading, join_lines

Items = list[Heading | str]

_NAME_HEADINGS = re.compile(r"^(?:NAME|名称|名字|名稱|名 称|命令名)\b", re.IGNORECASE)
_HEADINGS = frozenset({"SH", "SS", "Sh", "Ss"})
# Macros that end a paragraph (and may start the next with their arguments: `.IP tag`).
_BREAKS = frozenset(
    {"PP", "LP", "P", "TP", "TQ", "IP", "HP", "sp", "Sp", "Pp", "Lp", "It", "Bl", "El"}
)
_CODE_STARTS = frozenset({"EX", "Vb", "CS"})
_CODE_ENDS = frozenset({"EE", "Ve", "CE", "Ed"})
# The font macros whose arguments alternate fonts, written without spaces between them.
_ALTERNATING = frozenset({"BR", "RB", "BI", "IB", "IR", "RI"})
# Requests and macros that set layout or metadata only: their arguments are not text.
_LAYOUT = frozenset(
    {
        "ad", "na", "ne", "in", "ti", "ta", "ft", "ps", "vs", "nh", "hy", "ll", "lt", "pl",
        "PD", "RS", "RE", "mk", "rt", "ev", "bp", "IX", "UC", "so", "nr", "rm", "rr", "fi",
        "nf", "br", "ce", "cs", "ss", "fam", "hw", "ig", "pc", "tr", "cc", "c2", "ec", "eo",
        "ns", "rs", "ls", "po", "wh", "ch", "it", "em", "lf", "mso", "Os", "Dt", "Dd", "TH",
        "UE", "ME", "YS", "Ed", "Ef", "Ek", "Bk", "Bf", "AT", "DT", "ul", "cu", "bd", "am",
        "als", "hc", "nm", "nn", "pso", "sy", "tm", "ab", "ds", "as", "de", "if", "ie", "el",
        "Vb", "Ve", "EX", "EE", "CS", "CE", "TS", "TE", "T&", "Xo", "Xc", "Ns", "Sm", "Pf",
        "AS", "BS", "BE", "VS", "VE",  # Tcl's: tab widths, boxes, version bars
        "Bd",  # mdoc's display block that is not literal: its arguments are its layout
    }
)  # fmt: skip
# mdoc's inline macros: dropped from a line's words (`.Fl a` is `-a`, `.Xr ls 1` `ls(1)`).
_MDOC_INLINE = frozenset(
    {
        "Ar", "Cm", "Dv", "Em", "Er", "Ev", "Fa", "Fn", "Ft", "Ic", "Li", "Nm", "Pa", "Sy",
        "Va", "Xr", "Op", "Oo", "Oc", "Dq", "Do", "Dc", "Sq", "So", "Sc", "Qq", "Ql", "Pq",
        "Po", "Pc", "Aq", "Bq", "Brq", "Ms", "No", "Ux", "At", "Bx", "Ox", "Nx", "Fx", "St",
        "Lk", "Mt", "An", "Nd", "Cd", "In", "Ad", "Tn", "Ap", "Ns",
    }
)  # fmt: skip
# Escapes: `\(xx` and `\[name]` glyphs, `\*x`/`\*(xx`/`\*[name]` strings, `\f` fonts and
# `\s` sizes, registers and motions (dropped), and one-character escapes.
_ESCAPE = re.compile(
    r"\\(?:"
    r"\((?P<glyph2>..)|\[(?P<glyph>[^\]\s]*)\]"
    r"|\*(?:\((?P<string2>..)|\[(?P<string>[^\]]*)\]|(?P<string1>.))"
    r"|f(?:\(..|\[[^\]]*\]|.)|s[-+]?(?:\(..|\[[^\]]*\]|\d+|'[^']*')"
    r"|[nkgmMY](?:\(..|\[[^\]]*\]|.)|\$\d"
    r"|[hvwlLoXZbDxNRCSu](?P<q>[^\w\s\\]).*?(?P=q)"
    r"|(?P<char>.)"
    r")"
)
_GLYPHS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "bu": "•", "co": "©", "rg": "®", "tm": "™",
    "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "ga": "`", "aa": "´",
    "ti": "~", "ha": "^", "pl": "+", "mu": "×", "di": "÷", "de": "°", "+-": "±", "<=": "≤",
    ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "sc": "§", "ba": "|", "bv": "|", "rs": "\\",
    "sl": "/", "ua": "↑", "da": "↓", "fm": "′", "sq": "□", "ct": "¢", "Po": "£", "Eu": "€",
    "eq": "=", "**": "*", "la": "⟨", "ra": "⟩", "lB": "[", "rB": "]", "lC": "{", "rC": "}",
}  # fmt: skip
_CHARS = {
    "-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", ".": ".", "'": "´", "`": "`",
}  # fmt: skip
# A table's format lines end with a full stop; its options line with a semicolon.
_TABLE_OPTIONS = re.compile(r";\s*$")
_TABLE_TAB = re.compile(r"tab\s*\((.)\)")
# A request's name: up to a space or an escape (`.el\{`).
_NAME = re.compile(r"[^\s\\]*")
# A comment, to the end of the line (`\"`; the `\\"` of a macro body is not one).
_COMMENT = re.compile(r'(?<!\\)\\".*')


def is_roff(text: str) -> bool:
    """Whether `text` is roff source: it opens with a control line (a request, a macro
    or a comment; a page that only includes another, `.so man1/systemd.1`, too)."""
    return text.lstrip()[:1] in (".", "'")


def read_roff(text: str) -> tuple[str | None, Items]:
    """The title and the headings and blocks of a man page's roff source."""
    return _Reader().read(text)


class _Reader:
    def __init__(self) -> None:
        self.items: Items = []
        self.block: list[str] = []
        self.code: list[str] | None = None  # lines of the example being read
        self.title: str | None = None
        self.in_name = False
        self.strings: dict[str, str] = {}
        self.table: list[str] | None = None  # None: no table; else its rows
        self.table_tab = "\t"
        self.table_format = False  # reading the table's format lines
        self.last_if = True  # whether the last `.ie` held (for its `.el`)
        self.heading_next = False  # a `.SH` without arguments: the next line is its text
        self.page_name = ""  # mdoc's: the first `.Nm`'s, which a bare `.Nm` stands for

    def read(self, text: str) -> tuple[str | None, Items]:
        lines = _joined_lines(text)
        skip_until: str | None = None  # the end of a macro definition being skipped
        depth = 0  # open `\{` of a conditional that did not hold
        for line in lines:
            if skip_until is not None:
                if line.strip() == skip_until:
                    skip_until = None
                continue
            if depth:
                depth += line.count("\\{") - line.count("\\}")
                continue
            if line[:1] in ".'":
                name, rest = _request(line)
                if name in ("de", "de1", "am", "ig"):
                    ending = rest.split()[1:2] if name != "ig" else rest.split()[:1]
                    skip_until = "." + (ending[0] if ending else ".")
                    continue
                if name in ("if", "ie", "el"):
                    body = self._conditional(name, rest)
                    if body is None:
                        depth = max(0, rest.count("\\{") - rest.count("\\}"))
                        continue
                    line = body.replace("\\}", "").replace("\\{", "").strip()
                    if not line:
                        continue
                    if line[:1] not in ".'":
                        self._text(line)
                        continue
                    name, rest = _request(line)
                self._request(name, rest)
            else:
                self._text(line.replace("\\}", ""))
        self._end_table()
        self._end_code()
        self._flush()
        return self.title, self.items

    def _conditional(self, name: str, rest: str) -> str | None:
        """What a conditional runs (None: nothing). nroff's view: `n` holds, `t` not."""
        if name == "el":
            return None if self.last_if else rest
        condition, _, body = rest.strip().partition(" ")
        holds = condition in ("n", "!t")
        if name == "ie":
            self.last_if = holds
        return body if holds else None

    def _request(self, name: str, rest: str) -> None:
        if self.table is not None:
            if name == "TE":
                self._end_table()
            return
        if self.code is not None:
            if name in _CODE_ENDS:
                self._end_code()
            return
        if name in _HEADINGS:
            self._flush()
            self._heading(" ".join(_arguments(rest)))
        elif name in _BREAKS:
            self._flush()
            arguments = _arguments(rest)
            if name in ("IP", "It") and arguments:
                tag = arguments[0] if name == "IP" else " ".join(_mdoc_words(arguments))
                self._text(tag)
        elif name in _CODE_STARTS or (name == "Bd" and "-literal" in rest):
            self._flush()
            self.code = []
        elif name == "TS":
            self._flush()
            self.table, self.table_format = [], True
        elif name == "ds":
            key, _, value = rest.strip().partition(" ")
            # One opening quote lets a value start with spaces: it is not part of it.
            self.strings[key] = self._inline(value[1:] if value.startswith('"') else value)
        elif name == "Nd":
            self._text("- " + " ".join(_arguments(rest)))
        elif name in _ALTERNATING:
            self._text("".join(_arguments(rest)))
        elif name == "Nm":
            words = _mdoc_words(_arguments(rest))
            self.page_name = self.page_name or (words[0] if words else "")
            self._text(" ".join(words) if words else self.page_name)
        elif name in _MDOC_INLINE or name in ("Fl", "Xr"):
            self._text(" ".join(_mdoc_words([name, *_arguments(rest)])))
        elif name not in _LAYOUT and rest.strip():
            self._text(" ".join(_arguments(rest)))  # B, I, SM, UR, a page's own macros

    def _heading(self, text: str) -> None:
        heading = " ".join(self._inline(text).split())
        self.heading_next = not heading
        if heading:
            self.in_name = _NAME_HEADINGS.match(heading) is not None
            if not self.in_name:
                self.items.append(Heading(heading, None, slug=False))

    def _text(self, line: str) -> None:
        if self.heading_next:
            self._heading(line)
        elif self.table is not None:
            self._table_line(self.table, line)
        elif self.code is not None:
            self.code.append(self._inline(line))
        else:
            words = " ".join(self._inline(line).split())
            if words:
                self.block.append(words)

    def _table_line(self, table: list[str], line: str) -> None:
        if self.table_format:
            tab = _TABLE_TAB.search(line)
            if tab is not None:
                self.table_tab = tab.group(1)
            if _TABLE_OPTIONS.search(line) and not line.rstrip().endswith("."):
                return
            self.table_format = not line.rstrip().endswith(".")
            return
        cells = line.replace("T{", "").replace("T}", "").split(self.table_tab)
        row = " ".join(self._inline(" ".join(cells)).split())
        if row.strip("_=-| "):  # not a rule
            table.append(row)

    def _end_table(self) -> None:
        if self.table is not None:
            rows, self.table = self.table, None
            self.table_tab, self.table_format = "\t", False
            self.block.extend(rows)
            self._flush()

    def _end_code(self) -> None:
        if self.code is not None:
            code, self.code = "\n".join(self.code).strip("\n"), None
            if code.strip():
                self.items.append(Code(code))

    def _flush(self) -> None:
        if not self.block:
            return
        paragraph = join_lines(self.block)
        self.block = []
        if not self.in_name:
            self.items.append(paragraph)
        elif self.title is None:
            self.title = paragraph

    def _inline(self, text: str) -> str:
        if "\\" not in text:
            return text
        if '\\"' in text:
            text = _COMMENT.sub("", text)
        return _ESCAPE.sub(self._escaped, text)

    def _escaped(self, match: re.Match[str]) -> str:
        glyph = match["glyph2"] or match["glyph"]
        if glyph is not None:
            if glyph.startswith("u") and len(glyph) >= 5:
                try:
                    return "".join(chr(int(part, 16)) for part in glyph[1:].split("_"))
                except ValueError:
                    return ""
            return _GLYPHS.get(glyph, "")
        string = match["string2"] or match["string"] or match["string1"]
        if string is not None:
            return self.strings.get(string, "")
        # Of the other escapes only these are characters; the rest (`\&`, `\c`, `\|`)
        # join, break or space text.
        char = match["char"] or ""
        return _CHARS.get(char, "" if char.isascii() else char)


def _joined_lines(text: str) -> list[str]:
    """The source's lines, a line ending in an escaped newline joined to the next."""
    text = text.replace("\r\n", "\n")
    return re.sub(r"(?<!\\)\\\n", "", text).split("\n")


def _request(line: str) -> tuple[str, str]:
    """A control line's request or macro name and the rest of the line."""
    body = line[1:].lstrip(" \t")
    if body.startswith('\\"'):
        return "", ""  # a comment
    if '\\"' in body:
        body = _COMMENT.sub("", body)
    name = _NAME.match(body).group()  # type: ignore[union-attr] # it matches ""
    return name, body[len(name) :].lstrip(" \t")


def _arguments(rest: str) -> list[str]:
    """A macro's arguments: words, or quoted strings (`""` in one is a quote)."""
    if '"' not in rest:
        return rest.split()
    arguments: list[str] = []
    for quoted, word in re.findall(r'"((?:[^"]|"")*)"?|(\S+)', rest):
        arguments.append(quoted.replace('""', '"') if word == "" else word)
    return [argument for argument in arguments if argument]


def _mdoc_words(arguments: list[str]) -> list[str]:
    """An mdoc line's words without its macro names; `Fl a` reads `-a`, `Xr ls 1` `ls(1)`."""
    words: list[str] = []
    flag = xref = False
    for word in arguments:
        if word == "Fl":
            flag = True
            continue
        if word == "Xr":
            xref = True
            continue
        if word in _MDOC_INLINE:
            continue
        if flag:
            word, flag = "-" + word, False
        elif xref and words and word.isdigit():
            words[-1] += f"({word})"
            xref = False
            continue
        words.append(word)
    if flag:
        words.append("-")
    return words
