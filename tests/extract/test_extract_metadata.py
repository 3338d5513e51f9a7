"""What a page states about itself, and nothing it does not state."""

from sleuth.extract.main_text import parse_html
from sleuth.extract.metadata import PageFacts, page_facts


def facts(html: str) -> PageFacts:
    tree = parse_html(html)
    assert tree is not None
    return page_facts(tree)


def test_json_ld_dates_author_and_publisher() -> None:
    found = facts(
        '<html><head><script type="application/ld+json">{"@context": "https://schema.org", '
        '"@graph": [{"@type": "NewsArticle", "headline": "Storm closes ports", '
        '"datePublished": "2025-02-01T06:00:00Z", "dateModified": "2025-02-01T09:30:00Z", '
        '"author": [{"@type": "Person", "name": "Ana Silva"}, {"name": "Li Wei"}], '
        '"publisher": {"@type": "Organization", "name": "Coast Daily"}}]}</script></head>'
        "<body><p>Text.</p></body></html>"
    )
    assert found.title == "Storm closes ports"
    assert found.published_at is not None and found.published_at.isoformat() == (
        "2025-02-01T06:00:00+00:00"
    )
    assert found.modified_at is not None and found.modified_at.hour == 9
    assert found.author == "Ana Silva, Li Wei" and found.site_name == "Coast Daily"


def test_a_time_element_marked_as_publication() -> None:
    found = facts(
        '<html><body><article><time pubdate datetime="2024-12-24">24 Dec</time>'
        '<time class="updated" datetime="2024-12-26T10:00:00+08:00">26 Dec</time>'
        "</article></body></html>"
    )
    assert found.published_at is not None and str(found.published_at.date()) == "2024-12-24"
    assert found.modified_at is not None and found.modified_at.isoformat() == (
        "2024-12-26T10:00:00+08:00"
    )


def test_english_bylines() -> None:
    found = facts(
        "<html><body><div class='article-meta'>Published March 3, 2025 · Updated: March 5, "
        "2025</div><p>Body.</p></body></html>"
    )
    assert found.published_at is not None and str(found.published_at.date()) == "2025-03-03"
    assert found.modified_at is not None and str(found.modified_at.date()) == "2025-03-05"


def test_a_byline_without_a_date_cue_gives_no_date() -> None:
    found = facts(
        "<html><body><div class='byline'>By Ana Silva, Coast Daily</div>"
        "<div class='date'>Tuesday</div><p>Body.</p></body></html>"
    )
    assert found.published_at is None and found.author == "Ana Silva"


def test_chinese_bylines() -> None:
    found = facts(
        "<html><body><div class='info'>发布时间：2025-06-18 09:00　更新时间：2025年6月19日　"
        "作者：王芳</div><p>正文。</p></body></html>"
    )
    assert found.published_at is not None and str(found.published_at.date()) == "2025-06-18"
    assert found.modified_at is not None and str(found.modified_at.date()) == "2025-06-19"
    assert found.author == "王芳"


def test_a_date_merely_in_the_text_is_never_taken() -> None:
    found = facts(
        "<html><body><p>The treaty was signed on 4 July 1990 and takes effect on "
        "1 January 2030.</p><time datetime='2030-01-01'>1 January 2030</time></body></html>"
    )
    assert found.published_at is None and found.modified_at is None


def test_the_one_h1_inside_the_title_is_the_title() -> None:
    found = facts(
        "<html><head><title>Storm closes ports - Coast Daily</title></head>"
        "<body><h1>Storm closes ports</h1></body></html>"
    )
    assert found.title == "Storm closes ports"
