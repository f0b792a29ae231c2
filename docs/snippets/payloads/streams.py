"""Streams: typed events from the wire's bytes, and a call the wire did not close never passed off as whole."""

from pathlib import Path

from toolgen_sdk import adapters

recorded = Path(__file__).with_name("cut-mid-call.sse").read_bytes()  # the connection dropped mid-call

# --8<-- [start:events]
for event in adapters.stream_events(recorded, "openai-chat"):  # or response.iter_bytes() from httpx
    if isinstance(event, adapters.MessageEnd):
        print("MessageEnd", event.status, event.duplicates_ignored, event.response.message.get("tool_calls"))
    else:
        print(event)
# --8<-- [end:events]

# --8<-- [start:aggregate]
response = adapters.aggregate(recorded, "openai-chat")
print(response.message["content"], response.extras["stream"]["status"], response.extras["stream"]["cut_calls"])
# --8<-- [end:aggregate]
assert response.extras["stream"]["status"] == "cut"
