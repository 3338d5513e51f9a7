"""Secrets out of everything sleuth logs: API keys from the environment, Authorization
values, key-shaped strings and ``key=`` URL parameters become ``[REDACTED]``.

Owns what counts as a secret; `RedactSecrets` is the structlog processor the call log
runs every event through (`sleuth.observe`), and `redact_text` is what the dashboard's
error messages pass. The environment is followed as it changes, so a key set after
start-up (or by a test) is redacted too. Sleuth's own key prefixes (``sk_`` and 8 characters,
shown to tell keys apart) are too short to match and stay readable.

>>> redact_text("Authorization: Bearer abcdef123456 and ?key=AIzaSyA123", ())
'Authorization: Bearer [REDACTED] and ?key=[REDACTED]'
>>> redact_text("token sk_live_0123456789abcdefXYZ leaked", ())
'token [REDACTED] leaked'
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Collection, Mapping, MutableMapping, Sequence
from typing import Any
from urllib.parse import quote

__all__ = [
    "REDACTED",
    "RedactSecrets",
    "drop_secret_words",
    "redact",
    "redact_text",
    "secret_name",
    "secret_parts",
    "secret_values",
    "sent_secrets",
]

REDACTED = "[REDACTED]"

#: Environment variable names whose values are secrets, whatever the configuration says.
_SECRET_ENV_NAME = re.compile(
    r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$"
)
#: Mapping keys whose values are secrets, wherever they appear in an event.
_SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api_key",
        "apikey",
        "api-key",
        "password",
        "secret",
        "token",
        "access_token",
        "cookie",
        "set-cookie",
    }
)
#: Names of headers, parameters and body fields that carry credentials, whatever the
#: back end calls them (X-Subscription-Token, api_key, x-api-key, Authorization, key).
_SECRET_NAME = re.compile(
    r"(?i)(?:^|[_-])(?:key|api_?key|apikey|token|secret|password|passwd|auth|authorization"
    r"|credentials?|cookie|signature)$"
)
_MIN_SENT_CHARS = 6
#: Shorter environment values are not worth redacting ("on", "true", "3").
_MIN_SECRET_CHARS = 8
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization header values.
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1\2{REDACTED}"),
    # Key-shaped strings of well-known issuers (sleuth's own keys are sk_...).
    (re.compile(r"\bsk[_-][A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), REDACTED),
    (re.compile(r"\btvly-[A-Za-z0-9_-]{8,}"), REDACTED),
    (re.compile(r"\b(?:ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{16,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    # key=value in URLs and forms, name: value in headers and text.
    (
        re.compile(
            r"(?i)([?&;](?:api[_-]?key|apikey|key|access[_-]?token|token|auth|secret|password)=)"
            r"[^&#\s\"']+"
        ),
        rf"\1{REDACTED}",
    ),
    (
        re.compile(
            r"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|client[_-]?secret|password|passwd)"
            r"(\"?\s*[:=]\s*[\"']?)[^\s\"',;&}]{6,}"
        ),
        rf"\1\2{REDACTED}",
    ),
)


def _any_of(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str]:
    """One pattern that matches wherever any of `patterns` would (each one's global
    flags scoped to its own part)."""
    parts = []
    for pattern in patterns:
        text = pattern.pattern
        parts.append(f"(?i:{text[4:]})" if text.startswith("(?i)") else f"(?:{text})")
    return re.compile("|".join(parts))


#: Most logged strings (ids, times, names) hold nothing to redact: one search tells.
_ANY_PATTERN = _any_of([pattern for pattern, _ in _PATTERNS])
#: Literals of which every match of `_PATTERNS` contains one: the case-sensitive
#: patterns' as they are, the others' (under `(?i)`) lowercased. Keep them in step with
#: `_PATTERNS` (a test checks texts the patterns match against them).
_CASED_NEEDLES = re.compile("sk_|sk-|AIza|tvly-|gh|github_pat|AKIA|xox")
_NEEDLES = re.compile("bearer|basic|token|key|auth|secret|passw")


def _may_match(text: str) -> bool:
    """False when no pattern of `_PATTERNS` can match `text`: an ASCII text without one
    of their literals. Two literal searches (1-3 us), where `_ANY_PATTERN`, whose
    alternatives all start with a word boundary, tries each at every position (5 to
    30 us for an id or a timestamp; a call-log event holds about twenty such strings).
    On ASCII text `str.lower` folds case as `(?i)` does; beyond ASCII `(?i)` also folds
    a few letters it does not (dotless i, long s, the Kelvin sign): the pattern decides."""
    if not text.isascii():
        return True
    return _CASED_NEEDLES.search(text) is not None or _NEEDLES.search(text.lower()) is not None


@functools.lru_cache(maxsize=64)
def _longest_first(secrets: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(secrets, key=len, reverse=True))


def secret_values(names: Collection[str] = ()) -> frozenset[str]:
    """The values of the environment variables that hold secrets: those `names`, and
    any whose name looks like one (``*_API_KEY``, ``*_TOKEN``, ...). Follows the
    environment as it is now, so a key set after start-up is redacted too; the answer
    is kept until the environment changes (each search asks several times)."""
    key = frozenset(names)
    environ = getattr(os.environ, "_data", None)  # CPython's raw mapping behind os.environ
    if not isinstance(environ, dict):
        return _read_secret_values(key)
    # The check is one C-level dict comparison; reading the environment decodes every
    # name and value and runs a regex on each name.
    cached = _SECRET_CACHE.get(key)
    if cached is not None and cached[0] == environ:
        return cached[1]
    snapshot = dict(environ)
    found = _read_secret_values(key)
    if len(_SECRET_CACHE) >= 16:  # a handful of configurations per process
        _SECRET_CACHE.clear()
    _SECRET_CACHE[key] = (snapshot, found)
    return found


#: names -> (the raw environment read, the secret values found in it).
_SECRET_CACHE: dict[frozenset[str], tuple[dict[Any, Any], frozenset[str]]] = {}


def _read_secret_values(wanted: frozenset[str]) -> frozenset[str]:
    found: set[str] = set()
    for name, value in os.environ.items():
        if len(value) < _MIN_SECRET_CHARS:
            continue
        if name in wanted or _SECRET_ENV_NAME.search(name):
            found.add(value)
            found.add(quote(value, safe=""))  # as it would appear in a URL
    return frozenset(found)


def secret_name(name: str) -> bool:
    """Whether a header, parameter or field of this name carries a credential.

    >>> [secret_name(n) for n in ("X-Subscription-Token", "api_key", "key", "q", "count")]
    [True, True, True, False, False]
    """
    return name.lower() in _SECRET_KEYS or bool(_SECRET_NAME.search(name))


def sent_secrets(*fields: Mapping[str, Any] | None) -> frozenset[str]:
    """The credential values among a request's headers, parameters and top-level JSON
    fields (by `secret_name`), also as they would appear in a URL; a header's scheme
    word ("Bearer") is not part of the secret, and values shorter than 6 characters are
    not worth hiding (replacing every "on" in a body would hide the body instead).

    >>> sorted(sent_secrets({"Authorization": "Bearer abc12345"}, {"q": "x", "key": "k9x7y6"}))
    ['abc12345', 'k9x7y6']
    """
    found: set[str] = set()
    for mapping in fields:
        for name, value in (mapping or {}).items():
            if not isinstance(value, str) or not value or not secret_name(str(name)):
                continue
            scheme, _, rest = value.partition(" ")
            if rest and scheme.lower() in {"bearer", "basic", "token"}:
                value = rest.strip()
            if len(value) < _MIN_SENT_CHARS:
                continue
            found.update({value, quote(value, safe="")})
    return frozenset(found)


def redact_text(text: str, secrets: Collection[str]) -> str:
    """`text` with every secret value and key-looking string replaced by ``[REDACTED]``."""
    ordered = (
        _longest_first(secrets)
        if isinstance(secrets, frozenset)
        else sorted(secrets, key=len, reverse=True)
    )
    for secret in ordered:  # a key before its prefix
        if secret in text:
            text = text.replace(secret, REDACTED)
    if not _may_match(text) or _ANY_PATTERN.search(text) is None:
        return text  # then no substitution below changes it
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def secret_parts(text: str, secrets: Collection[str]) -> list[str]:
    """The substrings of `text` that `redact_text` would hide (the value, not its name).

    >>> secret_parts("use ?key=abc123xyz please", ())
    ['abc123xyz']
    """
    parts = [secret for secret in secrets if secret in text]
    if not _may_match(text):
        return parts
    for pattern, _ in _PATTERNS:
        for match in pattern.finditer(text):
            start = match.end(pattern.groups) if pattern.groups else match.start()
            parts.append(text[start : match.end()])
    return parts


def drop_secret_words(words: Sequence[str], source: str, secrets: Collection[str]) -> list[str]:
    """`words` derived from `source` (a query's keywords), without those that are a piece
    of a secret in it: a rewrite splits "sk_live_0123..." into "sk", "live", "0123...".

    >>> drop_secret_words(["sk", "live", "0123456789abcdefghij", "limits"],
    ...                   "sk_live_0123456789abcdefghij limits", ())
    ['limits']
    """
    parts = [part.casefold() for part in secret_parts(source, secrets)]
    return [word for word in words if not any(word.casefold() in part for part in parts)]


#: Values with nothing in them to redact (exact types: a subclass may be a str).
_PLAIN = frozenset({int, float, bool})


def redact(value: Any, secrets: Collection[str]) -> Any:
    """Any JSON-like value with its strings redacted and secret-named keys' values hidden.

    >>> redact({"headers": {"Authorization": "x"}, "n": 3}, ())
    {'headers': {'Authorization': '[REDACTED]'}, 'n': 3}
    """
    if isinstance(value, str):
        return redact_text(value, secrets)
    if value is None or type(value) in _PLAIN:  # the ABC checks below cost more
        return value
    if isinstance(value, Mapping):
        return {
            key: (
                REDACTED
                if isinstance(key, str) and key.lower() in _SECRET_KEYS and item
                else redact(item, secrets)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, secrets) for item in value]
    return value


class RedactSecrets:
    """A structlog processor: every value of the event is passed through `redact`.

    `names` are environment variables whose values are secrets (read at each event).
    """

    def __init__(self, names: Collection[str] = ()) -> None:
        self.names = frozenset(names)

    def __call__(
        self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        secrets = secret_values(self.names)
        return {key: redact(value, secrets) for key, value in event_dict.items()}
