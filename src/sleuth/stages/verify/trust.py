"""Source trust: a 0..1 score per result, and the parts it is made of.

Owns the trust score and nothing else: the domain authority tables, the allow and
deny lists, the freshness, diversity and transport-security scores, and the
optional click-through prior. It reads `ResultItem.freshness` (set by normalize and
the freshness stage) and never dates anything itself; it does no I/O and reads no
clock. Settings come from `trust:` in sleuth.yaml.

The formula, with A, F, D, S the parts below and w their weights::

    total = (w_A·A + w_F·F + w_D·D + w_S·S) / (w_A + w_F + w_D + w_S)

With the default weights (0.4, 0.3, 0.2, 0.1, summing to 1) the divisor is 1 and
this is exactly the issue's ``0.4·A + 0.3·F + 0.2·D + 0.1·S``. When the caller
passes a click-through prior C for the item's registrable domain and
``click_weight`` w_C is above 0, C joins and the weights are renormalised so the
total stays in 0..1::

    total = (w_A·A + w_F·F + w_D·D + w_S·S + w_C·C) / (w_A + w_F + w_D + w_S + w_C)

- A, authority of the registrable domain of the item's URL: the deny list, then the
  allow list, then the class of the domain (gov, edu, org, com, or other), found
  through the public suffix list (offline, bundled with `publicsuffixlist`), so
  ``moe.gov.cn`` and ``www.gov.uk`` are gov and ``ox.ac.uk`` is edu. A local
  knowledge-base result (``file://``) has no domain and scores `local_authority`.
- F, freshness: a score per freshness label.
- D, diversity: how many independent registrable domains the result was found at
  (`ResultItem.sources` and its own URL); two URLs on one domain count once, and
  all local files together count as one source.
- S, transport security: when the result's page was read (`include: content`), what
  the fetch proved about its connection, `tls` valid, invalid (a certificate that did
  not verify) or none (plain http), each with its score; otherwise a score per URL
  scheme (https, http, file, ...), which stands in for it.

The total is rounded to 4 decimal places.

>>> item = ResultItem(id="1", url="https://www.gov.cn/zhengce/", providers=["p"],
...                   freshness="past_week")
>>> score = trust(item, TrustSettings())
>>> score.as_breakdown()
{'authority': 1.0, 'freshness': 0.9, 'diversity': 0.6, 'security': 1.0}
>>> score.total  # 0.4·1.0 + 0.3·0.9 + 0.2·0.6 + 0.1·1.0
0.89
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Annotated, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sleuth.contract import Freshness, ResultItem, TlsStatus
from sleuth.extract.models import ExtractedPage

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = [
    "TrustScore",
    "TrustSettings",
    "registrable_domain",
    "scheme_and_domain",
    "score_items",
    "tls_proved",
    "trust",
    "warm_up",
]


@cache
def _psl() -> PublicSuffixList:
    """The bundled public suffix list, parsed on first use (about 50 ms, so that a
    command that only reads the settings does not pay it; `warm_up` parses it before a
    service's first search); lookups are read-only, about 2 µs each. Private-section
    suffixes count too, so user pages on github.io or blogspot.com are each their own
    registrable domain."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def warm_up() -> None:
    """Parse the public suffix list now, off a search's deadline."""
    _psl()


_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_WEB_SCHEMES = frozenset({"http", "https"})
_AUTHORITY = re.compile(r"[^/?#\\]*")  # user info, host and port: up to the path
_BAD_HOST_CHARS = re.compile(r"[\s/\\<>\"'{}|^`%@]")
_COUNTRY_CODE = re.compile(r"[a-z]{2}")
_LOCAL_SOURCE = "file:"  # the one diversity key shared by all local files
_FRESHNESS_LABELS: tuple[str, ...] = get_args(Freshness)
_TLS_STATUSES: tuple[str, ...] = get_args(TlsStatus)

Score = Annotated[float, Field(ge=0, le=1)]
Weight = Annotated[float, Field(ge=0)]


def _default_suffix_classes() -> dict[str, str]:
    return {
        "gov": "gov",
        "edu": "edu",
        "org": "org",
        "com": "com",
        "gc.ca": "gov",  # Government of Canada
        "gv.at": "gov",  # Austrian government
        "政务": "gov",  # Chinese TLD for government bodies
        "公益": "org",  # Chinese TLD for non-profit bodies
    }


def _default_second_level_classes() -> dict[str, str]:
    return {
        "gov": "gov",  # gov.cn, gov.uk, gov.au, gov.in, gov.hk ...
        "gob": "gov",  # gob.mx, gob.es
        "gouv": "gov",  # gouv.fr
        "govt": "gov",  # govt.nz
        "go": "gov",  # go.jp, go.kr, go.th
        "edu": "edu",  # edu.cn, edu.au, edu.hk
        "ac": "edu",  # ac.uk, ac.jp, ac.cn, ac.kr
        "org": "org",  # org.cn, org.uk
        "or": "org",  # or.jp, or.kr
        "com": "com",  # com.cn, com.au
        "co": "com",  # co.uk, co.jp, co.kr
    }


def _default_freshness() -> dict[Freshness, float]:
    return {"realtime": 1.0, "past_week": 0.9, "past_month": 0.7, "archive": 0.3, "unknown": 0.5}


def _default_tls() -> dict[TlsStatus, float]:
    return {"valid": 1.0, "invalid": 0.0, "none": 0.0}


class TrustSettings(BaseModel):
    """The `trust:` section of sleuth.yaml.

    Allow and deny entries are registrable domains, normalised as `registrable_domain`
    gives them; a host below one ('www.python.org') is rejected with the name to list.

    >>> settings = TrustSettings(allow=["Python.ORG."], deny=["spam.github.io"])
    >>> sorted(settings.allow), sorted(settings.deny)
    (['python.org'], ['spam.github.io'])
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    authority_weight: Weight = Field(default=0.4, description="Weight of domain authority.")
    freshness_weight: Weight = Field(default=0.3, description="Weight of freshness.")
    diversity_weight: Weight = Field(default=0.2, description="Weight of source diversity.")
    security_weight: Weight = Field(default=0.1, description="Weight of transport security.")
    click_weight: Weight = Field(
        default=0.0,
        description=(
            "Weight of the click-through prior of the item's domain, when the caller passes "
            "one; the weights are then renormalised by their sum. 0 leaves the score exactly "
            "the issue's formula until feedback exists."
        ),
    )
    authority: dict[str, Score] = Field(
        default_factory=lambda: {"gov": 1.0, "edu": 0.95, "org": 0.85, "com": 0.7},
        description="Authority score of each domain class; classes come from the tables below.",
    )
    other_authority: Score = Field(
        default=0.5,
        description=(
            "Authority of a domain of no listed class (.io, .net, .cn, github.io user pages), "
            "of an IP address, and of an item without a URL."
        ),
    )
    suffix_classes: dict[str, str] = Field(
        default_factory=_default_suffix_classes,
        description=(
            "Class of a public suffix (gov, gc.ca) or of one registrable domain "
            "(e.g. 'europa.eu': 'gov'); the most specific entry wins. Looked up before "
            "`second_level_classes`."
        ),
    )
    second_level_classes: dict[str, str] = Field(
        default_factory=_default_second_level_classes,
        description=(
            "Class of a two-label public suffix under a two-letter country code, by its first "
            "label: 'gov' makes gov.cn and gov.uk gov, 'ac' makes ac.uk and ac.jp edu. Applies "
            "only to public suffixes, so a registered name such as gov.io gains nothing."
        ),
    )
    allow: frozenset[str] = Field(
        default=frozenset(),
        description="Registrable domains trusted whatever their class; scored `allow_authority`.",
    )
    allow_authority: Score = Field(default=0.95, description="Authority of an allowed domain.")
    deny: frozenset[str] = Field(
        default=frozenset(),
        description="Registrable domains distrusted whatever their class (content farms, spam).",
    )
    deny_authority: Score = Field(default=0.0, description="Authority of a denied domain.")
    local_authority: Score = Field(
        default=0.8,
        description=(
            "Authority of a local knowledge-base result (file:// URL): the user chose to put "
            "the file there, so above an unknown web domain, below an official source."
        ),
    )
    freshness: dict[Freshness, Score] = Field(
        default_factory=_default_freshness,
        description=(
            "Score of each freshness label. 'unknown' is 0.5, between past_month and archive: "
            "many lasting reference pages (documentation, encyclopaedias) carry no date, so an "
            "undated result is neither rewarded as new nor punished as old."
        ),
    )
    diversity: tuple[Score, ...] = Field(
        default=(0.6, 0.9, 1.0),
        min_length=1,
        description=(
            "Score for 1, 2, 3 ... independent registrable domains backing the result; the last "
            "entry applies to any larger count."
        ),
    )
    security: dict[str, Score] = Field(
        default_factory=lambda: {"https": 1.0, "http": 0.0, "ftp": 0.0, "file": 1.0},
        description=(
            "Score of each URL scheme. file:// (the local knowledge base) is 1.0: it never "
            "crossed a network."
        ),
    )
    tls: dict[TlsStatus, Score] = Field(
        default_factory=_default_tls,
        description=(
            "Security of a result whose page was read (include content), by what the fetch "
            "proved: a certificate that verified, one that did not, or plain http. It "
            "replaces the URL scheme's score for that result."
        ),
    )
    unknown_security: Score = Field(
        default=0.5,
        description=(
            "Security of an item without a URL or with an unlisted scheme: nothing to judge, "
            "so neutral, as for an undated result."
        ),
    )

    @field_validator("allow", "deny", mode="after")
    @classmethod
    def _registrable_entries(cls, value: frozenset[str]) -> frozenset[str]:
        entries = set()
        for raw in value:
            host = _normalise_host(raw.strip())
            domain = registrable_domain(host) if host else None
            if host is None or domain != host:
                hint = f"list {domain!r}" if domain else "expected a name such as 'example.com'"
                raise ValueError(f"{raw!r} is not a registrable domain; {hint}")
            entries.add(domain)
        return frozenset(entries)

    @field_validator("suffix_classes", mode="after")
    @classmethod
    def _normalised_suffixes(cls, value: dict[str, str]) -> dict[str, str]:
        table = {}
        for raw, klass in value.items():
            host = _normalise_host(raw.strip())
            if host is None:
                raise ValueError(f"{raw!r} is not a domain suffix")
            table[host] = klass
        return table

    @field_validator("security", mode="after")
    @classmethod
    def _lower_schemes(cls, value: dict[str, float]) -> dict[str, float]:
        return {scheme.lower(): score for scheme, score in value.items()}

    @model_validator(mode="after")
    def _consistent(self) -> TrustSettings:
        weights = (
            self.authority_weight,
            self.freshness_weight,
            self.diversity_weight,
            self.security_weight,
        )
        if sum(weights) <= 0:
            raise ValueError("at least one of the four trust weights must be above 0")
        for table in (self.suffix_classes, self.second_level_classes):
            unknown = sorted(set(table.values()) - set(self.authority))
            if unknown:
                raise ValueError(
                    f"class {unknown[0]!r} has no authority score; "
                    f"allowed: {', '.join(self.authority)}"
                )
        missing = [label for label in _FRESHNESS_LABELS if label not in self.freshness]
        if missing:
            raise ValueError(f"freshness needs a score for every label; missing: {missing}")
        missing = [status for status in _TLS_STATUSES if status not in self.tls]
        if missing:
            raise ValueError(f"tls needs a score for every status; missing: {missing}")
        both = sorted(self.allow & self.deny)
        if both:
            raise ValueError(f"{both[0]!r} is in both allow and deny")
        return self


@dataclass(frozen=True, slots=True)
class TrustScore:
    """One item's trust: the weighted `total` and its unweighted parts.

    `click` is the click-through prior used, or None when none joined the score.
    `domain` is the registrable domain that was scored (None for local or URL-less items).
    """

    total: float
    authority: float
    freshness: float
    diversity: float
    security: float
    click: float | None = None
    domain: str | None = None

    def as_breakdown(self) -> dict[str, float]:
        """The parts, for `ResultItem.trust_breakdown`; `click` only when it counted."""
        parts = {
            "authority": self.authority,
            "freshness": self.freshness,
            "diversity": self.diversity,
            "security": self.security,
        }
        if self.click is not None:
            parts["click"] = self.click
        return parts


def registrable_domain(url_or_host: str | None) -> str | None:
    """The registrable domain (eTLD+1) of a web URL or host name, lower-case.

    Ports, user info and a trailing dot are ignored; international names come back in
    Unicode whichever way they were written (Punycode or full-width dots), so one site
    counts once. An IP address comes back as itself; a host that is itself a public
    suffix or a single label (``localhost``) as itself. Non-web URLs (``file://``,
    ``mailto:``, ``data:``) and unparsable input give None.

    >>> registrable_domain("https://News.BBC.co.uk:443/world")
    'bbc.co.uk'
    >>> registrable_domain("alice.github.io"), registrable_domain("http://xn--fiqs8s.xn--fiqs8s/")
    ('alice.github.io', '中国.中国')
    >>> registrable_domain("http://[::1]:8080/"), registrable_domain("file:///home/me/notes.md")
    ('::1', None)
    """
    if not url_or_host:
        return None
    return scheme_and_domain(url_or_host.strip())[1]


def trust(
    item: ResultItem,
    settings: TrustSettings,
    priors: Mapping[str, float] | None = None,
    tls: TlsStatus | None = None,
) -> TrustScore:
    """The trust score of one item; `priors` maps registrable domains to click-through 0..1;
    `tls` is what fetching the item's page proved about its connection, when it was read.

    Raises ValueError when the prior for the item's domain is outside 0..1.
    """
    url = item.url or (item.sources[0] if item.sources else None)
    scheme, domain = scheme_and_domain(url) if url else (None, None)

    if scheme == "file":
        authority = settings.local_authority
    elif domain is None:
        authority = settings.other_authority
    elif domain in settings.deny:
        authority = settings.deny_authority
    elif domain in settings.allow:
        authority = settings.allow_authority
    else:
        klass = _domain_class(domain, settings)
        authority = settings.authority[klass] if klass else settings.other_authority

    freshness = settings.freshness[item.freshness]
    count = _independent_sources(item)
    diversity = settings.diversity[min(count, len(settings.diversity)) - 1]
    if tls is not None:
        security = settings.tls[tls]
    else:
        # No URL, a bare host without a scheme, or an unlisted scheme: nothing to judge.
        security = settings.security.get(scheme or "", settings.unknown_security)

    weighted = (
        settings.authority_weight * authority
        + settings.freshness_weight * freshness
        + settings.diversity_weight * diversity
        + settings.security_weight * security
    )
    weight = (
        settings.authority_weight
        + settings.freshness_weight
        + settings.diversity_weight
        + settings.security_weight
    )
    click = None
    if priors and domain is not None and settings.click_weight > 0:
        click = priors.get(domain)
        if click is not None:
            if not 0.0 <= click <= 1.0:
                raise ValueError(f"click-through prior for {domain!r} is {click}, not in 0..1")
            weighted += settings.click_weight * click
            weight += settings.click_weight
    total = round(min(1.0, max(0.0, weighted / weight)), 4)
    return TrustScore(total, authority, freshness, diversity, security, click, domain)


def score_items(
    items: Sequence[ResultItem],
    settings: TrustSettings,
    priors: Mapping[str, float] | None = None,
    pages: Mapping[str, ExtractedPage] | None = None,
) -> list[ResultItem]:
    """Copies of `items`, in order, with `source_trust_score` and `trust_breakdown` set.

    `pages` maps item ids to the page read for them (include content): their `tls`
    then scores transport security (see `tls_proved`).
    """
    scored = []
    for item in items:
        page = pages.get(item.id) if pages else None
        score = trust(item, settings, priors, tls_proved(page) if page else None)
        scored.append(
            item.model_copy(
                update={
                    "source_trust_score": score.total,
                    "trust_breakdown": score.as_breakdown(),
                }
            )
        )
    return scored


def tls_proved(page: ExtractedPage) -> TlsStatus | None:
    """What fetching `page` proved about its connection: its `tls` when it was read, or
    when the certificate failed (which ended the fetch); None when the fetch failed
    otherwise (a timeout, a refusal), which proves nothing."""
    if page.error is None or page.tls.status == "invalid":
        return page.tls.status
    return None


def _scheme_of(url: str | None) -> str | None:
    """The lower-case scheme of a URL; None for no URL or a bare host ('example.com:8080')."""
    if not url:
        return None
    match = _SCHEME.match(url)
    if match is None:
        return None
    rest = url[match.end() :]
    if not rest.startswith("//") and rest[:1].isdigit():
        return None  # "example.com:8080/path": a host and port, not a scheme
    return match.group(1).lower()


# One search looks at each URL several times (trust, diversity, feedback); pure, so cached.
@lru_cache(maxsize=4096)
def scheme_and_domain(url: str) -> tuple[str | None, str | None]:
    """The scheme of `url` (None for a bare host) and its registrable domain, if a web URL."""
    scheme = _scheme_of(url)
    if scheme is None:
        rest = url[2:] if url.startswith("//") else url
    elif scheme in _WEB_SCHEMES and url.startswith("//", len(scheme) + 1):
        rest = url[len(scheme) + 3 :]
    else:
        return scheme, None  # file:, mailto:, data:, javascript:, ftp:, ...
    authority = _AUTHORITY.match(rest)
    host = authority.group().rpartition("@")[2] if authority else ""
    if host.startswith("["):  # [IPv6]:port
        end = host.find("]")
        host = host[1:end] if end > 0 else ""
    else:
        host = host.partition(":")[0]
    return scheme, _registrable_host(host) if host else None


@lru_cache(maxsize=8192)
def _registrable_host(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    name = _normalise_host(host)
    if name is None:
        return None
    return _psl().privatesuffix(name) or name


def _normalise_host(host: str) -> str | None:
    """Lower-case, trailing dot dropped, international names in Unicode; None if not a host."""
    host = host.strip(".").lower()
    if not host or _BAD_HOST_CHARS.search(host):
        return None
    if host.isascii() and "xn--" not in host:
        return host
    try:
        return host.encode("idna").decode("idna")
    except UnicodeError:
        return host


def _domain_class(domain: str, settings: TrustSettings) -> str | None:
    """The authority class of a registrable domain, or None for 'other'.

    Looks the domain itself up in `suffix_classes`, then each public suffix above it,
    most specific first; a two-label suffix under a country code also by its first
    label in `second_level_classes` (gov.cn → gov, ac.uk → edu).
    """
    klass = settings.suffix_classes.get(domain)
    if klass is not None:
        return klass
    suffix = _public_suffix(domain)
    while suffix:
        klass = settings.suffix_classes.get(suffix)
        if klass is not None:
            return klass
        head, _, parent = suffix.partition(".")
        if parent and "." not in parent and _COUNTRY_CODE.fullmatch(parent):
            klass = settings.second_level_classes.get(head)
            if klass is not None:
                return klass
        suffix = parent
    return None


@lru_cache(maxsize=8192)
def _public_suffix(domain: str) -> str:
    suffix = _psl().publicsuffix(domain)
    return suffix if suffix is not None else domain


def _independent_sources(item: ResultItem) -> int:
    """How many independent registrable domains the item was found at (at least 1)."""
    keys = set()
    for url in (*item.sources, item.url):
        if not url:
            continue
        scheme, domain = scheme_and_domain(url)
        if domain is not None:
            keys.add(domain)
        elif scheme == "file":
            keys.add(_LOCAL_SOURCE)
    return max(1, len(keys))
