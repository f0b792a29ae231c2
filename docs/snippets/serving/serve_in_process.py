"""The service in-process: durable runs on SQLite, the Starlette app on a free loopback port, a run approved over
HTTP, the boundary's refusals, your own authentication; then everything stopped."""

import asyncio
import atexit
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import Credential, DurableRuns, service_app
from toolgen_sdk._runtime.serve.auth import TokenAuth, Tokens

tools = Tools()
tools.add(
    "delete_file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    lambda args, ctx: f"deleted {args['path']}",
    requires_approval=True,
)
model = agent.ScriptedModel([agent.assistant_turn(None, agent.tool_call("delete_file", {"path": "old.log"})), "Done."])
operator, watcher = "operator-token-0123456789", "watcher-token-0123456789"
folder = Path(tempfile.mkdtemp())
atexit.register(shutil.rmtree, folder, ignore_errors=True)

# --8<-- [start:serve]
(folder / "tokens.txt").write_text(f"{operator} start,read,decide,cancel alice\n{watcher} read bob  # can only watch\n")
runs = DurableRuns(tools, model, database_url=f"sqlite:///{folder / 'runs.sqlite'}")
app = service_app(runs, auth=TokenAuth(Tokens.from_file(folder / "tokens.txt")))

listening = socket.socket()
listening.bind(("127.0.0.1", 0))  # a free port
port = listening.getsockname()[1]
server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
thread.start()
while not server.started:
    time.sleep(0.05)
# --8<-- [end:serve]

# --8<-- [start:client]
client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {operator}"})
answer = client.post("/runs", json={"messages": [{"role": "user", "content": "Delete old.log"}]})
run_id = answer.json()["id"]
print(answer.status_code, answer.json()["status"])

state = client.get(f"/runs/{run_id}").json()
while state["status"] != "awaiting_approval":
    time.sleep(0.05)
    state = client.get(f"/runs/{run_id}").json()
call_id = state["pending"][0]["id"]
decide = f"/runs/{run_id}/approvals/{call_id}"
print(client.post(decide, json={"decision": "approve"}).status_code)
print(client.post(decide, json={"decision": "deny"}).status_code)  # decided already

with client.stream("GET", f"/runs/{run_id}/events") as stream:  # ends after run_finished
    kinds = [line.removeprefix("event: ") for line in stream.iter_lines() if line.startswith("event: ")]
print(kinds[0], kinds[-1], "approval_decided" in kinds)
print(client.get(f"/runs/{run_id}").json()["status"])
# --8<-- [end:client]
assert client.get("/info").json()["rights"] == ["start", "read", "decide", "cancel"]
assert client.get("/runs").json()["runs"][0]["prompt"] == "Delete old.log"

# --8<-- [start:refused]
url = f"http://127.0.0.1:{port}"
page = httpx.get(url)  # the page needs no credential, and comes with a strict CSP
print(page.status_code, page.headers["content-security-policy"].split(";")[0])
print(httpx.get(f"{url}/runs").status_code)  # no credential
print(httpx.post(f"{url}/runs", json={"messages": []}, headers={"Authorization": f"Bearer {watcher}"}).status_code)
print(client.get("/runs", headers={"Host": "rebound.example"}).status_code)  # DNS rebinding
print(client.post("/runs", json={"messages": []}, headers={"Origin": "https://other.example"}).status_code)
print(client.post("/runs", content="{}", headers={"Content-Type": "text/plain"}).status_code)
# --8<-- [end:refused]
client.close()

# --8<-- [start:stop]
server.should_exit = True
thread.join()
# --8<-- [end:stop]


# --8<-- [start:own-auth]
def check(request) -> Credential | set[str] | None:
    """Your own authentication: the Starlette request in, the rights it grants out (None: 401)."""
    user = request.headers.get("X-Forwarded-User")  # set by the proxy in front, say
    if user is None:
        return None
    return Credential(frozenset({"read"}), holder=user)  # each user their own open-runs count


async def ask_own() -> None:
    transport = httpx.ASGITransport(app=service_app(runs, auth=check))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as own:
        print((await own.get("/info")).status_code)
        print((await own.get("/info", headers={"X-Forwarded-User": "carol"})).json()["rights"])


asyncio.run(ask_own())
# --8<-- [end:own-auth]
runs.close()  # last: DBOS keeps one engine per process
