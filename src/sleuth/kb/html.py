"""HTML pages as published: their title, and their headings and blocks in reading order.

Documentation generators wrap each page in chrome that is on every page and answers
nothing: navigation bars, sidebars ("Table of Contents", "Next topic", "This page"),
headers, footers, breadcrumbs, "edit this page" links, per-page tables of contents,
the ¶ links after headings (`CHROME`; any other link to the page itself whose text
is a symbol, a permalink mark such as Node.js's "#", is left out of its heading), and
Sphinx's "[source]" links. The page is parsed with selectolax (the Lexbor HTML5
parser); its main content is taken when it marks it (`<main>`, `role="main"`, one
`<article>`), and the elements in `CHROME` are dropped wherever they are.

A section's anchor is an element id the page really has, so every link opens where
it says: the heading's own id, else an id inside the heading (`<h2><a id="…">`; of
several, the first one no earlier element has: `_Fragments`), else that of an empty
anchor just before it (`<a name="lbAB">&nbsp;</a><h2>NAME</h2>`, man2html's), else
the id of the element the heading opens (`<section id="…"><h2>`, DocBook's
`<div class="sect1" id="…"><div class="titlepage">…<h2>`) or the nearest one around
it. A heading with none gets no anchor (the link opens the page), never one made up.

API entries are sections of their own: a `<dt id="functools.lru_cache">` (Sphinx,
Doxygen- and Javadoc-like pages) is a heading with that id, its `<dd>` its text;
after the list the text goes back to the section it was in. Sphinx writes a class's
members by their short name (`bind(*args)` for `inspect.Signature.bind`, 37 % of the
Python library's entries): the heading takes the qualified name from the id, so a
question naming the class finds its members.

A block whose text is nearly all links (`LINK_DENSITY`) is left out too, and so is
the text of a page that is mostly links (`LINK_DENSITY_PAGE`, kept by its title; the
links in its headings do not count): tables of contents, back-of-book indexes and
link lists point elsewhere and answer nothing. Such a page keeps only its prose,
under its headings: paragraphs without a link of `PROSE_MIN_CHARS` or more (a
chapter's introduction above its table of contents, "The modules described in this
chapter...").

>>> _title, items = read_page('<body><nav>Home</nav><main><section id="use"><h2>Use '
...     '<a class="headerlink" href="#use">¶</a></h2><p>Run it.</p></section></main></body>')
>>> items[0], items[1]
(Heading(text='Use', id='use', slug=False), 'Run it.')
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from sleuth.kb.sections import Code, Heading

Items = list[Heading | str]

#: Elements that are page chrome, not content (CSS selectors), from the generators
#: sleuth is tried on: plain HTML5 landmarks, Sphinx, MkDocs/Material, Docusaurus,
#: DocBook (PostgreSQL), Doxygen, Javadoc, Django's theme, AsciiDoc (git), Node.js,
#: SQLite's pages, rustdoc, Texinfo.
#: An id alone is not enough (`#sidebar`, `#toc`, `#footer` are sections or API
#: entries of docutils' and Sphinx's own docs): each is the generator's own markup.
CHROME = (
    "script, style, template, noscript, head, nav, header, footer, aside, form, "
    "[role=navigation], [role=banner], [role=contentinfo], [role=search], [hidden], "
    ".sphinxsidebar, .related, .headerlink, .footer, "  # Sphinx
    ".viewcode-link, .viewcode-back, "  # Sphinx's viewcode: "[source]", "[docs]"
    ".md-header, .md-sidebar, .md-footer, .md-source-file, .md-content__button, "  # Material
    ".theme-doc-toc-desktop, .theme-doc-toc-mobile, .theme-doc-footer, "  # Docusaurus
    ".theme-edit-this-page, .pagination-nav, .breadcrumbs, .theme-doc-breadcrumbs, "
    ".navheader, .navfooter, div.toc, "  # DocBook
    "#top, #nav-tree, #side-nav, .navpath, #MSearchBox, "  # Doxygen
    ".sub-nav, .top-nav, .bottom-nav, .skip-nav, "  # Javadoc
    "#hd, #ft, #bd > .yui-b, "  # YUI grids' header, footer, side column (Django's docs)
    "#footer-text, details#toc, "  # AsciiDoc's "Last updated", Node.js's table of contents
    # What SQLite's own site search skips (logo, slogan, menus), but for the page's heading.
    ".nosearch > :not(h1, h2, h3, h4, h5, h6), "
    # Texinfo's "Next: …, Previous: …, Up: … [Contents][Index]" above every node (6.x
    # `div.header`, 7.x `div.nav-panel`, older `div.node`): bash's, R's, Octave's manuals.
    ":is(div.header, div.nav-panel, div.node):has(a[rel=next], a[rel=prev], a[rel=contents]), "
    # rustdoc: the "Expand description" toggle; "1.0.0 · source · [−]" beside a heading;
    # the "ⓘ" tooltips of a signature and an example; the blanket implementations, the
    # same on every type's page (From<T> for T, Any, ...).
    "summary.hideme, .rustdoc :is(.rightside, .out-of-band, .notable-traits, .information, "
    "#blanket-implementations, #blanket-implementations-list)"
)
#: Labels of admonitions ("Note", "Tip", "Warning"): DocBook gives them an `<h3>`, which
#: would cut the section around them into a section called "Note" (PostgreSQL has 450).
#: The box's text stays in the section it is in.
ADMONITION_LABELS = (
    ":is(.note, .tip, .warning, .caution, .important, .admonition)"
    " > :is(h1, h2, h3, h4, h5, h6, .admonition-title)"
)  # one selector: lexbor walks the tree once for each of a list, and 42 took a third
#: Share of a block's characters in links above which it is a list of pointers.
LINK_DENSITY = 0.8
#: The same for a whole page: a back-of-book index, a table of contents.
LINK_DENSITY_PAGE = 0.5
#: Characters (not spaces) of a paragraph without links that such a page keeps: a
#: sentence or two, longer than an index's entries and a contents list's captions.
PROSE_MIN_CHARS = 80
_MAIN = ("main", "[role=main]")
_MARKED = ", ".join((*_MAIN, "article"))
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCKS = frozenset(
    {
        "address", "article", "blockquote", "br", "caption", "dd", "details", "div", "dl",
        "dt", "figcaption", "figure", "hr", "li", "main", "ol", "p", "section", "summary",
        "table", "tbody", "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_LEFT_OUT = f"{CHROME}, {ADMONITION_LABELS}"
_BODY_TAG = re.compile(r"<body[\s>]", re.IGNORECASE)


def read_page(source: str | bytes) -> tuple[str | None, Items]:
    """The page's title (its `<title>`, else its first `<h1>`) and the headings and
    blocks of its content, chrome left out. Bytes are read as UTF-8."""
    tree = LexborHTMLParser(source)
    title = None
    for selector in ("title", "h1"):
        node = tree.css_first(selector)
        if node is not None:
            title = " ".join(node.text(deep=True).split()) or None
            if title:
                break
    root = _content_root(tree)
    if root is None:
        return title, []
    for node in root.css(_LEFT_OUT):
        node.decompose()
    if tree.body is not None:
        _drop_text_from_head(tree.body, source)
    walker = _Walker(_Fragments(tree.root))
    walker.walk(root)
    walker.flush()
    if walker.link_share() >= LINK_DENSITY_PAGE:
        # An index or table-of-contents page: found by its title and its prose only.
        return title, _prose(walker.items, walker.prose)
    return title, walker.items


def _prose(items: Items, prose: set[int]) -> Items:
    """The blocks of `items` at the places `prose`, each under the last heading before
    it (a heading once)."""
    kept: Items = []
    heading: Heading | None = None
    for place, item in enumerate(items):
        if isinstance(item, Heading):
            heading = item
        elif place in prose:
            if heading is not None:
                kept.append(heading)
                heading = None
            kept.append(item)
    return kept


def _drop_text_from_head(body: Any, source: str | bytes) -> None:
    """Leaves out the text before the body's first element that stood before `<body>`
    in the source: text in `<head>` (a template's placeholder left in, Node.js's
    `__JS_FLAVORED_DYNAMIC_CSS__`) ends the head, and the parser moves it into the
    body. A page without a `<body>` tag keeps its leading text."""
    text = body.child
    while text is not None and text.tag == "-text" and not text.text_content.strip():
        text = text.next
    if text is None or text.tag != "-text":
        return
    raw = source if isinstance(source, str) else source.decode("utf-8", "replace")
    body_tag = _BODY_TAG.search(raw)
    if body_tag is None:
        return
    head = raw[: body_tag.start()]
    while text is not None and text.tag == "-text":
        after = text.next
        words = text.text_content.strip()
        if words and words not in head:
            return
        text.decompose()
        text = after


def _content_root(tree: Any) -> Any:
    # Most pages mark none (DocBook's): one walk of the tree tells, not three.
    if tree.css_first(_MARKED) is None:
        return tree.body if tree.body is not None else tree.root
    for selector in _MAIN:
        node = tree.css_first(selector)
        if node is not None:
            return node
    articles = tree.css("article")
    if len(articles) == 1:
        return articles[0]
    return tree.body if tree.body is not None else tree.root


class _Walker:
    """Collects items in reading order: inline text is buffered until a block ends.
    It also counts the page's characters (not spaces) and those in links."""

    def __init__(self, fragments: _Fragments) -> None:
        self._fragments = fragments
        self.items: Items = []
        self._words: list[str] = []
        self._blank = False  # a blank text was left out of the empty buffer
        self._link_chars = 0
        self._current: Heading | None = None
        self._page_chars = 0
        self._page_link_chars = 0
        # Where in `items` the paragraphs without a link of `PROSE_MIN_CHARS` are.
        self.prose: set[int] = set()

    def link_share(self) -> float:
        return self._page_link_chars / self._page_chars if self._page_chars else 0.0

    def flush(self) -> None:
        if not self._words:
            if self._blank:  # what a flush of the blank left out would have done
                self._page_link_chars += self._link_chars
                self._link_chars = 0
                self._blank = False
            return
        self._blank = False
        block = " ".join("".join(self._words).split())
        chars = len(block) - block.count(" ")
        self._page_chars += chars
        self._page_link_chars += self._link_chars
        # A block that is nearly all links is a pointer list (a table of contents, a
        # back-of-book index, "see also" lines), not text that answers.
        if block and self._link_chars < LINK_DENSITY * chars:
            if not self._link_chars and chars >= PROSE_MIN_CHARS:
                self.prose.add(len(self.items))
            self.items.append(block)
        self._words = []
        self._link_chars = 0

    def walk(self, node: Any) -> None:
        # The hottest loop of indexing HTML: one tag lookup per node, no generator.
        child = node.child
        while child is not None:
            tag = child.tag
            if tag == "-text":
                text = child.text_content or ""
                if self._words or not text.isspace():
                    self._words.append(text)
                else:  # the line breaks between blocks: nothing to read, flush is spared
                    self._blank = True
            elif tag in _HEADINGS:
                # Its links are not counted: rustdoc's headings link every type they
                # name (`impl Add<u8> for u8`), and a trait with many implementors
                # (`std::ops::Add`) read as a page of links, text and all.
                self._heading(child, self._counted(child, links=False))
            elif tag == "pre":
                self.flush()
                code = self._counted(child, joined=False).strip("\n")
                if code.strip() and not _line_numbers(code):
                    self.items.append(Code(code))
            elif tag == "dt" and child.id:
                self._heading(child, self._counted(child), api=True)
            elif tag == "dl" and _has_api_entry(child):
                before = self._current
                self.flush()
                self.walk(child)
                self.flush()
                if before is not None and self._current is not before:
                    self._emit(before)  # the text after the list belongs to this section again
            elif tag in _BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            elif tag == "a" and child.attrs.get("href"):
                self._link_chars += len("".join(child.text(deep=True).split()))
                self.walk(child)
            elif tag in _CELLS:
                self._words.append(" ")
                self.walk(child)
                self._words.append(" ")
            elif tag[0] not in "-!":  # not a comment
                inner = child.child
                if inner is not None and inner.next is None and inner.tag == "-text":
                    # An inline element around one text (`<span class="pre">x</span>`,
                    # most of them): its text, without walking it.
                    self._words.append(inner.text_content or "")
                else:
                    self.walk(child)
            child = child.next

    def _counted(self, node: Any, *, joined: bool = True, links: bool = True) -> str:
        """The text of an element read whole (a heading, code), counted for the page
        (with the text of its links, unless not `links`)."""
        text = node.text(deep=True)
        words = text.split()
        self._page_chars += len("".join(words))
        child = node.child
        if links and (child is None or child.next is not None or child.tag != "-text"):
            # Only an element that is not one text (most code is one) can hold links.
            self._page_link_chars += sum(
                len("".join(link.text(deep=True).split())) for link in node.css("a[href]")
            )
        return " ".join(words) if joined else text

    def _heading(self, node: Any, text: str, *, api: bool = False) -> None:
        self.flush()
        # Texinfo 6.8 writes a definition's empty category as ": " (": zeros (n)").
        text = _without_marks(node, text).removeprefix(": ")
        if text:
            if api:  # a `dt` is walked as an entry only when it has an id
                anchor: str | None = str(node.id)
                text = _qualified(text, str(node.id))
            else:
                anchor = _anchor_of(node, self._fragments)
            self._emit(Heading(text, anchor, slug=False))

    def _emit(self, heading: Heading) -> None:
        self.items.append(heading)
        self._current = heading


def _line_numbers(code: str) -> bool:
    """Whether a code block is a listing's gutter: its lines are numbers counting up by
    one, one a line (rustdoc's source pages write them in a `pre` of their own, beside
    the code; the heap diagram of Python's `heapq` numbers 0 to 30 too, several a line)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    return (
        len(lines) > 1
        and all(line.isdigit() for line in lines)
        and all(int(b) - int(a) == 1 for a, b in itertools.pairwise(lines))
    )


def _without_marks(heading: Any, text: str) -> str:
    """The heading's text without the permalink marks in it: a link to a place in the
    page whose text is a symbol (Node.js's `<a class="mark" href="#…">#</a>`,
    Texinfo's ¶, rustdoc's §), which names nothing a reader would search for. The
    marks of the generators `CHROME` knows are gone already; this is the rule for
    the rest. The mark's id still anchors the section (`_anchor_of`)."""
    child = heading.child
    if child is None or (child.next is None and child.tag == "-text"):
        return text  # one text: no link in it
    for link in heading.css('a[href^="#"]'):
        mark = "".join(link.text(deep=True).split())
        if mark and not any(char.isalnum() for char in mark):
            if text.endswith(mark):
                text = text[: -len(mark)].rstrip()
            elif text.startswith(mark):
                text = text[len(mark) :].lstrip()
    return text


def _has_api_entry(node: Any) -> bool:
    child = node.child
    while child is not None:
        if child.tag == "dt" and child.id:
            return True
        child = child.next
    return False


def _qualified(text: str, anchor: str) -> str:
    """`bind(*args)` under the id `inspect.Signature.bind` reads
    `inspect.Signature.bind(*args)` (and `kind.description` reads
    `inspect.Parameter.kind.description`); a heading that already names its id, or
    whose id is not a dotted name ending in words of the heading (Doxygen's hashes,
    Javadoc's signatures), is kept as it is."""
    parts = anchor.split(".")
    if len(parts) < 2 or anchor in text or not all(part.isidentifier() for part in parts):
        return text
    for start in range(1, len(parts)):  # the longest tail of the id the heading names
        tail = ".".join(parts[start:])
        found = _named_at(text, tail)
        if found >= 0:
            return text[:found] + anchor + text[found + len(tail) :]
    return text


def _named_at(text: str, name: str) -> int:
    r"""Where `text` names `name` whole: not inside a longer word or dotted name (as
    `(?<![\w.])name(?!\w)` finds it; `\w` is what `isalnum` or `_` is). A regular
    expression per entry's id missed re's cache: a tenth of indexing Python's pages."""
    found = text.find(name)
    while found >= 0:
        before = text[found - 1] if found else ""
        end = found + len(name)
        after = text[end] if end < len(text) else ""
        if not _word_or_dot(before) and not (after.isalnum() or after == "_"):
            return found
        found = text.find(name, found + 1)
    return -1


def _word_or_dot(char: str) -> bool:
    return char.isalnum() or char in ("_", ".")


class _Fragments:
    """What a link's fragment opens in the page, as a browser finds it: the first
    element with that id, else the first `<a>` with that name. Read in one pass of the
    page, when a heading first needs it (most pages never do)."""

    def __init__(self, root: Any) -> None:
        self._root = root
        self._ids: dict[str, int] | None = None
        self._names: dict[str, int] = {}

    def opens(self, node: Any, value: str) -> bool:
        """Whether a link to `#value` opens `node`."""
        if self._ids is None:
            self._ids = {}
            for element in self._root.css("[id]"):
                self._ids.setdefault(str(element.attributes.get("id")), element.mem_id)
            for element in self._root.css("a[name]"):
                self._names.setdefault(str(element.attributes.get("name")), element.mem_id)
        first = self._ids.get(value)
        if node.attributes.get("id") != value and first is None:
            first = self._names.get(value)
        return bool(first == node.mem_id)


def _anchor_before(heading: Any) -> tuple[Any, str] | None:
    """The id or name of an empty anchor just before the heading in the page, nothing
    but spaces and comments between: `<a name="lbAB">&nbsp;</a><h2>NAME</h2>`
    (man2html, texi2html, older Javadoc), also when the parser closed a paragraph
    around the anchor at the heading."""
    node = _last_before(heading.prev)
    while node is not None and node.tag != "a" and node.child is not None:
        node = _last_before(node.last_child)
    if node is None or node.tag != "a" or "href" in node.attributes:
        return None
    value = node.attributes.get("id") or node.attributes.get("name")
    if not value or node.text(deep=True).strip(" \t\n\xa0"):
        return None
    return node, str(value)


def _last_before(node: Any) -> Any:
    """`node`, or the first node before it that is neither a comment nor blank text."""
    while node is not None and (
        node.tag == "-comment" or (node.tag == "-text" and not (node.text_content or "").strip())
    ):
        node = node.prev
    return node


def _anchor_of(heading: Any, fragments: _Fragments) -> str | None:
    """The id a link to this heading can use: its own, one inside it, that of an empty
    anchor just before it, that of the element it is the first heading of, or else that
    of the nearest element around it that has one (a "Tip" box inside a section links
    to the section)."""
    own = heading.attributes.get("id")
    if own:
        return str(own)
    inner = [
        (node, str(value))
        for node in heading.css("[id]:not(button), a[name]")  # rustdoc's "#copy-path"
        if (value := node.attributes.get("id") or node.attributes.get("name"))
    ]
    if len(inner) > 1:
        # XHTML's `<a id="…"/>` (DocBook XSL's table and figure anchors), read as HTML,
        # stays open, and the parser copies it into the headings after it, id and all:
        # a link opens the first element with its id, the table, not this heading.
        inner = [(node, value) for node, value in inner if fragments.opens(node, value)] or inner
    if inner:
        return inner[0][1]
    before = _anchor_before(heading)
    if before is not None and fragments.opens(*before):  # not a name an earlier one has
        return before[1]
    node = heading.parent
    while node is not None and node.is_element_node and node.tag not in ("body", "html"):
        value = node.attributes.get("id")
        if value:
            return str(value)
        node = node.parent
    return None
