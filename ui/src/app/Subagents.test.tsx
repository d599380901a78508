import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Message, PermissionRequest, Session, SessionDetail, SessionSummary } from "../protocol/generated";
import { SessionView } from "./SessionView";
import { Sidebar } from "./Sidebar";
import { fakeTransport, Providers } from "./testing";
import { applyEvent, emptySession, fromDetail } from "../state/session";
import { parseTaskResult } from "../lib/subagent";

const session = (over: Partial<Session> = {}): Session => ({
  id: "s1",
  title: "Parent work",
  slug: "parent-work",
  directory: "/p",
  project_id: "x",
  status: "idle",
  created_at: 1,
  updated_at: 2,
  version: "0.1",
  ...over,
});

function msg(id: string, sessionId: string, role: Message["role"], parts: Message["parts"][number]["content"][]): Message {
  return {
    id,
    session_id: sessionId,
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: parts.map((content, index) => ({ id: `${id}-${index}`, message_id: id, index, created_at: 1, content })),
  };
}

const TASK_INPUT = { agent: "general", prompt: "Create child.txt in the project root", description: "Create child.txt" };
const TRAILER =
  "[subagent general — completed, 2 steps, 1 tool calls, 120 input / 30 output tokens, $0.0042, 1.5 s; session c1]";

const ask = (over: Partial<PermissionRequest> = {}): PermissionRequest => ({
  id: "perm1",
  session_id: "c1",
  root_session_id: "s1",
  agent: "general",
  tool: "bash",
  permission: "bash",
  target: "touch child.txt",
  input: { command: "touch child.txt" },
  options: ["once", "session", "deny"],
  reason: "",
  call_id: "cc1",
  ...over,
});

function setup(parent: SessionDetail, children: Record<string, () => SessionDetail> = {}, sessionId = "s1") {
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === `/api/sessions/${parent.session.id}`) return parent;
    for (const [id, d] of Object.entries(children)) if (method === "GET" && path === `/api/sessions/${id}`) return d();
    if (path.endsWith("/timeline")) return [];
    return undefined;
  });
  const onOpenSession = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <SessionView
        sessionId={sessionId}
        directory="/p"
        agents={[]}
        onNewSession={() => undefined}
        onSessionsChanged={() => undefined}
        onOpenSession={onOpenSession}
        sessionTitle={(id) => (id === "s1" ? "Parent work" : undefined)}
      />
    </Providers>,
  );
  return { ...fake, onOpenSession, user: userEvent.setup() };
}

// jsdom has no layout: give the scroll container a size so the virtualiser renders rows.
const stubbed = ["clientHeight", "clientWidth", "offsetHeight"] as const;
const originals = stubbed.map(
  (k) => Object.getOwnPropertyDescriptor(Element.prototype, k) ?? Object.getOwnPropertyDescriptor(HTMLElement.prototype, k),
);
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "offsetHeight", { configurable: true, get: () => 40 });
});
afterAll(() => {
  stubbed.forEach((k, i) => {
    const d = originals[i];
    if (d) Object.defineProperty(HTMLElement.prototype, k, d);
    else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[k];
  });
});

/** A parent with its first message; the child session as the server has it (changed by the test). */
function delegation() {
  const parent: SessionDetail = {
    session: session(),
    agent: "build",
    messages: [msg("u1", "s1", "user", [{ type: "text", text: "Delegate the chore" }])],
  };
  const child: { detail: SessionDetail } = {
    detail: {
      session: session({ id: "c1", title: "Create child.txt", agent: "general", spawned_by: { session_id: "s1", call_id: "t1", agent: "build" } }),
      agent: "general",
      messages: [],
      running: true,
    },
  };
  return { parent, child };
}

async function startTask(emit: (e: Parameters<ReturnType<typeof fakeTransport>["emit"]>[0]) => void) {
  emit({ type: "step_started", session_id: "s1", message_id: "m1", agent: "build", model: "mock/m" });
  emit({ type: "tool_call", session_id: "s1", message_id: "m1", call_id: "t1", tool: "task", input: TASK_INPUT });
  const card = await screen.findByTestId("task-card");
  return card;
}

describe("delegation cards", () => {
  it("goes queued → running → completed from the events, with the child's steps and tool calls live", async () => {
    const { parent, child } = delegation();
    const { emit, subscribed, user, onOpenSession } = setup(parent, { c1: () => child.detail });
    expect(await screen.findByTestId("message-user")).toHaveTextContent("Delegate the chore");
    const card = await startTask(emit);
    expect(card).toHaveAttribute("data-status", "starting");
    expect(within(card).getByTestId("task-agent")).toHaveTextContent("general");
    expect(card).toHaveTextContent("Create child.txt");

    emit({ type: "subagent_queued", session_id: "s1", call_id: "t1", agent: "general" });
    await waitFor(() => expect(card).toHaveAttribute("data-status", "queued"));
    expect(within(card).getByTestId("task-status")).toHaveTextContent("queued");

    emit({
      type: "subagent_started",
      session_id: "s1",
      child_session_id: "c1",
      call_id: "t1",
      agent: "general",
      description: "Create child.txt",
    });
    await waitFor(() => expect(card).toHaveAttribute("data-status", "running"));
    expect(card).toHaveAttribute("data-child-id", "c1");
    // Expanded while it runs; the child session is followed live.
    expect(within(card).getByTestId("task-toggle")).toHaveAttribute("aria-expanded", "true");
    await waitFor(() => expect(subscribed).toContain("c1"));
    await waitFor(() => expect(within(card).queryByText(/Loading the subagent/)).not.toBeInTheDocument());

    emit({ type: "step_started", session_id: "c1", message_id: "cm1", agent: "general", model: "mock/m" });
    emit({ type: "text_delta", session_id: "c1", message_id: "cm1", text: "Creating the file." });
    emit({
      type: "tool_call",
      session_id: "c1",
      message_id: "cm1",
      call_id: "cc1",
      tool: "bash",
      input: { command: "touch child.txt" },
    });
    const tool = await within(card).findByTestId("task-child-tool");
    expect(tool).toHaveAttribute("data-tool", "bash");
    expect(tool).toHaveAttribute("data-status", "running");
    expect(tool).toHaveTextContent("touch child.txt");
    expect(within(card).getByTestId("task-thread")).toHaveTextContent("Creating the file.");
    // The parent's own cards are not touched by the child's calls.
    expect(screen.queryByTestId("tool-card")).not.toBeInTheDocument();

    emit({
      type: "tool_result",
      session_id: "c1",
      message_id: "cm1",
      call_id: "cc1",
      tool: "bash",
      output: "",
      is_error: false,
      duration_ms: 12,
    });
    await waitFor(() => expect(within(card).getByTestId("task-child-tool")).toHaveAttribute("data-status", "ok"));

    // The child's stored state once it is done (the card loads it once more at the end).
    child.detail = {
      ...child.detail,
      running: false,
      messages: [
        msg("cm1", "c1", "assistant", [
          { type: "text", text: "Creating the file." },
          { type: "tool_call", call_id: "cc1", tool: "bash", input: { command: "touch child.txt" } },
        ]),
        msg("cr1", "c1", "user", [{ type: "tool_result", call_id: "cc1", tool: "bash", output: "", duration_ms: 12 }]),
        msg("cm2", "c1", "assistant", [{ type: "text", text: "Created child.txt." }]),
      ],
    };
    emit({
      type: "subagent_finished",
      session_id: "s1",
      child_session_id: "c1",
      call_id: "t1",
      agent: "general",
      status: "completed",
      duration_ms: 1500,
      steps: 2,
      tool_calls: 1,
      cost_usd: 0.0042,
    });
    emit({
      type: "tool_result",
      session_id: "s1",
      message_id: "m1",
      call_id: "t1",
      tool: "task",
      output: `Created child.txt.\n\n${TRAILER}`,
      is_error: false,
      duration_ms: 1500,
    });
    await waitFor(() => expect(card).toHaveAttribute("data-status", "completed"));
    expect(within(card).getByTestId("task-status")).toHaveTextContent("completed");
    expect(within(card).getByTestId("task-duration")).toHaveTextContent("1.5 s");
    expect(within(card).getByTestId("task-cost")).toHaveTextContent("$0.0042");
    // Collapsed once finished; opened again it shows the steps, the figures and the answer.
    const toggle = within(card).getByTestId("task-toggle");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(within(card).getByTestId("task-figures")).toHaveTextContent("2 steps · 1 tool call · 1.5 s · $0.0042");
    const answer = within(card).getByTestId("task-answer");
    expect(answer).toHaveTextContent("Created child.txt.");
    expect(answer).not.toHaveTextContent("[subagent");
    await waitFor(() => expect(within(card).getAllByTestId("task-step")).toHaveLength(2));
    await user.click(within(card).getByTestId("task-open-session"));
    expect(onOpenSession).toHaveBeenCalledWith("c1", undefined);
  });

  it("shows the child's ask in the parent, marks the card blocked, and answers it on the child's route", async () => {
    const { parent, child } = delegation();
    const { emit, requests, user } = setup(parent, { c1: () => child.detail });
    await screen.findByTestId("message-user");
    const card = await startTask(emit);
    emit({
      type: "subagent_started",
      session_id: "s1",
      child_session_id: "c1",
      call_id: "t1",
      agent: "general",
      description: "Create child.txt",
    });
    await waitFor(() => expect(card).toHaveAttribute("data-status", "running"));

    // The ask arrives on the parent's stream (root_session_id = the parent).
    emit({ type: "permission_asked", request: ask() });
    const dialog = await screen.findByTestId("permission-dialog");
    expect(within(dialog).getByTestId("permission-meta")).toHaveTextContent("general (subagent) asks for permission bash");
    expect(within(dialog).getByTestId("permission-target")).toHaveTextContent("touch child.txt");
    await waitFor(() => expect(card).toHaveAttribute("data-status", "blocked"));
    expect(within(card).getByTestId("task-status")).toHaveTextContent("blocked");
    expect(within(card).getByTestId("task-blocked")).toHaveTextContent("bash touch child.txt");

    const allow = within(dialog).getByTestId("permission-allow-once");
    await waitFor(() => expect(allow).toBeEnabled());
    await user.click(allow);
    await waitFor(() =>
      expect(requests.find((r) => r.method === "POST" && r.path.includes("/permissions/"))).toMatchObject({
        path: "/api/sessions/c1/permissions/perm1",
        body: { reply: { kind: "once" } },
      }),
    );
    expect(requests.some((r) => r.path === "/api/sessions/s1/permissions/perm1")).toBe(false);

    // Resolved in the child (its stream): the dialog and the blocked state go.
    emit({ type: "permission_resolved", session_id: "c1", request_id: "perm1", decision: "allow", by: "user", reason: "" });
    await waitFor(() => expect(screen.queryByTestId("permission-dialog")).not.toBeInTheDocument());
    expect(card).toHaveAttribute("data-status", "running");
    expect(within(card).queryByTestId("task-blocked")).not.toBeInTheDocument();
  });

  it("opened while a delegation runs: finds the child by spawned_by and shows its pending ask", async () => {
    const parent: SessionDetail = {
      session: session({ status: "busy" }),
      agent: "build",
      running: true,
      messages: [
        msg("u1", "s1", "user", [{ type: "text", text: "Delegate the chore" }]),
        msg("m1", "s1", "assistant", [{ type: "tool_call", call_id: "t1", tool: "task", input: TASK_INPUT }]),
      ],
    };
    const childSession = session({
      id: "c1",
      title: "Create child.txt",
      agent: "general",
      status: "busy",
      spawned_by: { session_id: "s1", call_id: "t1", agent: "build" },
    });
    const fake = fakeTransport((method, path) => {
      if (method === "GET" && path === "/api/sessions/s1") return parent;
      if (method === "GET" && path.startsWith("/api/sessions?"))
        return [{ ...childSession, message_count: 1 }, { ...parent.session, message_count: 2 }];
      if (method === "GET" && path === "/api/sessions/c1")
        return { session: childSession, agent: "general", running: true, messages: [], pending_permissions: [ask()] };
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    const card = await screen.findByTestId("task-card");
    await waitFor(() => expect(card).toHaveAttribute("data-child-id", "c1"));
    await waitFor(() => expect(fake.subscribed).toContain("c1"));
    expect(await screen.findByTestId("permission-dialog")).toHaveTextContent("(subagent)");
    await waitFor(() => expect(card).toHaveAttribute("data-status", "blocked"));
  });

  it("rebuilds a finished delegation from the stored result after a reload", async () => {
    const parent: SessionDetail = {
      session: session(),
      agent: "build",
      messages: [
        msg("u1", "s1", "user", [{ type: "text", text: "Delegate the chore" }]),
        msg("m1", "s1", "assistant", [{ type: "tool_call", call_id: "t1", tool: "task", input: TASK_INPUT }]),
        msg("r1", "s1", "user", [
          { type: "tool_result", call_id: "t1", tool: "task", output: `Created child.txt.\n\n${TRAILER}`, duration_ms: 1500 },
        ]),
      ],
    };
    setup(parent);
    const card = await screen.findByTestId("task-card");
    expect(card).toHaveAttribute("data-status", "completed");
    expect(card).toHaveAttribute("data-child-id", "c1");
    expect(within(card).getByTestId("task-duration")).toHaveTextContent("1.5 s");
    expect(within(card).getByTestId("task-cost")).toHaveTextContent("$0.0042");
  });

  it("shows a delegation that failed before it started as an error with the reason", async () => {
    const parent: SessionDetail = {
      session: session(),
      agent: "build",
      messages: [
        msg("m1", "s1", "assistant", [{ type: "tool_call", call_id: "t1", tool: "task", input: { agent: "nope", prompt: "x" } }]),
        msg("r1", "s1", "user", [
          {
            type: "tool_result",
            call_id: "t1",
            tool: "task",
            is_error: true,
            output: "Delegation failed (agent_not_found): there is no agent `nope`; you can call: explore, general",
          },
        ]),
      ],
    };
    const { user } = setup(parent);
    const card = await screen.findByTestId("task-card");
    expect(card).toHaveAttribute("data-status", "error");
    await user.click(within(card).getByTestId("task-toggle"));
    expect(within(card).getByTestId("task-answer")).toHaveTextContent("there is no agent `nope`");
  });

  it("a subagent's own session links back to its parent", async () => {
    const childDetail: SessionDetail = {
      session: session({ id: "c1", title: "Create child.txt", agent: "general", spawned_by: { session_id: "s1", call_id: "t1", agent: "build" } }),
      agent: "general",
      messages: [],
    };
    const { user, onOpenSession } = setup(childDetail, {}, "c1");
    const link = await screen.findByTestId("subagent-parent-link");
    expect(screen.getByTestId("subagent-of")).toHaveTextContent("subagent general of Parent work");
    await user.click(link);
    expect(onOpenSession).toHaveBeenCalledWith("s1");
  });
});

describe("the reducer and the stored result", () => {
  it("parses the task result's trailer", () => {
    const r = parseTaskResult(`Found 3 uses.\n\n${TRAILER}`);
    expect(r.answer).toBe("Found 3 uses.");
    expect(r.info).toMatchObject({ agent: "general", status: "completed", childId: "c1", steps: 2, toolCalls: 1, durationMs: 1500, costUsd: 0.0042 });
    const timeout = parseTaskResult(
      "(no answer before the timeout)\n\n[subagent explore — timeout after 300 s (partial result), 9 steps, 20 tool calls, 1 input / 2 output tokens, 310.0 s; session c2]",
    );
    expect(timeout.info).toMatchObject({ agent: "explore", status: "timeout", childId: "c2", steps: 9, costUsd: null });
    expect(parseTaskResult("Delegation failed (depth): too deep").info).toBeNull();
  });

  it("keeps a subagent's ask until it is resolved in the child, and drops it when the delegation ends", () => {
    let s = fromDetail({ session: session(), agent: "build", messages: [] });
    s = applyEvent(s, { type: "permission_asked", request: ask() });
    expect(s.permissions.map((p) => p.id)).toEqual(["perm1"]);
    // Another session's ask (not delegated from here) is not shown.
    const other = applyEvent(s, { type: "permission_asked", request: ask({ id: "p2", session_id: "x", root_session_id: "y" }) });
    expect(other.permissions).toHaveLength(1);
    const resolved = applyEvent(s, { type: "permission_resolved", session_id: "c1", request_id: "perm1", decision: "allow", by: "user", reason: "" });
    expect(resolved.permissions).toHaveLength(0);
    const finished = applyEvent(s, {
      type: "subagent_finished",
      session_id: "s1",
      child_session_id: "c1",
      call_id: "t1",
      agent: "general",
      status: "cancelled",
      duration_ms: 5,
      steps: 0,
      tool_calls: 0,
    });
    expect(finished.permissions).toHaveLength(0);
    expect(finished.subagents.t1).toMatchObject({ status: "cancelled", childId: "c1" });
    // Events of another session's delegations are ignored.
    expect(applyEvent(emptySession("s9"), { type: "subagent_queued", session_id: "s1", call_id: "t1", agent: "general" }).subagents).toEqual({});
  });
});

describe("the sidebar", () => {
  const summary = (over: Partial<SessionSummary>): SessionSummary => ({
    id: "s1",
    title: "Parent work",
    slug: "parent-work",
    directory: "/p",
    project_id: "x",
    status: "idle",
    created_at: 1,
    updated_at: 2,
    version: "0.1",
    message_count: 3,
    ...over,
  });

  it("lists subagents' sessions under their parent, collapsed until asked (or open)", async () => {
    const user = userEvent.setup();
    const sessions = [
      summary({ id: "c1", title: "Create child.txt", agent: "general", spawned_by: { session_id: "s1", call_id: "t1", agent: "build" } }),
      summary({ id: "s1" }),
      summary({ id: "s2", title: "Other" }),
    ];
    const props = {
      sessions,
      showArchived: false,
      onShowArchived: () => undefined,
      onOpen: vi.fn(),
      onNew: () => undefined,
      onArchive: () => undefined,
      onDelete: () => Promise.resolve(),
    };
    const { rerender } = render(<Sidebar {...props} currentId="s2" />);
    expect(screen.getAllByTestId("session-item").map((e) => e.getAttribute("data-session-id"))).toEqual(["s1", "s2"]);
    const toggle = screen.getByTestId("session-children-toggle");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    await user.click(toggle);
    const items = screen.getAllByTestId("session-item");
    expect(items.map((e) => e.getAttribute("data-session-id"))).toEqual(["s1", "c1", "s2"]);
    expect(items[1]).toHaveAttribute("data-spawned", "true");
    expect(items[1]).toHaveTextContent("general");
    await user.click(toggle);
    expect(screen.getAllByTestId("session-item")).toHaveLength(2);
    // The open session is a subagent's: its parent is expanded to show it.
    rerender(<Sidebar {...props} currentId="c1" />);
    expect(screen.getAllByTestId("session-item").map((e) => e.getAttribute("data-session-id"))).toEqual(["s1", "c1", "s2"]);
  });
});
