# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Request URLs: a route's path joined to a base URL that may carry a query, and URLs with their secrets masked."""

from __future__ import annotations

import urllib.parse

from .secrets import MASK, Redactor

# Query parameters that carry credentials (Gemini's `key`, presigned AWS URLs, OAuth tokens), in lower case.
SECRET_PARAMETERS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
    }
)


def join_url(base: str, path: str) -> str:
    """`base` + `path`, any query of the base (Azure's `?api-version=`) kept at the end, after the path's own.

    `https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21` and `/chat/completions` give
    `https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21`.
    """
    parts = urllib.parse.urlsplit(base)
    route, _, route_query = path.partition("?")
    query = "&".join(q for q in (route_query, parts.query) if q)
    return urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/") + route, query, "")
    )


def masked_url(url: str, redactor: Redactor) -> str:
    """The URL with the values of credential parameters masked, and any known secret elsewhere in it too."""
    parts = urllib.parse.urlsplit(url)
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(
        f"{urllib.parse.quote(name, safe='-_.~')}="
        + (
            MASK
            if name.lower() in SECRET_PARAMETERS
            else urllib.parse.quote(value, safe="-_.~:")
        )
        for name, value in pairs
    )
    kept = urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path, query, parts.fragment)
    )
    return redactor.text(kept)
