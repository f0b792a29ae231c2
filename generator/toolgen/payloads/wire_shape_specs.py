"""The documented shape of each wire's request and response bodies, down to every kind of content block.

The shapes are written with wire_shapes.py; `shape_problems` checks a body against its wire's. Top-level keys
are optional here (the decoder says what a body lacks as a whole); what each shape names is what the provider's
API reference documents for that kind of block, and WIRE-FORMATS.md what recorded bodies show. Kinds a wire documents but canonical content has no place for (server tool blocks,
citations, cache points) are checked too: a body holding one malformed is not one the provider sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from toolgen.payloads.wire_shapes import (
    ANY,
    BOOLEAN,
    NULL_OR_STRING,
    NUMBER,
    OBJECT,
    STRING,
    Array,
    Enum,
    Lazy,
    Members,
    Obj,
    Problems,
    Shape,
    Tagged,
    either,
)

_NULL = type(None)


def _text_or(what: str, blocks: Shape) -> Shape:
    return either(f"a string or an array of {what}", (str, STRING), (list, Array(blocks)))


# ---- Anthropic Messages ----

_ANTHROPIC_IMAGE_TYPES = Enum(("image/jpeg", "image/png", "image/gif", "image/webp"))
_ANTHROPIC_IMAGE_SOURCE = Tagged(
    "type",
    {
        "base64": Obj({"media_type": _ANTHROPIC_IMAGE_TYPES, "data": STRING}),
        "url": Obj({"url": STRING}),
        "file": Obj({"file_id": STRING}),
    },
    closed=True,
    what="an image source object",
)


def _anthropic_document_source() -> Shape:
    return Tagged(
        "type",
        {
            "base64": Obj({"media_type": Enum(("application/pdf",)), "data": STRING}),
            "text": Obj({"media_type": Enum(("text/plain",)), "data": STRING}),
            "url": Obj({"url": STRING}),
            "file": Obj({"file_id": STRING}),
            "content": Obj({"content": _text_or("content blocks", _ANTHROPIC_BLOCK)}),
        },
        closed=True,
        what="a document source object",
    )


_ANTHROPIC_TEXT = Obj(
    {"text": STRING}, {"citations": either("an array of citations or null", (list, Array(OBJECT)), (_NULL, ANY))}
)
_ANTHROPIC_CALL = Obj({"id": STRING, "name": STRING, "input": OBJECT})
_ANTHROPIC_SERVER_RESULT = Obj({"tool_use_id": STRING, "content": ANY})
_ANTHROPIC_KINDS: dict[str, Shape] = {
    "text": _ANTHROPIC_TEXT,
    "image": Obj({"source": _ANTHROPIC_IMAGE_SOURCE}),
    "document": Obj(
        {"source": Lazy(_anthropic_document_source, "a document source object")},
        {"title": NULL_OR_STRING, "context": NULL_OR_STRING},
    ),
    "search_result": Obj(
        {"source": STRING, "title": STRING, "content": Array(Tagged("type", {"text": _ANTHROPIC_TEXT}))}
    ),
    "tool_use": _ANTHROPIC_CALL,
    "server_tool_use": _ANTHROPIC_CALL,
    "mcp_tool_use": Obj({"id": STRING, "name": STRING, "server_name": STRING, "input": OBJECT}),
    "thinking": Obj({"thinking": STRING, "signature": STRING}),
    "redacted_thinking": Obj({"data": STRING}),
    "container_upload": Obj({"file_id": STRING}),
    "web_search_tool_result": _ANTHROPIC_SERVER_RESULT,
    "web_fetch_tool_result": _ANTHROPIC_SERVER_RESULT,
    "code_execution_tool_result": _ANTHROPIC_SERVER_RESULT,
    "bash_code_execution_tool_result": _ANTHROPIC_SERVER_RESULT,
    "text_editor_code_execution_tool_result": _ANTHROPIC_SERVER_RESULT,
    "tool_search_tool_result": _ANTHROPIC_SERVER_RESULT,
    "mcp_tool_result": Obj({"tool_use_id": STRING}, {"is_error": BOOLEAN}),
}
_ANTHROPIC_BLOCK = Tagged("type", _ANTHROPIC_KINDS, what="a content block object")
_ANTHROPIC_RESULT_CONTENT = _text_or(
    "content blocks",
    Tagged(
        "type",
        {key: _ANTHROPIC_KINDS[key] for key in ("text", "image", "document", "search_result")},
        what="a content block object",
    ),
)
_ANTHROPIC_KINDS["tool_result"] = Obj(
    {"tool_use_id": STRING}, {"content": _ANTHROPIC_RESULT_CONTENT, "is_error": BOOLEAN}
)
_ANTHROPIC_CONTENT = _text_or("content blocks", _ANTHROPIC_BLOCK)
_ANTHROPIC_MESSAGE = Obj({"content": _ANTHROPIC_CONTENT}, what="a message object")

ANTHROPIC_REQUEST = Obj(
    optional={
        "system": _text_or("text blocks", Tagged("type", {"text": _ANTHROPIC_TEXT}, what="a text block object")),
        "messages": Array(_ANTHROPIC_MESSAGE),
    }
)
ANTHROPIC_RESPONSE = Obj(optional={"content": Array(_ANTHROPIC_BLOCK)})


# ---- chat completions: OpenAI and its spellings (camelCase keys), Mistral ----


def _chat(key: Any, mistral: bool = False) -> tuple[Shape, Shape]:
    """(request, response) shapes of a chat-completions wire; `key` gives the dialect's spelling of a key."""
    image = Obj({"url": STRING}, {"detail": Enum(("auto", "low", "high"))}, what="an image_url object")
    kinds: dict[str, Shape] = {
        "text": Obj({"text": STRING}),
        "image_url": Obj({key("image_url"): image}),
        "input_audio": Obj({key("input_audio"): Obj({"data": STRING, "format": STRING}, what="an input_audio object")}),
        "file": Obj(
            {
                "file": Obj(
                    optional={key("file_id"): STRING, key("file_data"): STRING, "filename": STRING},
                    one_of=((key("file_id"), key("file_data")),),
                    what="file object",
                )
            }
        ),
        "refusal": Obj({"refusal": STRING}),
    }
    if mistral:
        kinds["image_url"] = Obj({"image_url": either("a URL or an image_url object", (str, STRING), (dict, image))})
        # Mistral documents `file_id`; toolgen's codec reads and writes OpenAI's `file` object too.
        kinds["file"] = Obj(
            optional={"file_id": STRING, "file": OBJECT}, one_of=(("file_id", "file"),), what="file chunk"
        )
        kinds["document_url"] = Obj({"document_url": STRING})
        kinds["thinking"] = Obj(
            {
                "thinking": either(
                    "an array of text chunks", (str, STRING), (list, Array(Tagged("type", {"text": kinds["text"]})))
                )
            }
        )
        kinds["input_audio"] = Obj(
            {"input_audio": either("base64 audio or an input_audio object", (str, STRING), (dict, OBJECT))}
        )
    part = Tagged("type", kinds, what="a content part object")
    content = either("a string, null or an array of content parts", (str, STRING), (_NULL, ANY), (list, Array(part)))
    function = Obj(
        {"name": STRING},
        {"arguments": either("the arguments as JSON text", (str, STRING), (dict, OBJECT))},
        what="a function object",
    )
    call = Obj(
        {"function": function},
        {"id": STRING, "type": STRING},
        what="a tool call object",
    )
    assistant = Obj(
        optional={
            "content": content,
            key("tool_calls"): Array(call),
            "refusal": NULL_OR_STRING,
            key("function_call"): function,
            key("reasoning_content"): STRING,
        },
        what="a message object",
    )
    plain = Obj(optional={"content": content, "name": STRING}, what="a message object")
    message = Tagged(
        "role",
        {
            "system": plain,
            "developer": plain,
            "user": plain,
            "assistant": assistant,
            "tool": Obj({key("tool_call_id"): STRING}, {"content": content}, what="a message object"),
            "function": Obj({"name": STRING}, {"content": NULL_OR_STRING}, what="a message object"),
        },
        what="a message object",
    )
    request = Obj(optional={"messages": Array(message)})
    response = Obj(
        optional={"choices": Array(Obj(optional={"message": assistant, "delta": OBJECT}, what="a choice object"))}
    )
    return request, response


def _same(name: str) -> str:
    return name


_CAMEL = {
    "tool_calls": "toolCalls",
    "tool_call_id": "toolCallId",
    "function_call": "functionCall",
    "reasoning_content": "reasoningContent",
    "image_url": "imageUrl",
    "input_audio": "inputAudio",
    "file_id": "fileId",
    "file_data": "fileData",
}
OPENAI_CHAT = _chat(_same)
CAMEL_CHAT = _chat(lambda name: _CAMEL.get(name, name))
MISTRAL = _chat(_same, mistral=True)


# ---- OpenAI Responses ----

_RESPONSES_INPUT_PARTS: dict[str, Shape] = {
    "input_text": Obj({"text": STRING}),
    "input_image": Obj(
        optional={"image_url": STRING, "file_id": STRING, "detail": Enum(("low", "high", "auto"))},
        one_of=(("image_url", "file_id"),),
        what="input_image part",
    ),
    "input_file": Obj(
        optional={"file_id": STRING, "file_data": STRING, "file_url": STRING, "filename": STRING},
        one_of=(("file_id", "file_data", "file_url"),),
        what="input_file part",
    ),
    "input_audio": Obj({"input_audio": Obj({"data": STRING, "format": STRING})}),
    "output_text": Obj({"text": STRING}, {"annotations": Array(OBJECT)}),
    "refusal": Obj({"refusal": STRING}),
    "reasoning_text": Obj({"text": STRING}),
}
_RESPONSES_PART = Tagged("type", _RESPONSES_INPUT_PARTS, what="a content part object")
_RESPONSES_OUTPUT = _text_or("content parts", _RESPONSES_PART)
_RESPONSES_ITEM = Tagged(
    "type",
    {
        "message": Obj({"role": STRING}, {"content": _RESPONSES_OUTPUT}, what="a message item"),
        "function_call": Obj({"call_id": STRING, "name": STRING, "arguments": STRING}),
        "function_call_output": Obj({"call_id": STRING, "output": _RESPONSES_OUTPUT}),
        "custom_tool_call": Obj({"call_id": STRING, "name": STRING, "input": STRING}),
        "custom_tool_call_output": Obj({"call_id": STRING, "output": _RESPONSES_OUTPUT}),
        "reasoning": Obj(
            {"summary": Array(Tagged("type", {"summary_text": Obj({"text": STRING})}, what="a summary part"))},
            {"encrypted_content": NULL_OR_STRING, "content": Array(_RESPONSES_PART)},
        ),
        "item_reference": Obj({"id": STRING}),
    },
    default="message",
    what="an input or output item",
)
RESPONSES_REQUEST = Obj(
    optional={
        "input": either("a string or an array of items", (str, STRING), (list, Array(_RESPONSES_ITEM))),
        "instructions": NULL_OR_STRING,
    }
)
RESPONSES_RESPONSE = Obj(optional={"output": Array(_RESPONSES_ITEM)})


# ---- Gemini generateContent ----

_GEMINI_PART = Members(
    {
        "text": STRING,
        "inlineData|inline_data": Obj({"mimeType|mime_type": STRING, "data": STRING}, what="an inlineData object"),
        "fileData|file_data": Obj(
            {"fileUri|file_uri": STRING}, {"mimeType|mime_type": STRING}, what="a fileData object"
        ),
        "functionCall|function_call": Obj(
            {"name": STRING}, {"args": OBJECT, "id": STRING}, what="a functionCall object"
        ),
        "functionResponse|function_response": Obj(
            {"name": STRING, "response": OBJECT}, {"id": STRING}, what="a functionResponse object"
        ),
        "executableCode|executable_code": Obj({"language": ANY, "code": STRING}, what="an executableCode object"),
        "codeExecutionResult|code_execution_result": Obj(
            {"outcome": ANY}, {"output": STRING}, what="a codeExecutionResult object"
        ),
        "thought": BOOLEAN,
        "thoughtSignature|thought_signature": STRING,
    },
    what="a part object",
)
_GEMINI_CONTENT = Obj(optional={"parts": Array(_GEMINI_PART), "role": STRING}, what="a content object")
GEMINI_REQUEST = Obj(
    optional={"contents": Array(_GEMINI_CONTENT), "systemInstruction|system_instruction": _GEMINI_CONTENT}
)
GEMINI_RESPONSE = Obj(
    optional={"candidates": Array(Obj(optional={"content": _GEMINI_CONTENT}, what="a candidate object"))}
)


# ---- Bedrock Converse ----

_BEDROCK_SOURCE = Members({"bytes": STRING, "s3Location": Obj({"uri": STRING})}, needed=True, what="a source object")
_BEDROCK_IMAGE = Obj(
    {"format": Enum(("png", "jpeg", "gif", "webp")), "source": _BEDROCK_SOURCE}, what="an image object"
)
_BEDROCK_DOCUMENT = Obj(
    {
        "name": STRING,
        "source": Members(
            {"bytes": STRING, "s3Location": Obj({"uri": STRING}), "text": STRING, "content": Array(OBJECT)},
            needed=True,
            what="a source object",
        ),
    },
    {"format": STRING},
    what="a document object",
)
_BEDROCK_VIDEO = Obj({"format": STRING, "source": _BEDROCK_SOURCE}, what="a video object")
_BEDROCK_RESULT_BLOCK = Members(
    {"text": STRING, "json": ANY, "image": _BEDROCK_IMAGE, "document": _BEDROCK_DOCUMENT, "video": _BEDROCK_VIDEO},
    needed=True,
    what="a tool result content block",
)
_BEDROCK_BLOCK = Members(
    {
        "text": STRING,
        "image": _BEDROCK_IMAGE,
        "document": _BEDROCK_DOCUMENT,
        "video": _BEDROCK_VIDEO,
        "toolUse": Obj({"toolUseId": STRING, "name": STRING, "input": ANY}, what="a toolUse object"),
        "toolResult": Obj(
            {"toolUseId": STRING, "content": Array(_BEDROCK_RESULT_BLOCK)},
            {"status": Enum(("success", "error"))},
            what="a toolResult object",
        ),
        "reasoningContent": Members(
            {
                "reasoningText": Obj({"text": STRING}, {"signature": STRING}, what="a reasoningText object"),
                "redactedContent": STRING,
            },
            needed=True,
            what="a reasoningContent object",
        ),
        "cachePoint": Obj({"type": STRING}, what="a cachePoint object"),
        "guardContent": OBJECT,
        "citationsContent": OBJECT,
    },
    what="a content block object",
)
_BEDROCK_MESSAGE = Obj(optional={"content": Array(_BEDROCK_BLOCK)}, what="a message object")
BEDROCK_REQUEST = Obj(
    optional={
        "messages": Array(_BEDROCK_MESSAGE),
        "system": Array(
            Members(
                {"text": STRING, "cachePoint": Obj({"type": STRING}), "guardContent": OBJECT}, what="a system block"
            )
        ),
    }
)
BEDROCK_RESPONSE = Obj(optional={"output": Obj(optional={"message": _BEDROCK_MESSAGE}, what="an output object")})


# ---- Cohere v2 chat ----

_COHERE_TEXT = Obj({"text": STRING})
_COHERE_DOCUMENT = Obj(
    {"document": Obj({"data": either("an object or a string", (dict, OBJECT), (str, STRING))}, {"id": STRING})}
)
_COHERE_CALL = Obj(
    optional={
        "id": STRING,
        "type": STRING,
        "function": Obj({"name": STRING}, {"arguments": STRING}, what="a function object"),
    },
    what="a tool call object",
)
_COHERE_MESSAGE = Tagged(
    "role",
    {
        "system": Obj(optional={"content": _text_or("content parts", Tagged("type", {"text": _COHERE_TEXT}))}),
        "user": Obj(
            optional={
                "content": _text_or(
                    "content parts",
                    Tagged(
                        "type",
                        {
                            "text": _COHERE_TEXT,
                            "image_url": Obj({"image_url": Obj({"url": STRING})}),
                            "document": _COHERE_DOCUMENT,
                        },
                    ),
                )
            }
        ),
        "assistant": Obj(
            optional={
                "content": _text_or(
                    "content parts", Tagged("type", {"text": _COHERE_TEXT, "thinking": Obj({"thinking": STRING})})
                ),
                "tool_calls": Array(_COHERE_CALL),
                "tool_plan": STRING,
            }
        ),
        "tool": Obj(
            {"tool_call_id": STRING},
            {
                "content": _text_or(
                    "content parts", Tagged("type", {"text": _COHERE_TEXT, "document": _COHERE_DOCUMENT})
                )
            },
        ),
    },
    what="a message object",
)
COHERE_REQUEST = Obj(optional={"messages": Array(_COHERE_MESSAGE)})
COHERE_RESPONSE = Obj(optional={"message": _COHERE_MESSAGE})


# ---- Ollama /api/chat ----

_OLLAMA_MESSAGE = Obj(
    optional={
        "content": STRING,
        "images": either("an array of base64 images or null", (list, Array(STRING)), (_NULL, ANY)),
        "thinking": STRING,
        "tool_calls": Array(
            Obj(
                {"function": Obj({"name": STRING}, {"arguments": OBJECT, "index": NUMBER}, what="a function object")},
                {"id": STRING},
                what="a tool call object",
            )
        ),
        "tool_name": STRING,
    },
    what="a message object",
)
OLLAMA_REQUEST = Obj(optional={"messages": Array(_OLLAMA_MESSAGE)})
OLLAMA_RESPONSE = Obj(optional={"message": _OLLAMA_MESSAGE})


# ---- Google Interactions ----

_INTERACTIONS_MEDIA = Obj(
    optional={"data": STRING, "uri": STRING, "mime_type": STRING}, one_of=(("data", "uri"),), what="media item"
)
_INTERACTIONS_TEXT = Obj({"text": STRING})
_INTERACTIONS_KINDS: dict[str, Shape] = {
    "text": _INTERACTIONS_TEXT,
    "image": _INTERACTIONS_MEDIA,
    "audio": _INTERACTIONS_MEDIA,
    "document": _INTERACTIONS_MEDIA,
    "video": _INTERACTIONS_MEDIA,
    "thought": Obj(optional={"signature": STRING, "summary": Array(Tagged("type", {"text": _INTERACTIONS_TEXT}))}),
    "function_call": Obj({"id": STRING, "name": STRING, "arguments": OBJECT}),
    "function_result": Obj({"call_id": STRING, "result": ANY}, {"name": STRING, "is_error": BOOLEAN}),
}
_INTERACTIONS_ITEM = Tagged("type", _INTERACTIONS_KINDS, what="a content item")
_INTERACTIONS_STEP = Tagged(
    "type",
    {
        **_INTERACTIONS_KINDS,
        "user_input": Obj(optional={"content": _text_or("content items", _INTERACTIONS_ITEM)}),
        "model_output": Obj(optional={"content": Array(_INTERACTIONS_ITEM)}),
    },
    what="a step object",
)
INTERACTIONS_REQUEST = Obj(
    optional={"input": either("a string or an array of steps", (str, STRING), (list, Array(_INTERACTIONS_STEP)))}
)
INTERACTIONS_RESPONSE = Obj(optional={"steps": Array(_INTERACTIONS_STEP), "outputs": Array(_INTERACTIONS_ITEM)})


SHAPES: Mapping[tuple[str, str], Shape] = MappingProxyType(
    {
        ("anthropic", "request"): ANTHROPIC_REQUEST,
        ("anthropic", "response"): ANTHROPIC_RESPONSE,
        ("openai-chat", "request"): OPENAI_CHAT[0],
        ("openai-chat", "response"): OPENAI_CHAT[1],
        ("openai-chat-camel", "request"): CAMEL_CHAT[0],
        ("openai-chat-camel", "response"): CAMEL_CHAT[1],
        ("mistral", "request"): MISTRAL[0],
        ("mistral", "response"): MISTRAL[1],
        ("openai-responses", "request"): RESPONSES_REQUEST,
        ("openai-responses", "response"): RESPONSES_RESPONSE,
        ("gemini", "request"): GEMINI_REQUEST,
        ("gemini", "response"): GEMINI_RESPONSE,
        ("bedrock-converse", "request"): BEDROCK_REQUEST,
        ("bedrock-converse", "response"): BEDROCK_RESPONSE,
        ("cohere", "request"): COHERE_REQUEST,
        ("cohere", "response"): COHERE_RESPONSE,
        ("ollama", "request"): OLLAMA_REQUEST,
        ("ollama", "response"): OLLAMA_RESPONSE,
        ("google-interactions", "request"): INTERACTIONS_REQUEST,
        ("google-interactions", "response"): INTERACTIONS_RESPONSE,
    }
)

# The key a response of each wire holds its message in: a body without it is an error body (or no body of the
# wire at all), which the decoder reads.
_MESSAGE_KEYS = MappingProxyType(
    {
        "anthropic": "content",
        "openai-chat": "choices",
        "openai-chat-camel": "choices",
        "mistral": "choices",
        "openai-responses": "output",
        "gemini": "candidates",
        "bedrock-converse": "output",
        "cohere": "message",
        "ollama": "message",
        "google-interactions": "steps",
    }
)


def is_error_body(wire: str, kind: str, body: dict[str, Any]) -> bool:
    """A provider's error body, which has no blocks to check (the decoder reads it as the error it is)."""
    if kind != "response":
        return False
    if body.get("type") == "error" or (wire == "openai-responses" and body.get("status") == "failed"):
        return True
    key = _MESSAGE_KEYS.get(wire)
    if key is None:
        return False
    if wire == "cohere":  # its error bodies say `message` too, as a string
        return not isinstance(body.get(key), dict)
    return key not in body and (wire != "google-interactions" or "outputs" not in body)


def shape_problems(wire: str, kind: str, body: Any) -> list[tuple[str, str]]:
    """(pointer, sentence) for every place `body` is not the `kind` (request or response) `wire` documents."""
    shape = SHAPES.get((wire, kind))
    if shape is None or not isinstance(body, dict) or is_error_body(wire, kind, body):
        return []
    out: Problems = []
    shape.check(body, "", out)
    return list(dict.fromkeys(out))  # a problem two shapes found once
