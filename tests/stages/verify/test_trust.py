"""trust: authority by public suffix, allow/deny, freshness, diversity, https, click prior.

Totals are worked out by hand in each test from the issue's formula
0.4·authority + 0.3·freshness + 0.2·diversity + 0.1·security, so a reader can check them.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.contract import ErrorInfo, Freshness, ResultItem, TlsStatus
from sleuth.extract.models import ExtractedPage, TlsInfo
from sleuth.stages.verify.trust import (
    TrustSettings,
    registrable_domain,
    score_items,
    tls_proved,
    trust,
)

DEFAULTS = TrustSettings()


def item(
    url: str | None,
    *,
    title: str = "结果",
    freshness: Freshness = "unknown",
    sources: list[str] | None = None,
) -> ResultItem:
    return ResultItem(
        id=title,
        url=url,
        title=title,
        providers=["bing"],
        freshness=freshness,
        sources=sources if sources is not None else ([url] if url else []),
    )


# --- registrable_domain -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "domain"),
    [
        ("https://www.gov.cn/zhengce/content/2025-03/01/content_1.htm", "www.gov.cn"),
        ("https://www.moe.gov.cn/jyb_xwfb/", "moe.gov.cn"),
        ("https://News.BBC.co.uk:443/world", "bbc.co.uk"),
        ("http://user:secret@finance.sina.com.cn:8080/stock?id=1#top", "sina.com.cn"),
        ("www.ox.ac.uk", "ox.ac.uk"),
        ("example.com:8080/path", "example.com"),
        ("example.com.", "example.com"),
        ("//cdn.jsdelivr.net/npm/x.js", "jsdelivr.net"),
        ("https://alice.github.io/blog/", "alice.github.io"),
        ("https://bob.github.io/", "bob.github.io"),
        ("http://例子。中国/首页", "例子.中国"),
        ("http://xn--fsqu00a.xn--fiqs8s/", "例子.中国"),
        ("ｗｗｗ．ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"),
        ("http://192.168.1.10:8000/admin", "192.168.1.10"),
        ("http://[2001:db8::1]:8080/", "2001:db8::1"),
        ("localhost:3000", "localhost"),
        ("gov.cn", "gov.cn"),
    ],
)
def test_registrable_domain_of_web_urls_and_hosts(given: str, domain: str) -> None:
    assert registrable_domain(given) == domain


@pytest.mark.parametrize(
    "given",
    [
        None,
        "",
        "file:///home/me/笔记/缓存策略.md",
        "file:///C:/Users/me/guide.md#install",
        "mailto:press@example.com",
        "javascript:alert(1)",
        "data:text/html,<b>hi</b>",
        "ftp://ftp.gnu.org/gnu/",
        "https://",
        "http://[::1",
    ],
)
def test_non_web_or_broken_urls_have_no_domain(given: str | None) -> None:
    assert registrable_domain(given) is None


# --- authority ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "authority"),
    [
        ("https://www.gov.cn/zhengce/", 1.0),  # gov.cn
        ("https://www.miit.gov.cn/", 1.0),
        ("https://www.gov.uk/guidance", 1.0),  # gov.uk
        ("https://www.whitehouse.gov/briefing-room/", 1.0),  # .gov
        ("https://www.canada.gc.ca/en.html", 1.0),  # gc.ca
        ("https://www.mhlw.go.jp/", 1.0),  # go.jp
        ("https://www.economie.gouv.fr/", 1.0),  # gouv.fr
        ("https://www.ox.ac.uk/admissions", 0.95),  # ac.uk
        ("https://www.pku.edu.cn/", 0.95),  # edu.cn
        ("https://www.u-tokyo.ac.jp/", 0.95),  # ac.jp
        ("https://www.unimelb.edu.au/", 0.95),  # edu.au
        ("https://web.mit.edu/", 0.95),  # .edu
        ("https://www.python.org/downloads/", 0.85),  # .org
        ("https://www.redcross.org.cn/", 0.85),  # org.cn
        ("https://www.oxfam.org.uk/", 0.85),  # org.uk
        ("https://www.example.com/", 0.7),  # .com
        ("https://www.jd.com.cn/", 0.7),  # com.cn
        ("https://www.bbc.co.uk/news", 0.7),  # co.uk
        ("https://x.blogspot.com/2025/03/post.html", 0.7),  # platform suffix under .com
        ("https://example.io/", 0.5),  # others
        ("https://www.example.net/", 0.5),
        ("https://www.baidu.cn/", 0.5),
        ("https://alice.github.io/notes/", 0.5),  # github.io user page: not github.com
        ("https://gov.tk/", 0.5),  # a registered name that merely starts with gov
        ("https://edu.xyz/", 0.5),
        ("http://192.168.1.10/", 0.5),  # an IP address has no class
        (None, 0.5),  # no URL: nothing to judge
    ],
)
def test_authority_by_public_suffix_class(url: str | None, authority: float) -> None:
    assert trust(item(url), DEFAULTS).authority == authority


def test_github_io_user_pages_are_independent_domains() -> None:
    two_users = item(
        "https://alice.github.io/rust-notes/",
        sources=["https://alice.github.io/rust-notes/", "https://bob.github.io/rust/"],
    )
    one_user = item(
        "https://alice.github.io/rust-notes/",
        sources=["https://alice.github.io/rust-notes/", "https://alice.github.io/rust/"],
    )

    assert trust(two_users, DEFAULTS).diversity == 0.9
    assert trust(one_user, DEFAULTS).diversity == 0.6


def test_allow_and_deny_lists_override_the_class() -> None:
    settings = TrustSettings(allow=["Example.IO"], deny=["content-farm.com", "spam.github.io"])

    assert trust(item("https://docs.example.io/intro"), settings).authority == 0.95
    assert trust(item("https://www.content-farm.com/top10"), settings).authority == 0.0
    assert trust(item("https://spam.github.io/"), settings).authority == 0.0
    assert trust(item("https://alice.github.io/"), settings).authority == 0.5  # not listed


def test_allow_and_deny_scores_are_configurable() -> None:
    settings = TrustSettings(
        allow=["zhihu.com"], allow_authority=0.8, deny=["gov.tk"], deny_authority=0.1
    )

    assert trust(item("https://www.zhihu.com/question/1"), settings).authority == 0.8
    assert trust(item("https://gov.tk/"), settings).authority == 0.1


def test_a_denied_domain_still_gets_the_other_parts_of_the_formula() -> None:
    settings = TrustSettings(deny=["content-farm.com"])
    farm = item("https://www.content-farm.com/", freshness="realtime")

    # 0.4·0.0 + 0.3·1.0 + 0.2·0.6 + 0.1·1.0 = 0.52
    assert trust(farm, settings).total == pytest.approx(0.52)


@pytest.mark.parametrize(
    ("entry", "hint"),
    [("www.example.com", "'example.com'"), ("news.bbc.co.uk", "'bbc.co.uk'")],
)
def test_list_entries_below_a_registrable_domain_are_rejected_with_the_name_to_use(
    entry: str, hint: str
) -> None:
    with pytest.raises(ValidationError, match=f"not a registrable domain; list {hint}"):
        TrustSettings(deny=[entry])


def test_a_domain_cannot_be_both_allowed_and_denied() -> None:
    with pytest.raises(ValidationError, match="both allow and deny"):
        TrustSettings(allow=["example.com"], deny=["EXAMPLE.com"])


def test_suffix_table_can_class_one_registrable_domain_and_rejects_unknown_classes() -> None:
    settings = TrustSettings(suffix_classes={**DEFAULTS.suffix_classes, "europa.eu": "gov"})

    assert trust(item("https://commission.europa.eu/"), settings).authority == 1.0
    assert trust(item("https://commission.europa.eu/"), DEFAULTS).authority == 0.5
    with pytest.raises(ValidationError, match="class 'news' has no authority score"):
        TrustSettings(suffix_classes={"xinhuanet.com": "news"})


def test_class_scores_are_configurable() -> None:
    settings = TrustSettings(authority={"gov": 0.9, "edu": 0.9, "org": 0.6, "com": 0.4})

    assert trust(item("https://www.gov.uk/"), settings).authority == 0.9
    assert trust(item("https://www.bbc.co.uk/"), settings).authority == 0.4


# --- freshness, diversity, security -------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "score"),
    [
        ("realtime", 1.0),
        ("past_week", 0.9),
        ("past_month", 0.7),
        ("archive", 0.3),
        ("unknown", 0.5),
    ],
)
def test_freshness_score_per_label(label: Freshness, score: float) -> None:
    assert trust(item("https://www.example.com/", freshness=label), DEFAULTS).freshness == score


def test_unknown_freshness_is_configurable_and_every_label_needs_a_score() -> None:
    settings = TrustSettings(
        freshness={
            "realtime": 1.0,
            "past_week": 0.9,
            "past_month": 0.7,
            "archive": 0.3,
            "unknown": 0.2,
        }
    )

    assert trust(item("https://www.example.com/"), settings).freshness == 0.2
    with pytest.raises(ValidationError, match="missing: \\['unknown'\\]"):
        TrustSettings(freshness={"realtime": 1, "past_week": 1, "past_month": 1, "archive": 1})


@pytest.mark.parametrize(
    ("sources", "diversity"),
    [
        (["https://finance.sina.com.cn/a.html"], 0.6),
        # two hosts and both schemes on one registrable domain still count once
        (["https://finance.sina.com.cn/a.html", "http://tech.sina.com.cn/b.html"], 0.6),
        (["https://www.example.com/a", "https://example.com/a?utm_source=x"], 0.6),
        (["https://finance.sina.com.cn/a.html", "https://www.163.com/money/a.html"], 0.9),
        (
            [
                "https://finance.sina.com.cn/a.html",
                "https://www.163.com/money/a.html",
                "https://www.reuters.com/markets/a",
            ],
            1.0,
        ),
        (
            [
                "https://finance.sina.com.cn/a.html",
                "https://news.sina.com.cn/b.html",
                "https://www.163.com/money/a.html",
                "https://www.reuters.com/markets/a",
                "https://www.bloomberg.com/news/a",
            ],
            1.0,
        ),
    ],
)
def test_diversity_counts_independent_registrable_domains(
    sources: list[str], diversity: float
) -> None:
    assert trust(item(sources[0], sources=sources), DEFAULTS).diversity == diversity


def test_diversity_falls_back_to_the_item_url_when_sources_are_empty() -> None:
    assert trust(item("https://www.163.com/a", sources=[]), DEFAULTS).diversity == 0.6
    assert trust(item(None, sources=[]), DEFAULTS).diversity == 0.6


def test_diversity_table_is_configurable_and_its_last_entry_covers_larger_counts() -> None:
    settings = TrustSettings(diversity=(0.5, 1.0))
    urls = ["https://a.example.com/", "https://www.163.com/", "https://www.qq.com/"]

    assert trust(item(urls[0], sources=urls[:1]), settings).diversity == 0.5
    assert trust(item(urls[0], sources=urls), settings).diversity == 1.0


@pytest.mark.parametrize(
    ("url", "security"),
    [
        ("https://www.python.org/", 1.0),
        ("HTTPS://WWW.PYTHON.ORG/", 1.0),
        ("http://www.python.org/", 0.0),
        ("ftp://ftp.gnu.org/gnu/", 0.0),
        ("file:///home/me/notes/缓存.md", 1.0),
        ("www.python.org", 0.5),  # a bare host: no scheme to judge
        (None, 0.5),
    ],
)
def test_transport_security_by_scheme(url: str | None, security: float) -> None:
    assert trust(item(url), DEFAULTS).security == security


def test_no_url_security_is_configurable() -> None:
    assert trust(item(None), TrustSettings(unknown_security=0.0)).security == 0.0


# --- local knowledge base ----------------------------------------------------------------


def test_local_files_have_local_authority_count_as_secure_and_have_no_domain() -> None:
    local = item("file:///home/me/kb/缓存策略.md#过期", title="缓存策略", freshness="past_month")

    score = trust(local, DEFAULTS)

    assert (score.authority, score.security, score.diversity) == (0.8, 1.0, 0.6)
    assert score.domain is None
    # 0.4·0.8 + 0.3·0.7 + 0.2·0.6 + 0.1·1.0 = 0.32 + 0.21 + 0.12 + 0.10 = 0.75
    assert score.total == pytest.approx(0.75)
    assert trust(local, TrustSettings(local_authority=0.6)).authority == 0.6


def test_local_files_count_as_one_source_and_a_web_copy_as_another() -> None:
    two_files = ["file:///home/me/kb/a.md", "file:///home/me/kb/b.md"]
    file_and_web = ["file:///home/me/kb/a.md", "https://docs.python.org/3/library/"]

    assert trust(item(two_files[0], sources=two_files), DEFAULTS).diversity == 0.6
    assert trust(item(file_and_web[0], sources=file_and_web), DEFAULTS).diversity == 0.9


# --- worked examples ---------------------------------------------------------------------


def test_worked_example_official_chinese_policy_page() -> None:
    policy = item(
        "https://www.gov.cn/zhengce/content/202503/content_7010000.htm",
        title="国务院关于2025年部分节假日安排的通知",
        freshness="past_week",
    )

    score = trust(policy, DEFAULTS)

    # 0.4·1.0 + 0.3·0.9 + 0.2·0.6 + 0.1·1.0 = 0.40 + 0.27 + 0.12 + 0.10 = 0.89
    assert score.total == pytest.approx(0.89)
    assert score.as_breakdown() == {
        "authority": 1.0,
        "freshness": 0.9,
        "diversity": 0.6,
        "security": 1.0,
    }


def test_worked_example_old_plain_http_blog() -> None:
    blog = item(
        "http://blog.example.io/2019/01/redis-tips", title="Redis tips", freshness="archive"
    )

    # 0.4·0.5 + 0.3·0.3 + 0.2·0.6 + 0.1·0.0 = 0.20 + 0.09 + 0.12 + 0.00 = 0.41
    assert trust(blog, DEFAULTS).total == pytest.approx(0.41)


def test_worked_example_breaking_news_found_on_three_domains() -> None:
    news = item(
        "https://www.zhihu.com/question/1",
        title="华为 Mate 70 发布会",
        freshness="realtime",
        sources=[
            "https://www.zhihu.com/question/1",
            "https://weibo.com/1234/abc",
            "https://www.163.com/tech/article/1.html",
        ],
    )

    # 0.4·0.7 + 0.3·1.0 + 0.2·1.0 + 0.1·1.0 = 0.28 + 0.30 + 0.20 + 0.10 = 0.88
    assert trust(news, DEFAULTS).total == pytest.approx(0.88)


def test_worked_example_undated_university_page_backed_twice() -> None:
    page = item(
        "https://www.ox.ac.uk/admissions/undergraduate/fees-and-funding",
        title="Tuition fees",
        sources=[
            "https://www.ox.ac.uk/admissions/undergraduate/fees-and-funding",
            "https://www.bbc.co.uk/news/education-1",
        ],
    )

    # 0.4·0.95 + 0.3·0.5 + 0.2·0.9 + 0.1·1.0 = 0.38 + 0.15 + 0.18 + 0.10 = 0.81
    assert trust(page, DEFAULTS).total == pytest.approx(0.81)


def test_worked_example_result_without_url() -> None:
    # 0.4·0.5 + 0.3·0.5 + 0.2·0.6 + 0.1·0.5 = 0.20 + 0.15 + 0.12 + 0.05 = 0.52
    assert trust(item(None, title="无链接的结果"), DEFAULTS).total == pytest.approx(0.52)


def test_weights_are_divided_by_their_sum() -> None:
    authority_only = TrustSettings(
        authority_weight=2.0, freshness_weight=0, diversity_weight=0, security_weight=0
    )

    assert trust(item("https://www.pku.edu.cn/"), authority_only).total == pytest.approx(0.95)
    with pytest.raises(ValidationError, match="must be above 0"):
        TrustSettings(authority_weight=0, freshness_weight=0, diversity_weight=0, security_weight=0)


# --- click-through prior -----------------------------------------------------------------


def test_click_prior_is_ignored_while_its_weight_is_zero() -> None:
    shop = item("https://item.jd.com/100.html", freshness="past_week")

    score = trust(shop, DEFAULTS, priors={"jd.com": 0.9})

    assert score.click is None
    assert "click" not in score.as_breakdown()
    assert score.total == trust(shop, DEFAULTS).total


def test_click_prior_joins_with_renormalised_weights() -> None:
    settings = TrustSettings(click_weight=0.25)
    page = item("https://www.example.com/pricing", freshness="past_week")

    score = trust(page, settings, priors={"example.com": 0.3, "163.com": 1.0})

    # base 0.4·0.7 + 0.3·0.9 + 0.2·0.6 + 0.1·1.0 = 0.77 over weights summing to 1.0;
    # with the prior: (0.77 + 0.25·0.3) / (1.0 + 0.25) = 0.845 / 1.25 = 0.676
    assert score.total == pytest.approx(0.676)
    assert score.click == 0.3
    assert score.as_breakdown()["click"] == 0.3


def test_click_prior_keeps_the_total_within_bounds_and_missing_domains_keep_the_base() -> None:
    settings = TrustSettings(click_weight=5.0)
    best = item("https://www.gov.cn/", freshness="realtime", sources=["https://www.gov.cn/"] * 3)
    worst = item("http://spam.example.io/", freshness="archive")

    assert 0.0 <= trust(worst, settings, priors={"spam.example.io": 0.0}).total <= 1.0
    assert trust(best, settings, priors={"www.gov.cn": 1.0}).total <= 1.0
    # no prior for this domain: the formula, unchanged
    assert trust(worst, settings, priors={"163.com": 1.0}).total == pytest.approx(0.41)


def test_click_prior_outside_zero_to_one_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"not in 0\.\.1"):
        trust(item("https://www.qq.com/"), TrustSettings(click_weight=0.1), {"qq.com": 1.5})


# --- score_items -------------------------------------------------------------------------


def test_score_items_sets_score_and_breakdown_on_copies_in_order() -> None:
    items = [
        item("http://blog.example.io/post", title="Blog post", freshness="archive"),
        item("https://www.gov.cn/", title="中国政府网", freshness="past_week"),
    ]

    scored = score_items(items, DEFAULTS)

    assert [s.title for s in scored] == ["Blog post", "中国政府网"]
    assert [s.source_trust_score for s in scored] == [pytest.approx(0.41), pytest.approx(0.89)]
    assert scored[1].trust_breakdown["authority"] == 1.0
    assert items[0].source_trust_score is None and items[0].trust_breakdown == {}
    assert ResultItem.model_validate(scored[0].model_dump()) == scored[0]


# --- a read page's TLS (include content) ---------------------------------------------------


def page(tls: TlsStatus, reason: str, error: str | None = None) -> ExtractedPage:
    failure = None
    if error is not None:
        failure = ErrorInfo(code=error, category="non_recoverable", message=reason)
    return ExtractedPage(
        url="https://docs.python.org/3/", tls=TlsInfo(status=tls, reason=reason), error=failure
    )


def test_a_read_pages_tls_replaces_the_https_stand_in() -> None:
    found = item("https://docs.python.org/3/")
    assert trust(found, DEFAULTS).security == 1.0  # https: the stand-in
    scored = {
        status: score_items([found], DEFAULTS, pages={found.id: read})[0]
        for status, read in {
            "valid": page("valid", "certificate verified for docs.python.org"),
            "invalid": page("invalid", "certificate has expired", error="tls_invalid"),
            "plain": page("none", "plain http"),
        }.items()
    }
    assert {name: it.trust_breakdown["security"] for name, it in scored.items()} == {
        "valid": 1.0,
        "invalid": 0.0,
        "plain": 0.0,
    }
    # 0.4·0.85 + 0.3·0.5 + 0.2·0.6 + 0.1·0.0 for the failed certificate
    assert scored["invalid"].source_trust_score == 0.61


def test_a_fetch_that_failed_otherwise_proves_nothing_about_tls() -> None:
    timed_out = page("none", "not fetched", error="timeout")
    assert tls_proved(timed_out) is None
    found = item("https://docs.python.org/3/")
    (scored,) = score_items([found], DEFAULTS, pages={found.id: timed_out})
    assert scored.trust_breakdown["security"] == 1.0


def test_the_tls_scores_are_configured_for_every_status() -> None:
    assert (
        trust(
            item("https://a.example/"),
            TrustSettings(tls={"valid": 0.8, "invalid": 0.1, "none": 0.2}),
            tls="valid",
        ).security
        == 0.8
    )
    with pytest.raises(ValidationError, match="tls needs a score for every status"):
        TrustSettings(tls={"valid": 1.0})
