"""The resolver `sleuth.transport` hands aiohttp when an egress policy applies: each
connection's host resolved here and checked (`sleuth.egress`) before aiohttp connects
to the addresses it gets. Apart from `transport` so that aiohttp, which it subclasses,
is imported only when the first session is built.
"""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver, ResolveResult

from sleuth import egress
from sleuth.egress import EgressPolicy

__all__ = ["CheckedResolver"]


class CheckedResolver(AbstractResolver):
    """Resolves each connection's host itself and hands aiohttp only checked
    addresses, which it then connects to: no second lookup happens between the check
    and the connection (redirects included: each new host comes here).

    TLS still verifies the certificate against the host name (aiohttp passes the
    URL's host as the server name, not the address connected to). The connector's
    DNS cache is off, so a name is checked on every new connection.
    """

    def __init__(self, policy: EgressPolicy) -> None:
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await egress.allowed_addresses(host, port, self._policy)
        return [
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in addresses
        ]

    async def close(self) -> None:
        return None
