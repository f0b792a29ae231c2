"""SigV4 over the bytes httpx puts on the wire: a Bedrock base URL with spaces, non-ASCII text, quotes, pre-encoded
parts, `+`, `~`, repeated slashes, or a query with repeated keys and empty values, still authenticates.

The reference is botocore's SigV4Auth, run on the request as it was sent: the raw request target (path and
query as they crossed the socket, or as httpx's Request holds them) and the headers sent. AWS builds its
canonical request from that same request line (the path URI-encoded once more for every service but S3), so a
signature botocore agrees with here is one Bedrock agrees with.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.local_http import Answer, LocalServer, Received

httpx = pytest.importorskip("httpx", reason="the http extra (httpx) is not installed")
botocore_auth = pytest.importorskip("botocore.auth", reason="the bedrock extra (botocore) is not installed")
from botocore.awsrequest import AWSRequest  # noqa: E402 - after the skip that guards it
from botocore.credentials import Credentials  # noqa: E402

from toolgen.runtime.clients.http import HTTPModel  # noqa: E402
from toolgen.runtime.clients.sigv4 import SigV4, signable_url  # noqa: E402
from toolgen.runtime.wires.canonical import Request  # noqa: E402

ACCESS_KEY = "AKIDEXAMPLE7TESTKEY1"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKENvalue0123456789"
REGION = "eu-west-3"
USER = [{"role": "user", "content": "Hello"}]
CONVERSE_OK = b'{"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}, "stopReason": "end_turn"}'
_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)


def botocore_check(method: str, origin: str, target: str, headers: dict[str, str], body: bytes) -> tuple[str, str]:
    """(the signature botocore computes for this request as sent, the canonical request it signed).

    `origin` is scheme://host, `target` the raw request target, `headers` the headers sent (lower-case names)."""
    match = _AUTHORIZATION.match(headers.get("authorization", ""))
    assert match is not None, headers.get("authorization")
    assert match["key"] == ACCESS_KEY and match["region"] == REGION and match["service"] == "bedrock"
    signed = match["signed"].split(";")
    assert {"host", "x-amz-date"} <= set(signed)
    token = headers.get("x-amz-security-token")
    assert token is None or "x-amz-security-token" in signed
    request = AWSRequest(method=method, url=origin + target, data=body, headers={n: headers[n] for n in signed})
    request.context["timestamp"] = headers["x-amz-date"]
    signer = botocore_auth.SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, token), "bedrock", REGION)
    canonical = signer.canonical_request(request)
    return signer.signature(signer.string_to_sign(request, canonical), request), canonical


def given_signature(headers: dict[str, str]) -> str:
    match = _AUTHORIZATION.match(headers["authorization"])
    assert match is not None
    return match["signature"]


class VerifyingBedrock:
    """A Bedrock stand-in on 127.0.0.1: recomputes each signature with botocore from the raw request line and
    headers it read, answers 403 on a mismatch (as Bedrock does) and a Converse body otherwise."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.canonical: list[str] = []
        self.server = LocalServer(self)

    def __call__(self, received: Received) -> Answer:
        expected, canonical = botocore_check(
            received.method, f"http://{received.headers['host']}", received.path, received.headers, received.body
        )
        self.canonical.append(canonical)
        if not hmac.compare_digest(expected, given_signature(received.headers)):
            self.problems.append(received.path)
            return Answer(b'{"message": "The request signature we calculated does not match"}', 403)
        return Answer(CONVERSE_OK)


@pytest.fixture(scope="module")
def bedrock() -> Iterator[VerifyingBedrock]:
    verifying = VerifyingBedrock()
    try:
        yield verifying
    finally:
        verifying.server.close()


def signer(token: str | None) -> SigV4:
    return SigV4(REGION, credentials=Credentials(ACCESS_KEY, SECRET_KEY, token))


def call(base: str, model: str, token: str | None) -> str:
    client = HTTPModel(base, model, wire="bedrock-converse", auth=signer(token), retry=None)
    try:
        message = client.complete(Request(USER)).message
    finally:
        client.close()
    return str(message["content"])


# ---- random URLs ----

_PIECES = (
    *"aZ09-_.~+ '\"!$&()*,;=:@|^`{}[]<>\\",
    *("é", "日本", "😀", "Ω"),
    *("%2F", "%2f", "%20", "%7E", "%25", "%zz", "%", "%2"),
)
_segment = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join)
_path = st.lists(_segment, max_size=5).map(lambda segments: "/" + "/".join(segments))
_pair = st.tuples(
    st.sampled_from(("a", "b", "Ab", "x y", "é", "%41", "k~", "k+")),
    st.one_of(st.none(), st.lists(st.sampled_from((*_PIECES, "=")), max_size=5).map("".join)),
)
_query = st.lists(_pair, max_size=5).map(
    lambda pairs: "&".join(name if value is None else f"{name}={value}" for name, value in pairs)
)
_models = st.sampled_from(
    (
        "anthropic.claude-sonnet-4-5",
        "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.amazon.nova-micro-v1:0",
        "my model é/v1",
    )
)
_tokens = st.sampled_from((None, SESSION_TOKEN))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_path, query=_query, model=_models, token=_tokens)
def test_random_base_urls_pass_a_server_that_checks_what_it_received(
    bedrock: VerifyingBedrock, path: str, query: str, model: str, token: str | None
) -> None:
    base = bedrock.server.base + path + (f"?{query}" if query else "")
    before = len(bedrock.server.seen)
    assert call(base, model, token) == "ok", (base, bedrock.problems[-1:])
    assert bedrock.problems == []
    seen = bedrock.server.seen[before]
    assert seen.headers.get("x-amz-security-token") == token


@settings(max_examples=200, deadline=None)
@given(
    origin=st.sampled_from(
        (
            "https://bedrock-runtime.eu-west-3.amazonaws.com",
            "https://bedrock-runtime.eu-west-3.amazonaws.com:443",
            "http://proxy.example:8080",
            "https://BÜCHER.example",
            "http://[::1]:9000",
            "https://vpce-0a1b2c.bedrock-runtime.eu-west-3.vpce.amazonaws.com:8443",
        )
    ),
    path=_path,
    query=_query,
    model=_models,
    token=_tokens,
)
def test_the_signature_is_botocores_for_the_request_httpx_sends(
    origin: str, path: str, query: str, model: str, token: str | None
) -> None:
    """No network: httpx's MockTransport hands over the request exactly as httpx would write it, and botocore
    signs that (raw target, Host and headers as httpx holds them) to the same signature."""
    sent: list[Any] = []

    def answer(request: Any) -> Any:
        sent.append(request)
        return httpx.Response(200, content=CONVERSE_OK, headers={"content-type": "application/json"})

    client = HTTPModel(
        origin + path + (f"?{query}" if query else ""), model, wire="bedrock-converse", auth=signer(token)
    )
    client._client = httpx.Client(transport=httpx.MockTransport(answer))
    try:
        assert client.complete(Request(USER)).message["content"] == "ok"
    finally:
        client.close()
    (request,) = sent
    headers = {name.lower(): value for name, value in request.headers.items()}
    target = request.url.raw_path.decode("ascii")
    expected, _ = botocore_check("POST", f"{request.url.scheme}://{headers['host']}", target, headers, request.content)
    assert given_signature(headers) == expected
    assert headers.get("x-amz-security-token") == token
    # The query went out in SigV4's own spelling, so AWS reading it back signs the same string botocore did.
    wire_query = target.partition("?")[2]
    assert all(re.fullmatch(r"(?:[A-Za-z0-9\-_.~]|%[0-9A-F]{2})*", piece) for piece in re.split("[&=]", wire_query))


# ---- explicit cases: the request line sent and the canonical request signed ----

CASES = [
    # (base path and query, model, the request target sent, the canonical URI, the canonical query)
    ("/a b", "m", "/a%20b/model/m/converse", "/a%2520b/model/m/converse", ""),
    ("/café/日本", "m", "/caf%C3%A9/%E6%97%A5%E6%9C%AC/model/m/converse",
     "/caf%25C3%25A9/%25E6%2597%25A5%25E6%259C%25AC/model/m/converse", ""),
    ("/it's \"q\"", "m", "/it's%20%22q%22/model/m/converse", "/it%27s%2520%2522q%2522/model/m/converse", ""),
    ("/pre%2Fenc%20oded", "m", "/pre%2Fenc%20oded/model/m/converse", "/pre%252Fenc%2520oded/model/m/converse", ""),
    ("/a+b~c", "m", "/a+b~c/model/m/converse", "/a%2Bb~c/model/m/converse", ""),
    # (http.server folds a leading `//` of what it reads, so the repeated slashes stand inside the path.)
    ("/x///y//", "m", "/x///y/model/m/converse", "/x/y/model/m/converse", ""),
    ("/p", "us.anthropic.claude-3-5-haiku-20241022-v1:0", "/p/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/converse",
     "/p/model/us.anthropic.claude-3-5-haiku-20241022-v1%253A0/converse", ""),
    ("/p?b=2&a=1&a=&a&c=x y&d=%7e&e=+&f='", "m", "/p/model/m/converse?b=2&a=1&a=&a&c=x%20y&d=~&e=%2B&f=%27",
     "/p/model/m/converse", "a=&a=&a=1&b=2&c=x%20y&d=~&e=%2B&f=%27"),
    ("/q?&&k=v&&", "m", "/q/model/m/converse?k=v", "/q/model/m/converse", "k=v"),
]  # fmt: skip


@pytest.mark.parametrize(("base", "model", "target", "uri", "query"), CASES)
@pytest.mark.parametrize("token", [None, SESSION_TOKEN])
def test_odd_base_urls_send_and_sign_what_aws_expects(
    bedrock: VerifyingBedrock, base: str, model: str, target: str, uri: str, query: str, token: str | None
) -> None:
    before = len(bedrock.server.seen)
    assert call(bedrock.server.base + base, model, token) == "ok"
    assert bedrock.problems == []
    seen = bedrock.server.seen[before]
    assert seen.path == target
    method, canonical_uri, canonical_query, *_ = bedrock.canonical[before].split("\n")
    assert (method, canonical_uri, canonical_query) == ("POST", uri, query)
    assert json.loads(seen.body)["messages"] == [{"role": "user", "content": [{"text": "Hello"}]}]


def test_signing_the_url_as_written_is_what_failed() -> None:
    """Why the URL must be the one sent: botocore given `/a b` signs `/a%20b`; AWS, reading `/a%20b` off the
    request line, signs `/a%2520b`."""
    credentials = Credentials(ACCESS_KEY, SECRET_KEY)
    as_written = AWSRequest(method="POST", url="https://h/a b/model/m/converse", data=b"{}")
    as_sent = AWSRequest(method="POST", url="https://h/a%20b/model/m/converse", data=b"{}")
    sign = botocore_auth.SigV4Auth(credentials, "bedrock", REGION)
    for request in (as_written, as_sent):
        request.context["timestamp"] = "20250101T000000Z"
    assert sign.canonical_request(as_written).split("\n")[1] == "/a%20b/model/m/converse"
    assert sign.canonical_request(as_sent).split("\n")[1] == "/a%2520b/model/m/converse"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h/p", "https://h/p"),
        ("https://h/p?", "https://h/p?"),
        ("https://h/a b?x=a b", "https://h/a b?x=a%20b"),
        (
            "https://h/p?k+1=v+2&é=%c3%a9&t=~%7E&pct=%zz&eq=a=b&flag",
            "https://h/p?k%2B1=v%2B2&%C3%A9=%C3%A9&t=~~&pct=%25zz&eq=a%3Db&flag",
        ),
        ("https://h/p?a=1&&b=2&", "https://h/p?a=1&b=2"),
    ],
)
def test_signable_url_spells_the_query_as_sigv4_does(url: str, expected: str) -> None:
    assert signable_url(url) == expected
    # httpx sends it as it is: nothing left for it to encode.
    assert httpx.URL(expected).raw_path.partition(b"?")[2] == expected.partition("?")[2].encode()
