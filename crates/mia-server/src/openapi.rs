//! The OpenAPI document served at `/api/openapi.json`.

use serde_json::{Value, json};

fn schema<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// OpenAPI 3.1 description of the HTTP API.
pub fn openapi() -> Value {
    let json_body = |schema_ref: &str| json!({"required": true, "content": {"application/json": {"schema": {"$ref": schema_ref}}}});
    let ok = |desc: &str| json!({"description": desc});
    let session_id = json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}});
    let wt_name =
        json!({"name": "name", "in": "path", "required": true, "schema": {"type": "string"}});
    let dir_q =
        json!({"name": "directory", "in": "query", "required": true, "schema": {"type": "string"}});
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "mia-code server",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The mia-code runtime over HTTP. Every request except /api/health and /api/openapi.json needs `Authorization: Bearer <token>` (or `?token=` on /api/events). Events stream as Server-Sent Events whose `event:` is the Event's `type`."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Op": schema::<mia_protocol::Op>(),
                "Event": schema::<mia_protocol::Event>(),
                "Session": schema::<mia_protocol::Session>(),
                "Message": schema::<mia_protocol::Message>(),
                "PermissionReplyKind": schema::<mia_protocol::PermissionReplyKind>(),
                "RevertSummary": schema::<mia_protocol::RevertSummary>(),
                "ShareRequest": schema::<mia_protocol::ShareRequest>(),
                "CreateSession": {"type": "object", "required": ["directory"], "properties": {
                    "directory": {"type": "string"}, "title": {"type": "string"},
                    "agent": {"type": "string"}, "model": {"type": "string"}}},
                "UserMessage": {"type": "object", "required": ["text"], "properties": {
                    "text": {"type": "string"}, "agent": {"type": "string"}, "model": {"type": "string"}}},
                "PermissionReply": {"type": "object", "required": ["reply"], "properties": {
                    "reply": {"$ref": "#/components/schemas/PermissionReplyKind"}}},
                "SwitchAgent": {"type": "object", "required": ["agent"], "properties": {"agent": {"type": "string"}}},
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}},
                "WorktreeView": schema::<mia_protocol::WorktreeView>(),
                "WorktreeCreated": schema::<mia_protocol::WorktreeCreated>(),
                "ComparisonView": schema::<mia_protocol::ComparisonView>(),
                "PromotedView": schema::<mia_protocol::PromotedView>(),
                "ForkResult": schema::<mia_protocol::ForkResult>(),
                "ForkTreeNode": schema::<mia_protocol::ForkTreeNode>(),
                "SessionCompare": schema::<mia_protocol::SessionCompare>(),
                "Fork": {"type": "object", "properties": {
                    "message_id": {"type": "string", "description": "The fork point (default: the session's last message)"},
                    "with_files": {"type": "boolean", "description": "Also fork the files: a new worktree with the project as it was at the fork point"}}}
            }
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/health": {"get": {"security": [], "summary": "Liveness", "responses": {"200": ok("ok")}}},
            "/api/openapi.json": {"get": {"security": [], "summary": "This document", "responses": {"200": ok("OpenAPI document")}}},
            "/api/sessions": {
                "get": {"summary": "List sessions", "parameters": [
                    {"name": "project", "in": "query", "schema": {"type": "string"}},
                    {"name": "archived", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                    "responses": {"200": ok("Sessions with message counts, newest first")}},
                "post": {"summary": "Create a session (Op create_session)", "requestBody": json_body("#/components/schemas/CreateSession"),
                    "responses": {"201": ok("The session"), "400": ok("Bad input")}}
            },
            "/api/sessions/{id}": {"get": {"summary": "A session with its messages", "parameters": [session_id.clone(), {"name": "archived", "in": "query", "schema": {"type": "boolean"}, "description": "include the messages a compaction summary replaced (marked by compacted_by)"}],
                "responses": {"200": ok("{session, messages}"), "404": ok("No such session")}}},
            "/api/sessions/{id}/messages": {"post": {"summary": "Send a user message and run a turn (Op user_message)",
                "parameters": [session_id], "requestBody": json_body("#/components/schemas/UserMessage"),
                "responses": {"202": ok("Turn started; follow /api/events"), "409": ok("A turn is already running")}}},
            "/api/sessions/{id}/permissions/{request}": {"post": {"summary": "Answer a permission ask (Op permission_reply)",
                "parameters": [session_id, {"name": "request", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": json_body("#/components/schemas/PermissionReply"),
                "responses": {"202": ok("Answered"), "404": ok("No such pending request")}}},
            "/api/sessions/{id}/cancel": {"post": {"summary": "Cancel the running turn (Op cancel)", "parameters": [session_id],
                "responses": {"202": ok("Cancelled")}}},
            "/api/sessions/{id}/agent": {"post": {"summary": "Switch the primary agent (Op switch_agent)", "parameters": [session_id],
                "requestBody": json_body("#/components/schemas/SwitchAgent"), "responses": {"202": ok("Switched or queued")}}},
            "/api/sessions/{id}/undo": {"post": {"summary": "Undo the last file-changing step (Op undo); body {force?}", "parameters": [session_id],
                "responses": {"200": ok("RevertSummary"), "409": ok("Conflicts: files changed outside mia-code; nothing changed (retry with force)")}}},
            "/api/sessions/{id}/redo": {"post": {"summary": "Redo the last undo/revert (Op redo); body {force?}", "parameters": [session_id],
                "responses": {"200": ok("RevertSummary"), "409": ok("Conflicts")}}},
            "/api/sessions/{id}/revert": {"post": {"summary": "Revert to before a message (Op revert); body {message_id, force?}", "parameters": [session_id],
                "responses": {"200": ok("RevertSummary"), "409": ok("Conflicts")}}},
            "/api/worktrees": {
                "get": {"summary": "The project's mia-code worktrees with status and sessions", "parameters": [dir_q.clone()],
                    "responses": {"200": ok("WorktreeView[]")}},
                "post": {"summary": "Create a worktree; body {directory, name?, base?}; start-script lines stream as worktree_log events",
                    "responses": {"201": ok("WorktreeCreated"), "400": ok("Bad name or base"), "409": ok("Name, branch or directory taken")}}
            },
            "/api/worktrees/{name}": {"delete": {"summary": "Remove a worktree and its branch", "parameters": [wt_name.clone(), dir_q.clone(),
                    {"name": "force", "in": "query", "schema": {"type": "boolean"}}],
                "responses": {"200": ok("The removed WorktreeView"), "409": ok("It has work that would be lost (the message says what)")}}},
            "/api/worktrees/{name}/reset": {"post": {"summary": "Back to its base; body {directory}", "parameters": [wt_name.clone()],
                "responses": {"204": ok("Reset")}}},
            "/api/worktrees/compare": {"get": {"summary": "Compare two attempts (worktree names or main) against their common base",
                "parameters": [dir_q.clone(), {"name": "a", "in": "query", "required": true, "schema": {"type": "string"}},
                    {"name": "b", "in": "query", "required": true, "schema": {"type": "string"}},
                    {"name": "check", "in": "query", "schema": {"type": "boolean"}}],
                "responses": {"200": ok("ComparisonView")}}},
            "/api/worktrees/{name}/diff": {"get": {"summary": "One file of an attempt against a base",
                "parameters": [wt_name.clone(), dir_q.clone(), {"name": "base", "in": "query", "required": true, "schema": {"type": "string"}},
                    {"name": "path", "in": "query", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": ok("{diff}")}}},
            "/api/worktrees/{name}/take": {"post": {"summary": "Copy a file from this attempt into another; body {directory, path, into}",
                "parameters": [wt_name.clone()], "responses": {"204": ok("Taken")}}},
            "/api/worktrees/{name}/promote": {"post": {"summary": "Merge into the base branch or keep the branch; body {directory, mode: merge|keep_branch}",
                "parameters": [wt_name], "responses": {"200": ok("PromotedView"), "409": ok("Merge conflict: nothing changed")}}},
            "/api/worktrees/trash": {"get": {"summary": "What forced worktree operations and resets kept (newest first)", "parameters": [dir_q.clone()],
                "responses": {"200": {"description": "TrashView[]"}}}},
            "/api/worktrees/trash/{id}/restore": {"post": {"summary": "Bring a trash entry back; body {directory, into?}: files where they were (or into), commits as the branch mia-code-restored/<id>",
                "responses": {"200": {"description": "{trash, into}"}, "409": {"description": "a file there differs: nothing restored"}}}},
            "/api/worktrees/try": {"post": {"summary": "Try N ways: one prompt in N (2-4) new worktrees, each its own session; body {directory, text, n, agent?, model?}",
                "responses": {"201": ok("{attempts: [{worktree, session}]}")}}},
            "/api/op": {"post": {"summary": "Apply any Op", "requestBody": json_body("#/components/schemas/Op"),
                "responses": {"200": ok("A session (create_session)"), "202": ok("Accepted")}}},
            "/api/events": {"get": {"summary": "Server-Sent Events stream of Events",
                "parameters": [{"name": "session", "in": "query", "schema": {"type": "string"}},
                               {"name": "token", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "text/event-stream of Event", "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/Event"}}}}}}}
        }
    });
    // Forks (spec 020), added separately: one json! of every path exceeds the macro's recursion limit.
    let forks = json!({
            "/api/sessions/{id}/fork": {"post": {"summary": "Fork the session at a message (Op fork): the new session, with its worktree for a fork with files",
                "parameters": [session_id.clone()], "requestBody": json_body("#/components/schemas/Fork"),
                "responses": {"201": ok("ForkResult"), "400": ok("InvalidForkPointError or ForkDepthExceededError, with what to do"), "404": ok("No such session")}}},
            "/api/sessions/{id}/promote": {"post": {"summary": "Make a fork a top-level session (Op promote); its fork metadata is kept",
                "parameters": [session_id.clone()], "responses": {"200": ok("The session"), "400": ok("Not a fork")}}},
            "/api/sessions/{id}/compare": {"get": {"summary": "This session's and another's file changes since they diverged, side by side",
                "parameters": [session_id.clone(), {"name": "with", "in": "query", "required": true, "schema": {"type": "string", "format": "uuid"}}],
                "responses": {"200": ok("SessionCompare")}}},
            "/api/sessions/{id}/compact": {"post": {"summary": "Compact now (Op compact): older messages are summarised and archived, the newest kept verbatim",
                "parameters": [session_id.clone()], "responses": {"200": ok("CompactResult"), "409": ok("A turn is running"), "400": ok("Nothing to compact, or compaction is off")}}},
            "/api/sessions/{id}/share/preview": {"post": {"summary": "Exactly the payload sharing would send (spec 022), redacted, with each redaction; body ShareRequest {exclude_messages, exclude_tool_results, server?}",
                "parameters": [session_id.clone()], "requestBody": json_body("#/components/schemas/ShareRequest"), "responses": {"200": ok("SharePreview"), "400": ok("A bad share.redactPatterns entry or server URL")}}},
            "/api/sessions/{id}/share": {"post": {"summary": "Share the session (or update its share) with the previewed payload; body ShareRequest",
                "parameters": [session_id.clone()], "requestBody": json_body("#/components/schemas/ShareRequest"), "responses": {"200": ok("ShareRecord"), "400": ok("Sharing disabled or no share server configured"), "503": ok("The share server failed or refused")}},
                "delete": {"summary": "Revoke the session's share", "parameters": [session_id.clone()], "responses": {"204": ok("Revoked"), "404": ok("The session is not shared")}}},
            "/api/mcp": {"get": {"summary": "The project's MCP servers (config `mcp` and .mcp.json): state, tools, errors; servers that may run are started first",
                "parameters": [dir_q.clone()], "responses": {"200": ok("[McpServerView]")}}},
            "/api/plugins": {"get": {"summary": "The project's plugins (config `plugin`): state, version, tools, hooks, errors; what is missing is installed and started first",
                "parameters": [dir_q.clone()], "responses": {"200": ok("[PluginView]")}}},
            "/api/shares": {"get": {"summary": "Every share this machine created (My shares), newest first", "responses": {"200": ok("[ShareRecord]")}}},
            "/api/shares/{share}": {"delete": {"summary": "Revoke a share by its id (also after its local session was deleted)",
                "parameters": [{"name": "share", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"204": ok("Revoked"), "404": ok("No such share")}}},
            "/api/sessions/{id}/cost": {"get": {"summary": "What the session cost per agent and model, its subagents' sessions included",
                "parameters": [session_id.clone()], "responses": {"200": ok("CostView")}}},
            "/api/models": {"get": {"summary": "Models to pick from: the catalog's, for configured providers (context window, prices)",
                "parameters": [{"name": "directory", "in": "query", "schema": {"type": "string"}}], "responses": {"200": ok("[ModelChoice]")}}},
            "/api/sessions/{id}/model": {"post": {"summary": "/model: the session's model from now on (Op set_model); body {model?} (absent: back to the defaults)",
                "parameters": [session_id.clone()], "responses": {"200": ok("The session"), "400": ok("Not a model reference")}}},
            "/api/agents/propose": {"post": {"summary": "Generate an agent (spec 013): body {directory, description, agent?} or {directory, previous, refine}; a validated AgentProposal",
                "responses": {"200": ok("AgentProposal"), "400": ok("Broader than the creating agent, or unusable")}}},
            "/api/agents/save": {"post": {"summary": "Save a proposal (checked again) as a markdown agent file: body {directory, proposal, to: project|global, agent?}",
                "responses": {"201": ok("{path, proposal}"), "409": ok("The file exists")}}},
            "/api/open": {"post": {"summary": "Open in editor: body {directory, path, line?}; a file inside the project opens with editor.command from the global config, else the system's opener, on the machine mia-code runs on",
                "responses": {"200": ok("{command}: what was started"), "400": ok("Outside the project, or the editor could not start"), "404": ok("No such file")}}},
            "/api/asks": {"get": {"summary": "Every pending permission ask of a project's sessions in this process (worktrees and subagents included), oldest first: the attention queue",
                "parameters": [dir_q.clone()],
                "responses": {"200": ok("[PermissionRequest]")}}},
            "/api/sessions/tree": {"get": {"summary": "The fork tree of a project (its sessions and its worktrees' sessions), forks nested under their parents",
                "parameters": [{"name": "project", "in": "query", "required": true, "schema": {"type": "string"}},
                    {"name": "archived", "in": "query", "schema": {"type": "boolean"}}],
                "responses": {"200": ok("[ForkTreeNode]")}}}
    });
    if let (Some(paths), Value::Object(more)) =
        (doc.get_mut("paths").and_then(Value::as_object_mut), forks)
    {
        paths.extend(more);
    }
    doc
}
