import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Message, SessionDetail } from "../protocol/generated";
import { SessionView } from "./SessionView";
import { fakePlatform, fakeTransport, Providers } from "./testing";

function msg(
  id: string,
  role: Message["role"],
  parts: Message["parts"][number]["content"][],
  extra: Partial<Message> = {},
): Message {
  return {
    id,
    session_id: "s1",
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: parts.map((content, index) => ({ id: `${id}-${index}`, message_id: id, index, created_at: 1, content })),
    ...extra,
  };
}

function setup(messages: Message[], over: Partial<SessionDetail> = {}) {
  const d: SessionDetail = {
    session: {
      id: "s1",
      title: "Fix it",
      slug: "fix-it",
      directory: "/p",
      project_id: "x",
      status: "idle",
      created_at: 1,
      updated_at: 2,
      version: "0.1",
    },
    agent: "build",
    messages,
    ...over,
  };
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === "/api/sessions/s1") return d;
    if (path.endsWith("/timeline")) return [];
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
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

describe("conversation", () => {
  it("streams an answer, then shows the tool card with result, decision and files", async () => {
    const { emit } = setup([msg("u1", "user", [{ type: "text", text: "write a file" }])]);
    expect(await screen.findByTestId("message-user")).toHaveTextContent("write a file");
    emit({ type: "step_started", session_id: "s1", message_id: "m1", agent: "build", model: "mock/m" });
    emit({ type: "text_delta", session_id: "s1", message_id: "m1", text: "Writing **the" });
    await waitFor(() => expect(screen.getByTestId("assistant-text")).toHaveTextContent("Writing the"));
    // The half-streamed bold renders as bold, not as raw asterisks.
    expect(screen.getByTestId("assistant-text").querySelector("strong")).toHaveTextContent("the");
    emit({
      type: "message_stored",
      message: msg(
        "m1",
        "assistant",
        [
          { type: "text", text: "Writing **the file**." },
          { type: "commentary", perspective: "mia", text: "A small structural step." },
          { type: "tool_call", call_id: "c1", tool: "write", input: { path: "notes.txt", content: "hi" } },
        ],
        { metadata: { tokens: { input: 1200, output: 30 }, cost_usd: 0.0123 } },
      ),
    });
    emit({
      type: "tool_call",
      session_id: "s1",
      message_id: "m1",
      call_id: "c1",
      tool: "write",
      input: { path: "notes.txt", content: "hi" },
    });
    emit({ type: "permission_resolved", session_id: "s1", request_id: "c1", decision: "allow", by: "user", reason: "" });
    emit({
      type: "snapshot",
      session_id: "s1",
      call_id: "c1",
      files: [{ path: "notes.txt", kind: "added", additions: 1, deletions: 0 }],
    });
    emit({
      type: "tool_result",
      session_id: "s1",
      message_id: "m1",
      call_id: "c1",
      tool: "write",
      output: "Wrote notes.txt",
      is_error: false,
      duration_ms: 4,
    });
    const card = await screen.findByTestId("tool-card");
    expect(card).toHaveAttribute("data-tool", "write");
    expect(card).toHaveAttribute("data-call-id", "c1");
    expect(card).toHaveTextContent("notes.txt");
    await waitFor(() => expect(within(card).getByTestId("tool-card-result")).toHaveTextContent("Wrote notes.txt"));
    expect(card).toHaveTextContent("allowed by you");
    expect(within(card).getByTestId("tool-card-diff")).toBeInTheDocument();
    expect(screen.getByTestId("assistant-text")).toHaveTextContent("Writing the file.");
    expect(screen.getByTestId("commentary")).toHaveTextContent("🧠 Mia");
    expect(screen.getByTestId("message-tokens")).toHaveTextContent("↑1.2k ↓30");
    expect(screen.getByTestId("session-cost")).toHaveTextContent("$0.01");
    emit({ type: "turn_finished", session_id: "s1", end: "completed", steps: 1, usage: { input: 1200, output: 30 } });
    await waitFor(() => expect(screen.queryByTestId("stop")).not.toBeInTheDocument());
  });

  it("a streaming draft shows its 🧠/🌸 lines as commentary", async () => {
    const { emit, requests } = setup([]);
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    emit({ type: "step_started", session_id: "s1", message_id: "m1", agent: "build", model: "mock/m" });
    emit({ type: "text_delta", session_id: "s1", message_id: "m1", text: "All done.\n🌸 Miette: that felt light\n" });
    expect(await screen.findByTestId("commentary")).toHaveTextContent("🌸 Miettethat felt light");
    expect(screen.getByTestId("assistant-text")).toHaveTextContent("All done.");
    expect(screen.getByTestId("assistant-text")).not.toHaveTextContent("Miette");
  });

  it("hides commentary with the toggle", async () => {
    const { user } = setup([
      msg("m1", "assistant", [
        { type: "text", text: "Answer" },
        { type: "commentary", perspective: "miette", text: "Oh, nice." },
      ]),
    ]);
    expect(await screen.findByTestId("commentary")).toHaveTextContent("🌸 Miette");
    await user.click(screen.getByTestId("toggle-commentary"));
    expect(screen.queryByTestId("commentary")).not.toBeInTheDocument();
    expect(localStorage.getItem("mia-code.hideCommentary")).toBe("1");
    await user.click(screen.getByTestId("toggle-commentary"));
    expect(screen.getByTestId("commentary")).toBeInTheDocument();
  });

  it("renders model markdown safely: raw HTML as text, images as links, links via the platform", async () => {
    const { user } = setup([
      msg("m1", "assistant", [
        {
          type: "text",
          text: 'Hi <img src="https://evil.example/x.png" onerror="alert(1)"> there\n\n![logo](https://evil.example/logo.png)\n\n[docs](https://example.com/docs)',
        },
      ]),
    ]);
    const text = await screen.findByTestId("assistant-text");
    expect(text.querySelector("img")).toBeNull();
    expect(text).toHaveTextContent('<img src="https://evil.example/x.png" onerror="alert(1)">');
    expect(text).toHaveTextContent("[image: logo](https://evil.example/logo.png)");
    await user.click(within(text).getByText("docs"));
    expect(fakePlatform.openExternal).toHaveBeenCalledWith("https://example.com/docs");
  });

  it("a message drawn again (its rendered markdown is cached) is the same, safe, with working links", async () => {
    const text = "A **bold** claim, [docs](https://example.com/again) and <b>raw</b>.\n\n```ts\nconst a = 1;\n```";
    const first = setup([msg("m1", "assistant", [{ type: "text", text }])]);
    const shown = await screen.findByTestId("assistant-text");
    // The highlighter loads on demand: once the code is highlighted the rendering is final.
    await waitFor(() => expect(shown.querySelector(".hljs-keyword")).not.toBeNull());
    const before = shown.innerHTML;
    cleanup();
    const { user } = setup([msg("m1", "assistant", [{ type: "text", text }])]);
    const again = await screen.findByTestId("assistant-text");
    expect(again.innerHTML).toBe(before);
    expect(again.querySelector("strong")).toHaveTextContent("bold");
    expect(again).toHaveTextContent("<b>raw</b>");
    await user.click(within(again).getByText("docs"));
    expect(fakePlatform.openExternal).toHaveBeenCalledWith("https://example.com/again");
    expect(first.requests.length).toBeGreaterThan(0);
  });

  it("the end of a turn fetches the side panel's steps once", async () => {
    const { emit, requests } = setup([msg("u1", "user", [{ type: "text", text: "hi" }])]);
    await screen.findByTestId("message-user");
    const timeline = () => requests.filter((r) => r.path === "/api/sessions/s1/timeline").length;
    await waitFor(() => expect(timeline()).toBe(1));
    emit({ type: "turn_finished", session_id: "s1", end: "completed", steps: 1, usage: { input: 1, output: 1 } });
    await waitFor(() => expect(timeline()).toBe(2));
    // Nothing else asks for them again (before, the view's own refresh key did as well).
    await new Promise((r) => setTimeout(r, 100));
    expect(timeline()).toBe(2);
  });

  it("an error shows a banner whose Retry re-sends the last user message", async () => {
    const { emit, requests, user } = setup([msg("u1", "user", [{ type: "text", text: "try this" }])]);
    await screen.findByTestId("message-user");
    emit({ type: "error", session_id: "s1", kind: "network", message: "connection reset", retryable: true });
    const banner = await screen.findByTestId("error-banner");
    expect(banner).toHaveTextContent("connection reset");
    await user.click(within(banner).getByTestId("retry"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/messages", body: { text: "try this" } }),
    );
  });

  it("a permission ask shows the dialog and notifies; replying posts the reply", async () => {
    const { emit, requests } = setup([]);
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    emit({
      type: "permission_asked",
      request: {
        id: "perm-1",
        session_id: "s1",
        agent: "build",
        tool: "bash",
        permission: "bash",
        target: "rm -rf build",
        reason: "ask",
        input: {},
        options: ["once", "deny"],
      },
    });
    expect(await screen.findByRole("dialog")).toHaveTextContent("rm -rf build");
    expect(fakePlatform.notify).toHaveBeenCalledWith("Mia Code needs permission", "bash rm -rf build");
  });
});
