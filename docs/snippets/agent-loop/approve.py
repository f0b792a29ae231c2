"""Approvals: a tool that requires approval runs only when your approver says so."""

import json

from toolgen_sdk import Tools, agent

tools = Tools()
deleted: list[str] = []
# A tool added at run time with the policy a built tool declares as `requiresApproval: true`.
tools.add(
    "delete_file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    lambda args, ctx: deleted.append(args["path"]) or f"deleted {args['path']}",
    requires_approval=True,
)


# --8<-- [start:approver]
def approve(request: agent.ApprovalRequest) -> agent.Approval:
    """Asked before each call to a tool that requires approval; its handler has not run yet."""
    path = json.loads(request.arguments)["path"]
    if path.startswith("secrets/"):
        return agent.Approval.deny("that folder is off limits")  # the model reads the reason
    if path.endswith(".md"):
        return agent.Approval.edit({"path": f"trash/{path}"})  # the call runs with these arguments
    return agent.Approval.approve()


model = agent.ScriptedModel(
    [
        agent.assistant_turn(
            None,
            agent.tool_call("delete_file", {"path": "notes.txt"}),
            agent.tool_call("delete_file", {"path": "secrets/key.pem"}),
            agent.tool_call("delete_file", {"path": "draft.md"}),
        ),
        "Cleaned up, except the secrets folder.",
    ]
)
result = agent.run([{"role": "user", "content": "Clean up."}], model, tools, approve=approve)
for call in result.calls:
    print(call.status, call.arguments, call.content)
# --8<-- [end:approver]

assert [call.status for call in result.calls] == ["ok", "denied", "ok"]
assert deleted == ["notes.txt", "trash/draft.md"]
# The transcript shows the edited arguments; the denied call is answered with is_error and the reason.
assert json.loads(result.messages[1]["tool_calls"][2]["function"]["arguments"]) == {"path": "trash/draft.md"}
assert result.messages[3]["is_error"] and "that folder is off limits" in str(result.messages[3]["content"])

# --8<-- [start:no-approver]
# Without an approver, or with one that raises, every such call is denied: its handler never runs.
unasked = agent.ScriptedModel([agent.assistant_turn(None, agent.tool_call("delete_file", {"path": "a.txt"})), "OK."])
assert agent.run([{"role": "user", "content": "Delete a.txt"}], unasked, tools).calls[0].status == "denied"
# --8<-- [end:no-approver]
assert deleted == ["notes.txt", "trash/draft.md"]
