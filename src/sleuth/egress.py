"""Egress policy: which network addresses sleuth may open a connection to.

Owns one question, asked of every URL that comes from a request or from runtime
configuration (a provider's `base_url`, the `llm_summary` endpoint, every redirect
they answer with): may sleuth connect to this host? The answer is decided on
addresses, after DNS resolution, so a public-looking name that resolves inside the
network is caught (SSRF). Refused unless `allow_private` names the host or a network
holding the address:

- IPv4: this network (0/8), private (10/8, 172.16/12, 192.168/16), shared (100.64/10),
  loopback (127/8), link-local (169.254/16, which holds the cloud metadata endpoint
  169.254.169.254), IETF and documentation ranges, benchmarking (198.18/15),
  multicast (224/4) and reserved (240/4, with the broadcast address).
- IPv6: unspecified, loopback, unique local (fc00::/7), link-local (fe80::/10),
  site-local, multicast, documentation, ORCHID, discard-only, and everything outside
  global unicast (2000::/3). IPv4 wrapped in IPv6 is judged by the IPv4 address inside:
  IPv4-mapped (::ffff:10.0.0.1), 6to4 (2002::/16), Teredo, NAT64 (64:ff9b::/96).
- Names: "localhost" and any name under it, before any lookup.

The ranges are listed here rather than read from `ipaddress`'s `is_private` and
`is_global`, whose answers changed between Python releases. Numeric spellings that
resolvers accept ("2130706433", "0x7f.1", "127.1") are read as the addresses they
are, not looked up as names.

The policy is pure (`EgressPolicy.refusal`, `EgressPolicy.check`); `resolve` is the one
function that does I/O, and `allowed_addresses` puts the two together. The transport
(`sleuth.transport`) calls it as it opens each connection and then connects to an
address it checked, never to a second lookup of the name: a name that resolves to a
public address for the check and a private one for the connection (DNS rebinding)
gets nowhere. Through an egress proxy the proxy resolves names;
`check_before_proxy` then checks what sleuth can see (see its docstring).

>>> policy = EgressPolicy.from_settings(EgressSettings(allow_private=["10.1.0.0/16", "searx.lan"]))
>>> policy.refusal(ip_address("10.0.0.1"))
'private'
>>> policy.refusal(ip_address("10.1.2.3")) is None
True
>>> policy.refusal(ip_address("::ffff:169.254.169.254"))
'link-local (the cloud metadata endpoint lives here), wrapped in IPv6'
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.errors import EgressDenied

__all__ = [
    "Address",
    "EgressPolicy",
    "EgressSettings",
    "allowed_addresses",
    "check_before_proxy",
    "literal_address",
    "resolve",
    "special_range",
]

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

_METADATA = "link-local (the cloud metadata endpoint lives here)"
_IPV4_RANGES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(network), kind)
    for network, kind in (
        ("0.0.0.0/8", "unspecified ('this network')"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", _METADATA),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved (IETF protocol assignments)"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "reserved (6to4 relay)"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
    )
)
_IPV6_RANGES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(network), kind)
    for network, kind in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private (local NAT64)"),
        ("100::/64", "reserved (discard-only)"),
        ("2001:10::/28", "reserved (ORCHID)"),
        ("2001:20::/28", "reserved (ORCHID)"),
        ("2001:db8::/32", "documentation"),
        ("fc00::/7", "private (unique local)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private (site-local)"),
        ("ff00::/8", "multicast"),
    )
)
_GLOBAL_UNICAST = IPv6Network("2000::/3")
_NAT64 = IPv6Network("64:ff9b::/96")
# What inet_aton reads as an IPv4 address: one to four parts, decimal, octal or hex.
_NUMERIC_HOST = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}", re.I)
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


class EgressSettings(BaseModel):
    """The `egress:` section of sleuth.yaml.

    >>> EgressSettings(allow_private=["127.0.0.1", "::1", "Searx.LAN."]).allow_private
    ['127.0.0.1', '::1', 'searx.lan']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    check_addresses: bool = Field(
        default=True,
        description=(
            "Refuse to connect to private, loopback, link-local (cloud metadata) and other "
            "non-public addresses, judged after DNS resolution, for every URL from a request "
            "or from configuration (provider base_url, llm_summary.base_url, redirects). "
            "kb: and ddgs: requests are internal and not checked."
        ),
    )
    allow_private: list[str] = Field(
        default_factory=list,
        description=(
            "What the check lets through: host names, matched exactly and "
            "case-insensitively ('searx.lan'; every address the name resolves to is "
            "allowed), addresses ('127.0.0.1', '::1') and networks ('10.1.0.0/16'). "
            "Default: none. A self-hosted SearXNG or model server needs its entry here."
        ),
    )
    resolve_with_proxy: bool = Field(
        default=True,
        description=(
            "With egress_proxy set the proxy resolves names; sleuth still checks address "
            "literals, and with this on also looks names up itself and refuses those that "
            "resolve to non-public addresses (names it cannot resolve are left to the "
            "proxy's own rules). Turn off where the local resolver cannot answer."
        ),
    )

    @field_validator("allow_private")
    @classmethod
    def _entries(cls, value: list[str]) -> list[str]:
        entries = []
        for raw in value:
            entry = raw.strip().strip("[]").lower().rstrip(".")
            try:
                ip_network(entry, strict=False)
            except ValueError:
                if not _HOST_NAME.fullmatch(entry):
                    raise ValueError(
                        f"{raw!r} is neither a host name, an address nor a network "
                        "(expected e.g. 'searx.lan', '127.0.0.1', '10.1.0.0/16', '::1')"
                    ) from None
            entries.append(entry)
        return entries


@dataclass(frozen=True)
class EgressPolicy:
    """The compiled `EgressSettings`: the pure decision, with no I/O."""

    allowed_networks: tuple[Network, ...] = ()
    allowed_hosts: frozenset[str] = frozenset()
    resolve_with_proxy: bool = True

    @classmethod
    def from_settings(cls, settings: EgressSettings) -> EgressPolicy | None:
        """The policy, or None when `check_addresses` is off (no check at all)."""
        if not settings.check_addresses:
            return None
        networks: list[Network] = []
        hosts: set[str] = set()
        for entry in settings.allow_private:
            try:
                networks.append(ip_network(entry, strict=False))
            except ValueError:
                hosts.add(entry)
        return cls(tuple(networks), frozenset(hosts), settings.resolve_with_proxy)

    def allows_host(self, host: str) -> bool:
        """Whether `host` is named in `allow_private` (names only, not addresses)."""
        return _normalised(host) in self.allowed_hosts

    def refusal(self, address: Address) -> str | None:
        """Why a connection to `address` is refused, or None when it is allowed.

        >>> EgressPolicy().refusal(ip_address("8.8.8.8")) is None
        True
        >>> EgressPolicy().refusal(ip_address("fe80::1"))
        'link-local'
        """
        kind = special_range(address)
        if kind is None:
            return None
        inner = _embedded_ipv4(address) if isinstance(address, IPv6Address) else None
        candidates = (address, inner) if inner is not None else (address,)
        if any(
            candidate.version == network.version and candidate in network
            for candidate in candidates
            for network in self.allowed_networks
        ):
            return None
        return kind

    def check(self, host: str, address: Address) -> None:
        """Raise `EgressDenied` when a connection to `address` (for `host`) is refused."""
        kind = self.refusal(address)
        if kind is None:
            return
        name = _normalised(host)
        if literal_address(name) == address:
            where = f"{address} is a {kind} address"
            allow = f"'{address}' or a network holding it"
        else:
            where = f"{name} resolves to {address}, a {kind} address"
            allow = f"'{name}', '{address}' or a network holding it"
        raise EgressDenied(
            f"egress refused: {where}; if this back end is meant to be inside the "
            f"network, add {allow} to egress.allow_private"
        )

    def check_name(self, host: str) -> None:
        """Refuse 'localhost' and names under it before any lookup: resolvers and
        proxies answer them with their own loopback."""
        name = _normalised(host)
        if (name == "localhost" or name.endswith(".localhost")) and not self.allows_host(name):
            raise EgressDenied(
                f"egress refused: {name} is a loopback name; if this back end is meant "
                f"to run on this machine, add '{name}' to egress.allow_private"
            )


def special_range(address: Address) -> str | None:
    """The kind of non-public range `address` lies in; None for a public unicast address.

    >>> special_range(ip_address("93.184.216.34")) is None
    True
    >>> special_range(ip_address("2002:c0a8:0101::1"))
    'private, wrapped in IPv6'
    """
    if isinstance(address, IPv4Address):
        return next((kind for network, kind in _IPV4_RANGES if address in network), None)
    inner = _embedded_ipv4(address)
    if inner is not None:
        kind = special_range(inner)
        return f"{kind}, wrapped in IPv6" if kind else None
    found = next((kind for network, kind in _IPV6_RANGES if address in network), None)
    if found is None and address not in _GLOBAL_UNICAST:
        return "reserved"
    return found


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address carries, for the forms that route to it."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client: where the traffic ends up
    if address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def literal_address(host: str) -> Address | None:
    """`host` as an address when it is written as one, in any spelling a resolver
    accepts; None for a name.

    >>> literal_address("[::1]"), literal_address("0x7f.1"), literal_address("2130706433")
    (IPv6Address('::1'), IPv4Address('127.0.0.1'), IPv4Address('127.0.0.1'))
    >>> literal_address("example.org") is None
    True
    """
    name = _normalised(host)
    try:
        return ip_address(name)
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(name):
        try:
            return IPv4Address(socket.inet_aton(name))
        except OSError:
            return None
    return None


async def resolve(host: str, port: int) -> list[Address]:
    """Every address `host` resolves to, in the resolver's order (the one I/O here).

    Raises `OSError` (`socket.gaierror`) when the name does not resolve.
    """
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found = [
        ip_address(sockaddr[0])
        for family, _, _, _, sockaddr in infos
        if family in (socket.AF_INET, socket.AF_INET6)
    ]
    return list(dict.fromkeys(found))


async def allowed_addresses(host: str, port: int, policy: EgressPolicy) -> list[Address]:
    """The addresses to connect to for `host`, every one of them checked.

    An address literal is checked as it is; a name is resolved and refused when any
    address it resolves to is refused (a name that points partly inside the network
    is not trusted with the rest). A name in `allow_private` is resolved and not
    checked. Raises `EgressDenied`, or `OSError` when the name does not resolve.
    """
    name = _normalised(host)
    literal = literal_address(name)
    if literal is not None:
        policy.check(name, literal)
        return [literal]
    if policy.allows_host(name):
        return await resolve(name, port)
    policy.check_name(name)
    addresses = await resolve(name, port)
    _check_all(policy, name, addresses)
    return addresses


async def check_before_proxy(
    host: str, port: int, policy: EgressPolicy, timeout_s: float | None
) -> None:
    """Check `host` for a call that goes through the egress proxy, which resolves it.

    The proxy's address is configuration and trusted; the destination is checked as
    far as sleuth can see it: address literals always, loopback names always, and,
    with `resolve_with_proxy`, names the local resolver answers within `timeout_s`.
    A name the local resolver does not know is left to the proxy (its own rules
    must refuse internal destinations): in a proxy-only network sleuth often cannot
    resolve public names at all, and refusing them would refuse everything.
    """
    name = _normalised(host)
    literal = literal_address(name)
    if literal is not None:
        policy.check(name, literal)
        return
    if policy.allows_host(name):
        return
    policy.check_name(name)
    if not policy.resolve_with_proxy:
        return
    try:
        addresses = await asyncio.wait_for(resolve(name, port), timeout_s)
    except (OSError, TimeoutError):
        return  # unknown here: the proxy decides
    _check_all(policy, name, addresses)


def _check_all(policy: EgressPolicy, name: str, addresses: Iterable[Address]) -> None:
    for address in addresses:
        policy.check(name, address)


def _normalised(host: str) -> str:
    return host.strip().strip("[]").lower().rstrip(".")
