"""The egress policy: non-public addresses refused after resolution, in every spelling,
unless allowed. Nothing here opens a connection; names other than `localhost` are
answered by a fake resolver, so no DNS query leaves the machine either."""

from __future__ import annotations

import asyncio
import re
import socket
from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from pydantic import ValidationError

from egress_fakes import policy
from sleuth import egress
from sleuth.egress import (
    Address,
    EgressPolicy,
    EgressSettings,
    allowed_addresses,
    check_before_proxy,
    literal_address,
    special_range,
)
from sleuth.errors import EgressDenied

STRICT = EgressPolicy()
METADATA = "link-local (the cloud metadata endpoint lives here)"
WRAPPED_METADATA = f"{METADATA}, wrapped in IPv6"


# --- the ranges -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", METADATA),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("0.0.0.0", "unspecified ('this network')"),  # noqa: S104 - judged, not bound
        ("192.0.0.170", "reserved (IETF protocol assignments)"),
        ("192.0.2.1", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fc00::1", "private (unique local)"),
        ("fd00:ec2::254", "private (unique local)"),  # AWS's IPv6 metadata endpoint
        ("fec0::1", "private (site-local)"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("100::1", "reserved (discard-only)"),
        ("::ffff:10.0.0.1", "private, wrapped in IPv6"),
        ("::ffff:127.0.0.1", "loopback, wrapped in IPv6"),
        ("::ffff:169.254.169.254", WRAPPED_METADATA),
        ("2002:7f00:1::1", "loopback, wrapped in IPv6"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::", WRAPPED_METADATA),
        ("64:ff9b::a9fe:a9fe", WRAPPED_METADATA),
        ("64:ff9b::10.0.0.1", "private, wrapped in IPv6"),
        ("64:ff9b:1::1", "private (local NAT64)"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private, wrapped in IPv6"),  # Teredo: 10.0.0.1
        ("::10.0.0.1", "reserved"),  # IPv4-compatible, deprecated
        ("4000::1", "reserved"),  # outside global unicast
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(address: str, kind: str) -> None:
    parsed = ip_address(address)
    assert special_range(parsed) == kind
    assert STRICT.refusal(parsed) == kind


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8",
     "2002:808:808::1", "64:ff9b::808:808", "172.32.0.1", "100.128.0.1"],
)  # fmt: skip
def test_public_addresses_pass(address: str) -> None:
    assert special_range(ip_address(address)) is None
    assert STRICT.refusal(ip_address(address)) is None


# --- spelling -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", IPv4Address("127.0.0.1")),
        ("2130706433", IPv4Address("127.0.0.1")),
        ("0x7f000001", IPv4Address("127.0.0.1")),
        ("0x7f.1", IPv4Address("127.0.0.1")),
        ("0X7F.0.0.1", IPv4Address("127.0.0.1")),
        ("127.1", IPv4Address("127.0.0.1")),
        ("017700000001", IPv4Address("127.0.0.1")),
        ("0177.0.0.1", IPv4Address("127.0.0.1")),
        ("169.254.43518", IPv4Address("169.254.169.254")),
        ("[::1]", IPv6Address("::1")),
        ("::FFFF:A9FE:A9FE", IPv6Address("::ffff:169.254.169.254")),
        ("127.0.0.1.", IPv4Address("127.0.0.1")),
    ],
)
def test_numeric_spellings_are_read_as_the_addresses_they_are(host: str, address: Address) -> None:
    assert literal_address(host) == address


@pytest.mark.parametrize("host", ["example.org", "1.2.3.4.5", "0x", "1e100.net", "127.0.0.1x"])
def test_names_are_not_addresses(host: str) -> None:
    assert literal_address(host) is None


# --- what may be allowed --------------------------------------------------------------


def test_allowed_networks_and_hosts() -> None:
    allowing = policy("127.0.0.1", "10.1.0.0/16", "[::1]", "Searx.LAN.")
    assert allowing.refusal(ip_address("127.0.0.1")) is None
    assert allowing.refusal(ip_address("::ffff:127.0.0.1")) is None  # the IPv4 inside counts
    assert allowing.refusal(ip_address("127.0.0.2")) == "loopback"
    assert allowing.refusal(ip_address("10.1.200.3")) is None
    assert allowing.refusal(ip_address("10.2.0.1")) == "private"
    assert allowing.refusal(ip_address("::1")) is None
    assert allowing.allows_host("searx.lan") and allowing.allows_host("SEARX.lan.")
    assert not allowing.allows_host("other.lan")


def test_settings_check_their_entries() -> None:
    assert EgressSettings().allow_private == []
    assert EgressSettings().check_addresses is True
    with pytest.raises(ValidationError, match="neither a host name"):
        EgressSettings(allow_private=["http://searx.lan:8080"])
    with pytest.raises(ValidationError, match="neither a host name"):
        EgressSettings(allow_private=["10.0.0.0/33"])


def test_switching_the_check_off_gives_no_policy() -> None:
    assert EgressPolicy.from_settings(EgressSettings(check_addresses=False)) is None


def test_the_refusal_tells_the_operator_what_to_allow() -> None:
    with pytest.raises(EgressDenied) as caught:
        STRICT.check("searx.lan", ip_address("192.168.1.20"))
    error = caught.value
    assert (error.code, error.category) == ("egress_denied", "non_recoverable")
    assert "searx.lan resolves to 192.168.1.20, a private address" in error.message
    assert "egress.allow_private" in error.message


# --- after resolution -----------------------------------------------------------------


async def test_localhost_is_refused_before_any_lookup(dns: dict[str, list[str]]) -> None:
    for name in ("localhost", "LOCALHOST.", "api.localhost"):
        with pytest.raises(EgressDenied, match="loopback name"):
            await allowed_addresses(name, 80, STRICT)


async def test_a_real_lookup_of_localhost_is_loopback_and_can_be_allowed() -> None:
    # The one real lookup here: the hosts file answers it, nothing leaves the machine.
    found = await allowed_addresses("localhost", 80, policy("localhost"))
    assert found and all(address.is_loopback for address in found)


async def test_address_literals_are_checked_without_a_lookup(dns: dict[str, list[str]]) -> None:
    for host in ("127.0.0.1", "2130706433", "[::1]", "169.254.169.254", "::ffff:10.0.0.1"):
        with pytest.raises(EgressDenied):
            await allowed_addresses(host, 80, STRICT)
    assert await allowed_addresses("0x7f.1", 80, policy("127.0.0.0/8")) == [
        IPv4Address("127.0.0.1")
    ]


async def test_a_name_resolving_inside_the_network_is_refused(dns: dict[str, list[str]]) -> None:
    dns["metadata.cloud.test"] = ["169.254.169.254"]
    dns["internal.corp.test"] = ["10.20.30.40"]
    dns["v6only.test"] = ["fd12:3456::1"]
    for name in dns:
        with pytest.raises(EgressDenied, match=f"{name} resolves to"):
            await allowed_addresses(name, 443, STRICT)


async def test_one_private_address_among_public_ones_refuses_the_name(
    dns: dict[str, list[str]],
) -> None:
    dns["mixed.test"] = ["93.184.216.34", "10.0.0.5"]
    with pytest.raises(EgressDenied, match=re.escape("10.0.0.5")):
        await allowed_addresses("mixed.test", 443, STRICT)


async def test_public_names_pass_with_every_address_they_resolve_to(
    dns: dict[str, list[str]],
) -> None:
    dns["search.test"] = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
    found = await allowed_addresses("search.test", 443, STRICT)
    assert found == [ip_address(a) for a in dns["search.test"]]


async def test_an_allowed_name_is_resolved_but_not_checked(dns: dict[str, list[str]]) -> None:
    dns["searx.lan"] = ["192.168.1.20"]
    assert await allowed_addresses("searx.lan", 8080, policy("searx.lan")) == [
        IPv4Address("192.168.1.20")
    ]


async def test_a_name_that_does_not_resolve_is_the_resolver_error(
    dns: dict[str, list[str]],
) -> None:
    with pytest.raises(socket.gaierror):
        await allowed_addresses("nowhere.test", 80, STRICT)


# --- through a proxy ------------------------------------------------------------------


async def test_before_the_proxy_literals_and_loopback_names_are_refused(
    dns: dict[str, list[str]],
) -> None:
    for host in ("10.0.0.1", "0x7f.1", "[fe80::1]", "localhost"):
        with pytest.raises(EgressDenied):
            await check_before_proxy(host, 80, STRICT, 1.0)


async def test_before_the_proxy_names_resolving_inside_are_refused(
    dns: dict[str, list[str]],
) -> None:
    dns["metadata.cloud.test"] = ["169.254.169.254"]
    with pytest.raises(EgressDenied):
        await check_before_proxy("metadata.cloud.test", 80, STRICT, 1.0)


async def test_before_the_proxy_unknown_names_are_left_to_the_proxy(
    dns: dict[str, list[str]],
) -> None:
    await check_before_proxy("only-the-proxy-knows.test", 443, STRICT, 1.0)
    dns["search.test"] = ["93.184.216.34"]
    await check_before_proxy("search.test", 443, STRICT, 1.0)


async def test_before_the_proxy_a_slow_resolver_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def hanging(host: str, port: int) -> list[Address]:
        await asyncio.sleep(10)
        raise AssertionError("not reached")

    monkeypatch.setattr(egress, "resolve", hanging)
    await asyncio.wait_for(check_before_proxy("slow.test", 443, STRICT, 0.05), 1.0)


async def test_before_the_proxy_without_local_lookups_names_are_not_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def forbidden(host: str, port: int) -> list[Address]:
        raise AssertionError("resolve_with_proxy is off")

    monkeypatch.setattr(egress, "resolve", forbidden)
    no_lookups = policy(resolve_with_proxy=False)
    await check_before_proxy("anything.test", 443, no_lookups, 1.0)
    with pytest.raises(EgressDenied):
        await check_before_proxy("127.0.0.1", 443, no_lookups, 1.0)
