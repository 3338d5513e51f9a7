"""Content policy: results a deployment will not show, replaced by a fixed notice.

Owns one question about each result: does its title or snippet hold a configured
term, or does it come from a configured domain? Such a result keeps its place in the
list but loses everything it said: title and snippet become the notice
("根据内容安全策略，该结果暂不展示" for a Chinese query, "This result is withheld under
the content policy" otherwise), its link, domain, merged links and provider extras go,
it gets the flag `withheld_by_policy`, and a `Degradation(kind="result_withheld")`
records which policy entry it matched (by number, never the term itself). The policy
judges nothing else (injections are `sleuth.stages.safety.injection`, markup is
`sleuth.stages.safety.sanitise`) and does no I/O; settings come from `content_policy:` in
sleuth.yaml, and the default, with no terms and no domains, withholds nothing.

Matching, so that the spelling of a term does not hide it: texts and terms are
compared after NFKC normalisation (full-width letters are ASCII), case folding, and
removal of invisible characters (zero-width and bidi controls, soft hyphens). A term
with Chinese characters matches anywhere, spaces between its characters allowed; a
Latin-script term matches whole words only, so "ass" does not withhold "class". Every
term list applies to every result, whatever its language: a Chinese page can quote an
English term. The keys (`zh`, `en`, any other) only organise the lists.

When a result's page was read (`include: content`), the page is judged too: its main
text as the title and snippet are, and the address it ended at (after redirects) as
the result's link; a withheld result loses its `content` as well.

It runs after the clean stage (terms are matched on the visible text, not on markup
that could split them, "炸<b></b>弹") and before de-duplication, so that each back
end's wording is judged on its own and a withheld link never rides along in a merged
result's `sources`.

>>> settings = ContentPolicySettings(terms={"en": ["casino"]})
>>> item = ResultItem(id="1", url="https://x.example/", providers=["p"], title="Best CASINO bonus")
>>> (kept,), (why,) = apply_content_policy([item], settings, language="en")
>>> kept.title, kept.url, kept.flags
('This result is withheld under the content policy', None, ['withheld_by_policy'])
>>> why.kind, why.reason
('result_withheld', 'result 1 withheld: its title matches content_policy.terms.en entry #1')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from sleuth.contract import Degradation, ResultItem
from sleuth.extract.models import ExtractedPage
from sleuth.private_attrs import private
from sleuth.stages.links import split_link
from sleuth.text import CJK, is_cjk, language_of

__all__ = [
    "NOTICES",
    "WITHHELD_FLAG",
    "ContentPolicySettings",
    "apply_content_policy",
]

#: Flag on a result the policy withheld.
WITHHELD_FLAG = "withheld_by_policy"
#: What a withheld result's title and snippet say, by the language of the query.
NOTICES = {
    "zh": "根据内容安全策略，该结果暂不展示",
    "en": "This result is withheld under the content policy",
}

# A Latin word continues through letters and digits that are not Chinese.
_WORD_EDGE_BEFORE = rf"(?<![^\W{CJK}])"
_WORD_EDGE_AFTER = rf"(?![^\W{CJK}])"


@dataclass(frozen=True, slots=True)
class _Matcher:
    # One alternation per list; group "t<n>" is the list's entry #n+1.
    terms: tuple[tuple[str, re.Pattern[str]], ...]
    domains: tuple[str, ...]


class ContentPolicySettings(BaseModel):
    """The `content_policy:` section of sleuth.yaml. The default withholds nothing.

    >>> ContentPolicySettings(domains=["https://www.Example.com/path"]).domains
    ['example.com']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    terms: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Per language ('zh', 'en', or any other key), terms that withhold a result "
            "whose title or snippet holds one. Every list applies to every result; a term "
            "with Chinese characters matches anywhere, a Latin-script term whole words "
            "only; case, full-width forms and invisible characters do not matter. "
            "Default: none."
        ),
    )
    domains: list[str] = Field(
        default_factory=list,
        description=(
            "Results whose link is on one of these domains, or a subdomain of one, are "
            "withheld, e.g. ['example.com']. Default: none."
        ),
    )
    _matcher: _Matcher = PrivateAttr()

    @field_validator("terms")
    @classmethod
    def _non_empty_terms(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for language, terms in value.items():
            for index, term in enumerate(terms):
                if not _folded(term):
                    raise ValueError(f"terms.{language}[{index}] is empty")
        return value

    @field_validator("domains")
    @classmethod
    def _normalise_domains(cls, value: list[str]) -> list[str]:
        domains = []
        for raw in value:
            domain = raw.strip().lower().removeprefix("https://").removeprefix("http://")
            domain = domain.split("/", 1)[0].removeprefix("www.").strip(".")
            if not domain or " " in domain or "." not in domain:
                raise ValueError(f"{raw!r} is not a domain; expected e.g. 'example.com'")
            domains.append(domain)
        return domains

    def model_post_init(self, context: object, /) -> None:
        self._matcher = _Matcher(
            terms=tuple(
                (language, _alternation(terms)) for language, terms in self.terms.items() if terms
            ),
            domains=tuple(self.domains),
        )

    @property
    def matcher(self) -> _Matcher:
        """The terms and domains compiled, set at validation (`sleuth.private_attrs`)."""
        found: _Matcher = private(self, "_matcher")
        return found


def apply_content_policy(
    items: Sequence[ResultItem],
    settings: ContentPolicySettings,
    language: str | None = None,
    pages: Mapping[str, ExtractedPage] | None = None,
) -> tuple[list[ResultItem], list[Degradation]]:
    """`items` in order, those the policy withholds replaced by the notice, and one
    `result_withheld` degradation per withheld item.

    `language` is the query's ('zh' gives the Chinese notice, anything else the
    English one); None picks by each result's own text. `pages` maps item ids to the
    page read for them, judged with their item.
    """
    matcher = settings.matcher
    if not matcher.terms and not matcher.domains:
        return list(items), []
    kept: list[ResultItem] = []
    withheld: list[Degradation] = []
    for item in items:
        reason = _violation(item, matcher, pages.get(item.id) if pages else None)
        if reason is None:
            kept.append(item)
            continue
        notice_language = language or language_of(f"{item.title} {item.snippet}")
        kept.append(_withheld(item, NOTICES["zh" if notice_language == "zh" else "en"]))
        withheld.append(
            Degradation(
                kind="result_withheld",
                provider=item.providers[0] if item.providers else None,
                reason=f"result {item.id} withheld: {reason}",
            )
        )
    return kept, withheld


def _violation(item: ResultItem, matcher: _Matcher, page: ExtractedPage | None) -> str | None:
    """Which policy entry `item` (or its page) matches, in words that do not repeat the term."""
    hosts = [("link", _host(item))]
    if page is not None and page.final_url:
        hosts.append(("page's address", _host_of(page.final_url)))
    for what, host in hosts:
        if host is None:
            continue
        for index, domain in enumerate(matcher.domains):
            if host == domain or host.endswith("." + domain):
                return f"its {what} matches content_policy.domains entry #{index + 1}"
    texts = [("title", item.title), ("snippet", item.snippet)]
    if page is not None:
        texts.append(("page", page.text))
    for field, text in texts:
        folded = _folded(text)
        if not folded:
            continue
        for language, pattern in matcher.terms:
            found = pattern.search(folded)
            if found is not None and found.lastgroup is not None:
                entry = int(found.lastgroup[1:]) + 1
                return f"its {field} matches content_policy.terms.{language} entry #{entry}"
    return None


def _withheld(item: ResultItem, notice: str) -> ResultItem:
    flags = item.flags if WITHHELD_FLAG in item.flags else [*item.flags, WITHHELD_FLAG]
    return item.model_copy(
        update={
            "title": notice,
            "snippet": notice,
            "url": None,
            "domain": None,
            "sources": [],
            "fields": {},
            "fact_check": None,
            "content": None,
            "flags": flags,
        }
    )


def _host(item: ResultItem) -> str | None:
    if item.domain:
        return item.domain.lower().removeprefix("www.").strip(".")
    return _host_of(item.url) if item.url else None


def _host_of(url: str) -> str | None:
    try:
        host = split_link(url).hostname
    except ValueError:
        return None
    return host.removeprefix("www.").strip(".") if host else None


def _alternation(terms: Sequence[str]) -> re.Pattern[str]:
    branches = []
    for index, term in enumerate(terms):
        folded = _folded(term)
        if any(is_cjk(ch) for ch in folded):
            # Spaces between the characters of a Chinese term do not split it.
            body = r"\s*".join(re.escape(ch) for ch in folded if not ch.isspace())
        else:
            words = (re.escape(word) for word in folded.split())
            body = _WORD_EDGE_BEFORE + r"\s+".join(words) + _WORD_EDGE_AFTER
        branches.append(f"(?P<t{index}>{body})")
    return re.compile("|".join(branches))


def _folded(text: str) -> str:
    """NFKC, case-folded, invisible characters out, whitespace collapsed."""
    normal = unicodedata.normalize("NFKC", text)
    visible = "".join(ch for ch in normal if unicodedata.category(ch) != "Cf")
    return " ".join(visible.casefold().split())
