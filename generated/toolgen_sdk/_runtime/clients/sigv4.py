# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""AWS Signature Version 4 for Bedrock, through botocore's signer and credential chain (the `bedrock` extra).

Credentials come from botocore's chain: the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
variables, the shared config and credentials files (AWS_PROFILE or `profile=`), SSO and assumed roles, container
and instance roles; refreshable ones are refreshed before they expire. The region is `region=`, else AWS_REGION,
AWS_DEFAULT_REGION or the profile's region.

The signature covers the request as it goes on the wire: the caller hands over the URL whose path and query are
the bytes of the request line (percent-encoded, as httpx sends them) and the Host header sent. botocore then
builds the canonical request as AWS does for every service but S3: the path with dot segments and repeated
slashes removed, URI-encoded once more (`/a%20b` is signed as `/a%2520b`), and the query's pairs sorted as
sent. AWS reads each query name and value back and encodes it afresh before sorting, so `signable_url` first
spells the query that way: then what is sent, what is signed and what the server recomputes are one string.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..extras import optional_module

# The headers botocore adds when it signs: what the request sends on top of its own.
_SIGNING_HEADERS = frozenset({"authorization", "x-amz-date", "x-amz-security-token"})


def _botocore(name: str) -> ModuleType:
    # Without botocore a Bedrock API key still works: the error says so beside the extra to install.
    needs = "Signing Bedrock requests with SigV4 (a Bedrock API key needs none)"
    return optional_module(f"botocore.{name}", "bedrock", needs)


def aws_region(region: str | None = None, profile: str | None = None) -> str:
    """The region asked for, else the environment's, else the profile's; ValueError saying where to set one."""
    found = (
        region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    )
    if not found:
        session = _botocore("session").Session(profile=profile)
        found = session.get_config_variable("region")
    if not found:
        raise ValueError(
            "no AWS region: pass region=, or set AWS_REGION or a region in the AWS profile"
        )
    return str(found)


def _encoded(text: str) -> str:
    """`text` percent-decoded, then encoded as SigV4 wants: RFC 3986 unreserved characters as they are, every
    other byte as %XX in capitals (a `+` is a plus sign, never a space)."""
    raw = urllib.parse.unquote_to_bytes(text)
    return urllib.parse.quote_from_bytes(raw, safe="-_.~")


def signable_url(url: str) -> str:
    """`url` with its query in SigV4's canonical spelling, pair order kept and empty pairs left out; the rest
    of the URL as it is."""
    parts = urllib.parse.urlsplit(url)
    if not parts.query:
        return url
    pairs = []
    for pair in parts.query.split("&"):
        if pair:
            name, equals, value = pair.partition("=")
            pairs.append(_encoded(name) + equals + _encoded(value))
    return urllib.parse.urlunsplit(parts._replace(query="&".join(pairs)))


class SigV4:
    """Signs every attempt with SigV4 for one service and region; `credentials` overrides the chain."""

    def __init__(
        self,
        region: str | None = None,
        *,
        service: str = "bedrock",
        profile: str | None = None,
        credentials: Any = None,
    ) -> None:
        self.region = aws_region(region, profile)
        self.service = service
        if credentials is None:
            credentials = (
                _botocore("session").Session(profile=profile).get_credentials()
            )
        if credentials is None:
            raise ValueError(
                "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
                "(shared config and credentials files), or run where a role is attached"
            )
        self._credentials = credentials
        self._seen: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"SigV4(region={self.region!r}, service={self.service!r})"

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """Authorization, X-Amz-Date and (with temporary credentials) X-Amz-Security-Token for these bytes.

        `url` is the URL as sent (its path and query percent-encoded as on the request line), and `headers` the
        headers to sign as sent, `host` among them (else botocore takes the host from `url`).
        """
        auth = _botocore("auth")
        request = _botocore("awsrequest").AWSRequest(
            method=method, url=url, data=body, headers=dict(headers)
        )
        # Frozen: a refresh between reading the key and the token cannot mix two sets of credentials.
        frozen = self._credentials.get_frozen_credentials()
        auth.SigV4Auth(frozen, self.service, self.region).add_auth(request)
        values = (frozen.access_key, frozen.secret_key, frozen.token)
        self._seen = tuple(dict.fromkeys((*self._seen, *(v for v in values if v))))
        return {
            name.lower(): str(value)
            for name, value in request.headers.items()
            if name.lower() in _SIGNING_HEADERS
        }

    def secrets(self) -> tuple[str, ...]:
        return self._seen
