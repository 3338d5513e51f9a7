"""HTML pages as the common generators publish them: content only, real anchors."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from sleuth.kb import index_folder, search
from sleuth.kb.html import read_page
from sleuth.kb.sections import Heading

SPHINX = """<!DOCTYPE html><html><head><title>functools — Higher-order functions</title></head>
<body><div class="related" role="navigation"><h3>Navigation</h3><ul><li>index</li>
<li>modules</li><li>next</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="module-functools"><span id="functools-higher-order"></span>
<h1>functools — Higher-order functions<a class="headerlink" href="#module-functools">¶</a></h1>
<p>The functools module is for higher-order functions.</p>
<dl class="py function"><dt class="sig sig-object py" id="functools.lru_cache">
<span class="sig-prename">functools.</span><span class="sig-name">lru_cache</span>(maxsize=128)
<a class="headerlink" href="#functools.lru_cache">¶</a></dt>
<dd><p>Decorator to wrap a function with a memoizing callable.</p></dd></dl>
<p>More about the module after the entry.</p>
<section id="partial-objects">
<h2>partial Objects<a class="headerlink" href="#partial-objects">¶</a></h2>
<p>partial objects are callable objects created by partial().</p></section>
</section></div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><ul><li>functools</li></ul>
<h4>Previous topic</h4><p>itertools</p><h4>Next topic</h4><p>operator</p>
<div role="note"><h3>This Page</h3><ul><li>Report a Bug</li><li>Show Source</li></ul></div></div>
</div><div class="footer">© Copyright 2001-2024, Python Software Foundation.</div></body></html>
"""

DOCBOOK = """<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">
<head><title>25.1. Routine Vacuuming</title></head><body id="docContent">
<div class="navheader"><table><tr><th>25.1. Routine Vacuuming</th></tr>
<tr><td><a href="maintenance.html">Prev</a></td>
<td><a href="index.html">Home</a></td></tr></table></div>
<div class="sect1" id="ROUTINE-VACUUMING"><div class="titlepage"><div><div>
<h2 class="title">25.1. Routine Vacuuming</h2></div></div></div>
<div class="toc"><dl class="toc"><dt><a href="#VACUUM-FOR-SPACE-RECOVERY">
25.1.2. Recovering Disk Space</a></dt></dl></div>
<p>PostgreSQL databases require periodic maintenance known as vacuuming.</p>
<div class="sect2" id="VACUUM-FOR-SPACE-RECOVERY"><div class="titlepage"><div><div>
<h3 class="title">25.1.2. Recovering Disk Space</h3></div></div></div>
<a id="id-1.6.12.10.5.2" class="indexterm"></a>
<p>VACUUM FULL rewrites the table and returns disk space to the operating system.</p>
<div class="tip"><h3 class="title">Tip</h3><p>Plain VACUUM may be enough.</p></div>
<pre class="programlisting">VACUUM FULL mytable;</pre></div></div>
<div class="navfooter"><table><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table></div>
</body></html>
"""

MATERIAL = """<html><head><title>Install - MyTool</title></head><body>
<header class="md-header"><nav>MyTool Search</nav></header>
<div class="md-sidebar md-sidebar--primary"><nav class="md-nav">Home Install Usage</nav></div>
<main class="md-main"><article class="md-content__inner">
<a class="md-content__button md-icon" href="edit/install.md" title="Edit this page">Edit</a>
<h1 id="install">Install</h1><p>Install mytool with pip.</p>
<h2 id="from-source">From source</h2><p>Clone the repository and build it.</p>
</article></main><footer class="md-footer">Made with Material for MkDocs</footer></body></html>
"""

PAGES = {
    "library/functools.html": SPHINX,
    "routine-vacuuming.html": DOCBOOK,
    "install.html": MATERIAL,
}


def test_chrome_is_left_out() -> None:
    for page in PAGES.values():
        _title, items = read_page(page)
        text = " ".join(item.text if isinstance(item, Heading) else item for item in items)
        for chrome in ("Next topic", "This Page", "Copyright", "Prev", "Home", "Edit",
                       "Navigation", "Material for MkDocs", "¶"):  # fmt: skip
            assert chrome not in text, (chrome, text)


def test_api_entries_are_sections_and_the_text_after_them_returns_to_its_section() -> None:
    _title, items = read_page(SPHINX)
    headings = [(item.text.split("(")[0], item.id) for item in items if isinstance(item, Heading)]
    assert headings == [
        ("functools — Higher-order functions", "module-functools"),
        ("functools.lru_cache", "functools.lru_cache"),
        ("functools — Higher-order functions", "module-functools"),
        ("partial Objects", "partial-objects"),
    ]


def test_an_admonition_is_text_of_its_section_not_a_section_called_tip() -> None:
    _title, items = read_page(DOCBOOK)
    headings = [item.text for item in items if isinstance(item, Heading)]
    assert headings == ["25.1. Routine Vacuuming", "25.1.2. Recovering Disk Space"]
    tip = items.index("Plain VACUUM may be enough.")
    assert items[tip - 1].startswith("VACUUM FULL rewrites")


def test_every_section_link_opens_an_element_the_page_has(tmp_path: Path) -> None:
    root = tmp_path / "html"
    for name, page in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(page, encoding="utf-8")
    db = tmp_path / "kb.db"
    index_folder(db, root)
    with closing(sqlite3.connect(db)) as conn:
        links = conn.execute(
            "SELECT rel_path, anchor FROM sections JOIN documents ON documents.id = doc_id"
        ).fetchall()
    assert {anchor for _, anchor in links} >= {
        "functools.lru_cache",
        "partial-objects",
        "VACUUM-FOR-SPACE-RECOVERY",
        "from-source",
    }
    for rel_path, anchor in links:
        if anchor:
            ids = re.findall(r'\bid="([^"]+)"', PAGES[rel_path])
            assert anchor in ids, (rel_path, anchor)
    (hit,) = search(db, "memoizing decorator", 1)
    assert unquote(urlsplit(hit["url"]).fragment) == "functools.lru_cache"
    assert hit["snippet"] == "Decorator to wrap a function with a memoizing callable."
    (hit,) = search(db, "return disk space to the operating system", 1)
    assert hit["url"].endswith("routine-vacuuming.html#VACUUM-FOR-SPACE-RECOVERY")


def indexed_page(tmp_path: Path, name: str, page: str) -> Path:
    """A knowledge base of the one page `page`, saved as `name`."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / name).write_text(page, encoding="utf-8")
    db = tmp_path / "kb.db"
    index_folder(db, tmp_path / "pages")
    return db


# DocBook XSL's XHTML (Debian's debian-reference): anchors are empty `<a id="…"/>`, which an
# HTML parser, as a browser's, leaves open and copies into the headings that follow.
DOCBOOK_XHTML = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 1. Tutorials</title></head>
<body><div class="chapter"><div class="section"><div class="titlepage"><div><div>
<h3 class="title"><a id="_umask"/>1.2.4. Control of permissions: umask</h3></div></div></div>
<p>The umask limits the permissions of new files.</p>
<div class="table"><a id="theumaskvalueexamples"/><p class="title"><strong>Table 1.6.
The umask value examples</strong></p><div class="table-contents"><table class="table">
<tr><td>0022</td><td>writable only by the user</td></tr></table></div></div>
<p>Debian uses a private group for each user.</p></div>
<div class="section"><div class="titlepage"><div><div>
<h3 class="title"><a id="_groups"/>1.2.5. Permissions for groups of users</h3></div></div>
</div><p>A user must be made a member of the group with sudo vigr.</p></div></div></body></html>
"""


def test_a_section_link_opens_at_its_heading_in_docbook_xhtml(tmp_path: Path) -> None:
    db = indexed_page(tmp_path, "ch01.en.html", DOCBOOK_XHTML)
    (hit,) = search(db, "member of the group", 1)
    assert hit["url"].endswith("ch01.en.html#_groups")
    # Not the table's id the parser copied into the heading: a browser opens the first
    # element with an id, the table, for "#theumaskvalueexamples".
    tree = LexborHTMLParser(DOCBOOK_XHTML)
    first = tree.css_first('[id="_groups"]')
    assert first is not None and "1.2.5. Permissions for groups" in first.text()
    (hit,) = search(db, "umask limits permissions", 1)
    assert hit["url"].endswith("ch01.en.html#_umask")


# man2html (Debian's bash.html): each heading follows an empty named anchor, the
# paragraph before it still open.
MAN2HTML = """<HTML><HEAD><TITLE>Man page of BASH</TITLE></HEAD><BODY><H1>BASH</H1>
<A NAME="lbAB">&nbsp;</A>
<H2>NAME</H2>
bash - GNU Bourne-Again SHell
<P>
Bash is an sh-compatible command language interpreter.
<A NAME="lbAF">&nbsp;</A>
<!-- a comment -->
<H2>REDIRECTION</H2>
Before a command is executed, its input and output may be redirected.
<A NAME="lbAB">&nbsp;</A>
<H2>SEE ALSO</H2>
The Gnu Readline Library, Brian Fox and Chet Ramey.
</BODY></HTML>
"""


def test_a_heading_after_an_empty_named_anchor_links_to_it(tmp_path: Path) -> None:
    db = indexed_page(tmp_path, "bash.html", MAN2HTML)
    (hit,) = search(db, "input and output redirected", 1)
    assert hit["url"].endswith("bash.html#lbAF")
    (hit,) = search(db, "GNU Bourne-Again SHell", 1)
    assert hit["url"].endswith("bash.html#lbAB")
    # A name an earlier anchor has opens that one: the section links to the page.
    (hit,) = search(db, "Readline Library", 1)
    assert hit["url"].endswith("bash.html")


SPHINX_CLASS = """<html><head><title>inspect — Inspect live objects</title></head><body>
<div class="body" role="main"><section id="module-inspect"><h1>inspect</h1>
<dl class="py class"><dt class="sig sig-object py" id="inspect.Signature">
<em class="property">class </em><span class="sig-prename">inspect.</span><span
class="sig-name">Signature</span>(parameters=None)</dt>
<dd><p>A Signature object represents the call signature of a function.</p>
<dl class="py method"><dt class="sig sig-object py" id="inspect.Signature.bind">
<span class="sig-name">bind</span>(*args, **kwargs)</dt>
<dd><p>Create a mapping from positional and keyword arguments to parameters.</p></dd></dl>
<dl class="py attribute"><dt class="sig sig-object py" id="inspect.Parameter.kind.description">
<span class="sig-name">kind.description</span></dt>
<dd><p>Describes an enum value of Parameter.kind.</p></dd></dl>
</dd></dl></section></div></body></html>
"""


def test_a_class_member_is_headed_by_its_qualified_name(tmp_path: Path) -> None:
    _title, items = read_page(SPHINX_CLASS)
    headings = [item.text for item in items if isinstance(item, Heading)]
    assert list(dict.fromkeys(headings)) == [  # the class's heading comes back after each list
        "inspect",
        "class inspect.Signature(parameters=None)",
        "inspect.Signature.bind(*args, **kwargs)",
        "inspect.Parameter.kind.description",
    ]
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "inspect.html").write_text(SPHINX_CLASS, encoding="utf-8")
    index_folder(tmp_path / "kb.db", tmp_path / "html")
    (hit,) = search(tmp_path / "kb.db", "map positional and keyword arguments", 1)
    assert unquote(urlsplit(hit["url"]).fragment) == "inspect.Signature.bind"
    assert hit["title"].endswith("inspect.Signature.bind(*args, **kwargs)")  # what a user reads


def test_an_id_that_is_not_a_dotted_name_leaves_the_heading_as_written() -> None:
    page = """<html><body><main><dl><dt id="a3f9c2e1b0">run(int n)</dt><dd><p>Runs.</p></dd>
    <dt id="removePrefix(java.lang.String)">removePrefix(String prefix)</dt><dd><p>Strips.</p></dd>
    </dl></main></body></html>"""
    _title, items = read_page(page)
    headings = [item.text for item in items if isinstance(item, Heading)]
    assert headings == ["run(int n)", "removePrefix(String prefix)"]


# Headings as Node.js's API pages, Sphinx's viewcode extension (Django's docs) and
# Texinfo write them (the markup of nodejs-doc, python-django-doc and libffi's manual).
NODE_HEADING = """<html><body><main><h4><code>fs.readFile(path[, options], callback)</code>
<span><a class="mark" href="#fsreadfilepath-options-callback"
id="fsreadfilepath-options-callback">#</a></span><a aria-hidden="true" class="legacy"
id="fs_fs_readfile_path_options_callback"></a></h4><p>Reads the entire contents of a file.</p>
</main></body></html>"""
VIEWCODE_ENTRY = """<html><body><div role="main"><dl class="py class">
<dt class="sig sig-object py" id="django.core.signing.Signer"><em class="property">
<span class="pre">class</span> </em><span class="sig-name descname">Signer</span>(<em>key=None</em>)
<a class="reference internal" href="../_modules/django/core/signing.html#Signer">
<span class="viewcode-link"><span class="pre">[source]</span></span></a>
<a class="headerlink" href="#django.core.signing.Signer">¶</a></dt>
<dd><p>Returns a signer which uses key to generate signatures.</p></dd></dl></div></body></html>"""
TEXINFO_HEADING = """<html><body><h4 class="subsubsection" id="Structures-1">Data type: ffi_type
<a class="copiable-anchor" href="#Structures-1"> &para;</a></h4><p>The ffi_type type.</p>
</body></html>"""
C_SHARP = """<html><body><h2 id="csharp"><a href="#csharp">C#</a> bindings</h2><p>Use it.</p>
</body></html>"""


def test_a_permalink_mark_or_source_link_is_not_part_of_its_heading() -> None:
    headings = [
        [(item.text, item.id) for item in read_page(page)[1] if isinstance(item, Heading)]
        for page in (NODE_HEADING, VIEWCODE_ENTRY, TEXINFO_HEADING, C_SHARP)
    ]
    assert headings == [
        [("fs.readFile(path[, options], callback)", "fsreadfilepath-options-callback")],
        [("class django.core.signing.Signer(key=None)", "django.core.signing.Signer")],
        [("Data type: ffi_type", "Structures-1")],
        [("C# bindings", "csharp")],  # a link that names something stays
    ]


# Page frames as Django's docs theme (YUI grids), AsciiDoc (git's manual pages) and
# Node.js write them; and docutils' own docs, where `#sidebar` is a section.
DJANGO_THEME = """<html><head><title>Cryptographic signing</title></head><body>
<div class="document"><div id="custom-doc" class="yui-t6"><div id="hd">
<h1><a href="../index.html">Django 3.2.25 documentation</a></h1>
<div id="global-nav"><a href="../index.html">Home</a> | <a href="../genindex.html">Index</a></div>
<div class="nav">&laquo; <a href="a.html">previous</a> | <a href="b.html">next</a> &raquo;</div>
</div><div id="bd"><div id="yui-main"><div class="yui-b"><div class="yui-g">
<div class="section" id="s-cryptographic-signing"><h1>Cryptographic signing</h1>
<p>The golden rule of web application security is to never trust data.</p></div>
</div></div></div><div class="yui-b" id="sidebar"><h3>Last update:</h3>
<p class="topless">Nov 11, 2026</p></div></div>
<div id="ft"><div class="nav">&laquo; <a href="a.html">previous</a> | up</div></div>
</div></div></body></html>"""
ASCIIDOC_FOOTER = """<html><body><div id="header"><h1>git-add(1) Manual Page</h1></div>
<div id="content"><div class="sect1"><h2 id="_name">NAME</h2><p>git-add - Add file contents</p>
</div></div><div id="footer"><div id="footer-text">Last updated 2024-05-31 00:35:55 UTC</div>
</div></body></html>"""
NODE_TOC = """<html><body><div id="apicontent"><details id="toc" open><summary>Table of
contents</summary><ul><li><a href="#file-system">File system</a></li></ul></details>
<h2 id="file-system">File system</h2><p>The node:fs module enables interacting with files.</p>
</div></body></html>"""
DOCUTILS_SIDEBAR = """<html><body><div class="document"><div class="section" id="sidebar">
<h3>Sidebar</h3><p>Sidebars are like miniature, parallel documents.</p></div></div></body></html>"""


def test_a_generators_page_frame_is_left_out_and_a_section_with_such_an_id_is_not() -> None:
    pages = [read_page(page)[1] for page in (DJANGO_THEME, ASCIIDOC_FOOTER, NODE_TOC)]
    assert pages == [
        [
            Heading("Cryptographic signing", "s-cryptographic-signing", slug=False),
            "The golden rule of web application security is to never trust data.",
        ],
        [
            Heading("git-add(1) Manual Page", "header", slug=False),
            Heading("NAME", "_name", slug=False),
            "git-add - Add file contents",
        ],
        [
            Heading("File system", "file-system", slug=False),
            "The node:fs module enables interacting with files.",
        ],
    ]
    assert read_page(DOCUTILS_SIDEBAR)[1] == [
        Heading("Sidebar", "sidebar", slug=False),
        "Sidebars are like miniature, parallel documents.",
    ]


# A C interface page as SQLite's documentation writes it: the site's frame and the
# page's heading in `div.nosearch`, then a short text with many links.
SQLITE_PAGE = """<!DOCTYPE html><html><head><title>A Handle To An Open BLOB</title></head><body>
<div class=nosearch><a href="../index.html"><img class="logo" src="logo.gif" alt="SQLite"></a>
<div class="tagline desktoponly">Small. Fast. Reliable.<br>Choose any three.</div>
<div class="menu mainmenu"><ul><li><a href="../index.html">Home</a>
<li><a href="../about.html">About</a>
<li><a href="../docs.html">Documentation</a><li><a href="../download.html">Download</a>
<li><a href="../copyright.html">License</a><li><a href="../support.html">Support</a>
<li><a href="../prosupport.html">Purchase</a></ul></div></div>
<div class=nosearch><a href="intro.html"><h2>SQLite C Interface</h2></a>
<h2>A Handle To An Open BLOB</h2></div>
<blockquote><pre>typedef struct sqlite3_blob sqlite3_blob;</pre></blockquote>
<p>An instance of this object represents an open BLOB on which
<a href="../c3ref/blob_open.html">incremental BLOB I/O</a> can be performed.</p>
<p>Constructor: <a href="../c3ref/blob_open.html">sqlite3_blob_open()</a></p>
<p>Destructor: <a href="../c3ref/blob_close.html">sqlite3_blob_close()</a></p>
</body></html>"""


def test_a_sites_frame_is_left_out_of_its_share_of_links() -> None:
    _title, items = read_page(SQLITE_PAGE)
    assert items[0] == Heading("A Handle To An Open BLOB", None, slug=False)
    assert (
        "An instance of this object represents an open BLOB on which incremental BLOB I/O"
        " can be performed." in items
    )
    text = " ".join(str(item) for item in items)
    assert "Small. Fast." not in text and "SQLite C Interface" not in text


# rustdoc's source view: the line numbers in a `pre` of their own beside the code.
RUSTDOC_SOURCE = """<html><body><main><div class="example-wrap"><pre class="line-numbers">
<span id="1">1</span>
<span id="2">2</span>
<span id="3">3</span>
</pre><pre class="rust"><code>fn main() {
    println!("{}", 42);
}</code></pre></div><pre>1
3</pre><pre>      0
  1       2</pre></main></body></html>"""


def test_a_listings_line_numbers_are_not_code_of_their_own() -> None:
    _title, items = read_page(RUSTDOC_SOURCE)
    # Numbers that do not count lines one by one are kept (a heap's diagram).
    assert items == ['fn main() {\n    println!("{}", 42);\n}', "1\n3", "      0\n  1       2"]


def _repeated(entry: str, times: int) -> str:
    """`entry` `times` over, its `{n}` counting from 0: a long list of links."""
    return "".join(entry.format(n=n) for n in range(times))


TOCTREE_ENTRY = (
    '<li class="toctree-l1"><a class="reference internal" href="m{n}.html">'
    "<code>module{n}</code> — Module number {n}</a></li>"
)


# A Sphinx chapter: an introduction above a long table of contents.
CHAPTER = f"""<html><head><title>Data Types</title></head><body><div role="main">
<section id="data-types"><h1>Data Types</h1>
<p>The modules described in this chapter provide a variety of specialized data types
such as dates and times, fixed-type arrays, heap queues and enumerations.</p>
<p>See <a href="types.html">the built-in types</a>.</p>
<ul>{_repeated(TOCTREE_ENTRY, 30)}</ul></section></div></body></html>"""


INDEX_ENTRY = (
    '<li><a href="m{n}.html#abs">abs() (built-in function)</a>, '
    '<a href="m{n}.html#x">[{n}]</a></li>'
)


# A back-of-book index: short entries, every one a link.
GENINDEX = f"""<html><head><title>Index</title></head><body><div role="main">
<h1 id="index">Index</h1><h2 id="A">A</h2>
<table><tr><td><ul>{_repeated(INDEX_ENTRY, 40)}</ul></td></tr></table>
<p>Index generated.</p></div></body></html>"""


def test_a_page_of_links_keeps_only_its_prose_under_its_heading() -> None:
    _title, items = read_page(CHAPTER)
    assert items == [
        Heading("Data Types", "data-types", slug=False),
        "The modules described in this chapter provide a variety of specialized data types"
        " such as dates and times, fixed-type arrays, heap queues and enumerations.",
    ]
    _title, items = read_page(GENINDEX)
    assert items == []


def test_text_left_in_the_head_is_not_the_pages_first_section() -> None:
    # Node.js's template leaves a placeholder in <head>; the parser moves it to <body>.
    page = """<html><head><title>File system</title>
    __JS_FLAVORED_DYNAMIC_CSS__
    </head><body><h1 id="fs">File system</h1><p>The fs module.</p></body></html>"""
    assert read_page(page)[1] == [Heading("File system", "fs", slug=False), "The fs module."]
    # Without a <body> tag leading text is the page's own.
    assert read_page("Opening words.<h1>Title</h1><p>Body.</p>")[1][0] == "Opening words."


# rustdoc 1.63 (rust-doc, cargo's crates): a type's page.
RUSTDOC_TYPE = """<html><head><title>Thing in demo - Rust</title></head>
<body class="rustdoc struct"><main><div class="width-limiter"><section id="main-content">
<div class="main-heading"><h1 class="fqn"><span class="in-band">Struct
<a href="index.html">demo</a>::<a class="struct" href="#">Thing</a><button id="copy-path"
title="Copy item path">
<img src="clipboard.svg" alt="Copy item path"></button></span></h1>
<span class="out-of-band"><span class="since">1.0.0</span> · <a class="srclink" href="s.html">
source</a> · <a id="toggle-all-docs" href="javascript:void(0)">[<span class="inner">−</span>]
</a></span></div>
<div class="docblock"><p>A thing that holds bytes.</p></div>
<h2 id="implementations">Implementations</h2>
<section id="method.bytes" class="method"><span class="rightside"><span class="since">1.2.0
</span> · <a class="srclink" href="s.html#9">source</a></span><h4 class="code-header">pub fn
<a href="#method.bytes" class="fnname">bytes</a>(&amp;self) -&gt; &amp;[u8]<span
class="notable-traits">
<span class="notable-traits-tooltip">ⓘ<span class="notable-traits-tooltiptext">Notable traits
for &amp;[u8]</span></span></span></h4></section>
<div class="docblock"><p>The bytes it holds.</p></div>
<h2 id="blanket-implementations">Blanket Implementations</h2>
<div id="blanket-implementations-list"><section id="impl-Any" class="impl"><h3 class="code-header">
impl&lt;T&gt; Any for T</h3></section><div class="docblock"><p>Gets the TypeId of self.</p></div>
</div></section></div></main></body></html>"""


def test_rustdocs_labels_tooltips_and_blanket_implementations_are_chrome() -> None:
    _title, items = read_page(RUSTDOC_TYPE)
    assert items == [
        Heading("Struct demo::Thing", "main-content", slug=False),  # not the button's id
        "A thing that holds bytes.",
        Heading("Implementations", "implementations", slug=False),
        Heading("pub fn bytes(&self) -> &[u8]", "method.bytes", slug=False),
        "The bytes it holds.",
    ]


IMPLEMENTOR = (
    '<section id="impl-Add-for-t{n}" class="impl"><h3 class="code-header">impl '
    '<a class="trait" href="trait.Add.html">Add</a>&lt;<a href="t{n}.html">Type{n}</a>&gt; '
    'for <a href="t{n}.html">Type{n}</a></h3></section>'
)


# A trait with many implementors: rustdoc's headings link every type they name.
RUSTDOC_TRAIT = f"""<html><body class="rustdoc trait"><main><section id="main-content">
<h1 class="fqn">Trait <a href="index.html">demo</a>::<a href="#">Add</a></h1>
<div class="docblock"><p>The addition operator <code>+</code>.</p></div>
<h2 id="implementors">Implementors</h2>
<div id="implementors-list">{_repeated(IMPLEMENTOR, 40)}</div>
</section></main></body></html>"""


def test_links_in_headings_do_not_make_a_page_of_links() -> None:
    _title, items = read_page(RUSTDOC_TRAIT)
    assert items[:3] == [
        Heading("Trait demo::Add", "main-content", slug=False),
        "The addition operator +.",
        Heading("Implementors", "implementors", slug=False),
    ]
    assert Heading("impl Add<Type39> for Type39", "impl-Add-for-t39", slug=False) in items


# Texinfo 6.8 (makeinfo): a node of Octave's manual, its navigation above and below.
TEXINFO_NODE = """<html><head><meta name="Generator" content="makeinfo"></head>
<body lang="en"><div class="section" id="Special-Utility-Matrices"><div class="header"><p>
Next: <a href="Famous.html" accesskey="n" rel="next">Famous Matrices</a>, Up: <a href="M.html"
accesskey="u" rel="up">Matrix Manipulation</a> &nbsp; [<a href="index.html#SEC_Contents"
title="Table of contents" rel="contents">Contents</a>]</p></div>
<h3 class="section">16.3 Special Utility Matrices</h3>
<dl class="def"><dt id="index-eye"><span class="category">: </span><span><strong>eye</strong>
<em>(<var>n</var>)</em><a href="#index-eye" class="copiable-anchor"> &para;</a></span></dt>
<dd><p>Return an identity matrix.</p></dd></dl><p>Also see zeros.</p>
<hr><div class="header"><p>Next: <a href="Famous.html">Famous Matrices</a> &nbsp;
[<a href="index.html#SEC_Contents" title="Table of contents" rel="contents">Contents</a>]</p>
</div></div></body></html>"""


def test_texinfos_node_navigation_and_empty_category_are_left_out() -> None:
    _title, items = read_page(TEXINFO_NODE)
    assert items == [
        Heading("16.3 Special Utility Matrices", "Special-Utility-Matrices", slug=False),
        Heading("eye (n)", "index-eye", slug=False),
        "Return an identity matrix.",
        Heading("16.3 Special Utility Matrices", "Special-Utility-Matrices", slug=False),
        "Also see zeros.",
    ]
    # A header that is not Texinfo's navigation stays.
    assert read_page('<div class="header"><h1 id="t">Title</h1><p>Text.</p></div>')[1] == [
        Heading("Title", "t", slug=False),
        "Text.",
    ]
