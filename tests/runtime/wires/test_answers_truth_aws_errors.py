"""Bedrock's error type is read, from the `x-amzn-ErrorType` header and from a body's `__type`.

An AWS error answer names its exception in the `x-amzn-ErrorType` header (`ValidationException:http://internal.
amazon.com/coral/com.amazon.bedrock/`) while Bedrock's body holds only `{"message"}`; an awsJson body names it in
`__type` (`com.amazon.coral.validate#ValidationException`). The AWS SDKs read the name as the part before `:` and
after `#` (smithy's sanitize_error_code). The ProviderError's type and code are that name, so a span's error.type
and a retry policy see `ThrottlingException`, not nothing.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.local_http import Answer, serving

from toolgen.runtime.clients.base import decode_body
from toolgen.runtime.clients.bodies import status_error
from toolgen.runtime.clients.http import HTTPModel
from toolgen.runtime.clients.retry import RetryPolicy
from toolgen.runtime.streams.events import MessageEnd
from toolgen.runtime.wires.canonical import ProviderError, Request, aws_error_name

WIRE = "bedrock-converse"
URL = "http://internal.amazon.com/coral/com.amazon.bedrock/"


@pytest.mark.parametrize(
    ("sent", "name"),
    [
        ("ValidationException", "ValidationException"),
        (f"ValidationException:{URL}", "ValidationException"),
        ("com.amazon.coral.validate#ValidationException", "ValidationException"),
        (f"com.amazon.coral.validate#ValidationException:{URL}", "ValidationException"),
        ("aws.protocoltests.restjson#FooError:http://internal.amazon.com/coral/com.amazon.coral.validate/", "FooError"),
        ("", ""),
    ],
)
def test_an_aws_error_name_is_the_part_between_namespace_and_url(sent: str, name: str) -> None:
    assert aws_error_name(sent) == name


@pytest.mark.parametrize(
    ("status", "reason", "header", "message", "name"),
    [
        (
            403,
            "Forbidden",
            "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/",
            "The security token included in the request is invalid.",
            "UnrecognizedClientException",
        ),
        (
            400,
            "Bad Request",
            f"ValidationException:{URL}",
            "Input is too long for requested model.",
            "ValidationException",
        ),
        (
            429,
            "Too Many Requests",
            "ThrottlingException",
            "Too many requests, please wait before trying again.",
            "ThrottlingException",
        ),
    ],
)
def test_the_header_names_a_bedrock_error_whose_body_holds_only_its_message(
    status: int, reason: str, header: str, message: str, name: str
) -> None:
    content = ('{"message": "' + message + '"}').encode()
    for headers in ({"x-amzn-errortype": header}, httpx.Headers([("X-Amzn-ErrorType", header)])):
        error = status_error(WIRE, status, content, reason, headers)
        assert error.to_json() == {"wire": WIRE, "message": message, "type": name, "code": name, "status": status}
        assert error.raw == {"message": message}
    # Without the header nothing names it, as before.
    bare = status_error(WIRE, status, content, reason)
    assert (bare.type, bare.code, bare.message) == (None, None, message)


def test_a_body_type_is_read_without_its_namespace_and_url() -> None:
    body = {"__type": f"com.amazon.coral.validate#ValidationException:{URL}", "message": "Malformed input request"}
    error = decode_body(body, WIRE)
    assert isinstance(error, ProviderError)
    assert error.to_json() == {
        "wire": WIRE,
        "message": "Malformed input request",
        "type": "ValidationException",
        "code": "ValidationException",
        "status": None,
    }
    assert error.raw == body
    # The same with the header too: one name.
    named = status_error(WIRE, 400, b'{"__type": "ValidationException", "message": "x"}', "", {"x-amzn-errortype": "X"})
    assert (named.type, named.code) == ("ValidationException", "ValidationException")


def test_a_type_the_body_gives_stands_and_the_header_fills_the_code() -> None:
    # An OpenAI-shaped error from an endpoint behind AWS: its own type is kept.
    content = b'{"error": {"message": "bad model", "type": "invalid_request_error", "code": null}}'
    error = status_error("openai-chat", 400, content, "Bad Request", {"x-amzn-errortype": f"ValidationException:{URL}"})
    assert (error.type, error.code, error.message) == ("invalid_request_error", "ValidationException", "bad model")


def test_a_body_that_is_no_error_object_is_named_by_the_header() -> None:
    error = status_error(
        WIRE,
        503,
        b"<html>Service Unavailable</html>",
        "Service Unavailable",
        {"x-amzn-errortype": "ServiceUnavailableException:"},
    )
    assert error.to_json() == {
        "wire": WIRE,
        "message": "HTTP 503 Service Unavailable: <html>Service Unavailable</html>",
        "type": "ServiceUnavailableException",
        "code": "ServiceUnavailableException",
        "status": 503,
    }
    # Without the header it stays an http_error.
    assert status_error(WIRE, 503, b"<html>x</html>", "Service Unavailable").type == "http_error"


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_the_http_client_reads_the_header_of_a_bedrock_error_answer(mode: str) -> None:
    body = json.dumps({"message": "Input is too long for requested model."}).encode()
    answer = Answer(body, 400, headers={"x-amzn-ErrorType": f"ValidationException:{URL}"})
    for server in serving(lambda _: answer):
        model = HTTPModel(
            server.base, "m", wire=WIRE, api_key="ABSKbedrockapikey0123", retry=RetryPolicy(max_retries=0)
        )
        request = Request([{"role": "user", "content": "Hi"}])
        try:
            if mode == "stream":
                end = list(model.stream(request))[-1]
                assert isinstance(end, MessageEnd) and isinstance(end.response, ProviderError)
                error = end.response
            else:
                with pytest.raises(ProviderError) as raised:
                    if mode == "sync":
                        model.complete(request)
                    else:
                        asyncio.run(model.acomplete(request))
                error = raised.value
        finally:
            model.close()
        assert (error.type, error.code, error.status) == ("ValidationException", "ValidationException", 400)
        assert error.message == "Input is too long for requested model."
