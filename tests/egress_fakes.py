"""Egress helpers for tests: a policy built from settings, and a fake resolver.

Only loopback addresses are ever contacted: a refusal happens before any connection,
and names other than localhost are answered by the fake resolver (`fake_dns`).
"""

from __future__ import annotations

import socket
from ipaddress import ip_address

import pytest

from sleuth import egress
from sleuth.egress import Address, EgressPolicy, EgressSettings


def policy(*allow: str, resolve_with_proxy: bool = True) -> EgressPolicy:
    """The egress policy of default settings, with `allow` as `allow_private`."""
    settings = EgressSettings(allow_private=list(allow), resolve_with_proxy=resolve_with_proxy)
    built = EgressPolicy.from_settings(settings)
    assert built is not None
    return built


def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Replace DNS for the test: names map to addresses in the returned table; an
    unknown name does not resolve."""
    table: dict[str, list[str]] = {}

    async def resolve(host: str, port: int) -> list[Address]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ip_address(address) for address in table[host]]

    monkeypatch.setattr(egress, "resolve", resolve)
    return table
