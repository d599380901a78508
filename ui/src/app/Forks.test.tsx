import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ForkResult, Message, Session, SessionDetail } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { SessionView, type SessionViewProps } from "./SessionView";
import { fakeTransport, Providers, type Handler } from "./testing";

function msg(id: string, role: Message["role"], text: string, extra: Partial<Message> = {}): Message {
  return {
    id,
    session_id: "s1",
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: [{ id: `${id}-0`, message_id: id, index: 0, created_at: 1, content: { type: "text", text } }],
    ...extra,
  };
}

const session = (over: Partial<Session> = {}): Session => ({
  id: "s1",
  title: "Fix it",
  slug: "fix-it",
  directory: "/p",
  project_id: "x",
  status: "idle",
  created_at: 1,
  updated_at: 2,
  version: "0.1",
  ...over,
});

const forked: ForkResult = { ...session({ id: "s2", title: "Fix it (fork)", parent_id: "s1" }) };

function setup(messages: Message[], handler: Handler = () => undefined, over: Partial<SessionDetail> = {}, props: Partial<SessionViewProps> = {}) {
  const d: SessionDetail = { session: session(), agent: "build", messages, ...over };
  const fake = fakeTransport((method, path, body) => {
    if (method === "GET" && path === "/api/sessions/s1") return d;
    if (path.endsWith("/timeline")) return [];
    return handler(method, path, body);
  });
  const callbacks = {
    onOpenSession: vi.fn(),
    onForkTree: vi.fn(),
    onCompareSessions: vi.fn(),
    onSessionsChanged: vi.fn(),
  };
  render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} {...callbacks} {...props} />
    </Providers>,
  );
  return { ...fake, ...callbacks, user: userEvent.setup() };
}

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

const convo = [msg("u1", "user", "Read the README"), msg("a1", "assistant", "It describes a tiny project.")];

describe("a message's menu", () => {
  it("Fork from here forks at that message and opens the new session", async () => {
    const { user, requests, onOpenSession, onSessionsChanged } = setup(convo, (method, path) =>
      method === "POST" && path === "/api/sessions/s1/fork" ? forked : undefined,
    );
    const assistant = await screen.findByTestId("message-assistant");
    const button = within(assistant).getByTestId("message-menu");
    // "true" is a menu (WAI-ARIA), which is what react-aria says.
    expect(["true", "menu"]).toContain(button.getAttribute("aria-haspopup"));
    expect(button).toHaveAttribute("aria-expanded", "false");
    await user.click(button);
    expect(button).toHaveAttribute("aria-expanded", "true");
    const menu = screen.getByRole("menu");
    expect(within(menu).getAllByRole("menuitem").map((i) => i.textContent)).toEqual([
      "Fork from here",
      "Fork with files from here",
    ]);
    await user.click(within(menu).getByTestId("fork-here"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/fork", body: { message_id: "a1", with_files: false } }),
    );
    await waitFor(() => expect(onOpenSession).toHaveBeenCalledWith("s2"));
    expect(onSessionsChanged).toHaveBeenCalled();
  });

  it("is keyboard operable: Enter opens on the first item, arrows move, Escape closes and refocuses the button", async () => {
    const { user, requests } = setup(convo, (method, path) =>
      method === "POST" && path === "/api/sessions/s1/fork" ? { ...forked, files: { worktree: "fork-a", path: "/p/.mia/worktrees/fork-a", branch: "mia/fork-a", base: "abc", left_out: [], included: [] } } : undefined,
    );
    const user1 = await screen.findByTestId("message-user");
    expect(user1).toHaveAttribute("data-message-id", "u1");
    const button = within(user1).getByTestId("message-menu");
    button.focus();
    await user.keyboard("{Enter}");
    expect(screen.getByTestId("fork-here")).toHaveFocus();
    await user.keyboard("{ArrowDown}");
    expect(screen.getByTestId("fork-files-here")).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    // Given back once the popover's focus scope has closed.
    await waitFor(() => expect(button).toHaveFocus());
    await user.keyboard("{ArrowUp}");
    expect(screen.getByTestId("fork-files-here")).toHaveFocus();
    await user.keyboard("{Enter}");
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/fork", body: { message_id: "u1", with_files: true } }),
    );
    expect(await screen.findByText(/Forked with files into worktree fork-a/)).toBeInTheDocument();
  });

  it("a failed fork shows the server's error text", async () => {
    const { user, onOpenSession } = setup(convo, (method, path) => {
      if (method === "POST" && path === "/api/sessions/s1/fork")
        throw new ApiError(400, "InvalidForkPointError: /p is not a git repository: fork without files instead");
      return undefined;
    });
    const assistant = await screen.findByTestId("message-assistant");
    await user.click(within(assistant).getByTestId("message-menu"));
    await user.click(screen.getByTestId("fork-files-here"));
    expect(await screen.findByTestId("toast")).toHaveTextContent(
      "InvalidForkPointError: /p is not a git repository: fork without files instead",
    );
    expect(onOpenSession).not.toHaveBeenCalled();
  });
});

describe("slash commands", () => {
  async function run(text: string, ctx: ReturnType<typeof setup>) {
    const input = await screen.findByTestId("prompt-input");
    await ctx.user.click(input);
    await ctx.user.type(input, `${text}{Enter}`);
  }

  it("/fork forks at the last message (no message id) and opens the fork", async () => {
    const ctx = setup(convo, (method, path) => (method === "POST" && path === "/api/sessions/s1/fork" ? forked : undefined));
    await screen.findByTestId("message-assistant");
    await run("/fork", ctx);
    await waitFor(() =>
      expect(ctx.requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/fork", body: { with_files: false } }),
    );
    await waitFor(() => expect(ctx.onOpenSession).toHaveBeenCalledWith("s2"));
    expect(ctx.requests.some((r) => r.path === "/api/sessions/s1/messages")).toBe(false);
  });

  it("/forks opens the fork tree focused on this session", async () => {
    const ctx = setup(convo);
    await run("/forks", ctx);
    expect(ctx.onForkTree).toHaveBeenCalledWith("s1");
  });

  it("/promote on a session that is not a fork explains, and is listed as unavailable", async () => {
    const ctx = setup(convo);
    const input = await screen.findByTestId("prompt-input");
    await ctx.user.click(input);
    await ctx.user.type(input, "/pro");
    const option = screen.getAllByTestId("command-option").find((o) => o.getAttribute("data-command") === "promote")!;
    expect(option).toHaveAttribute("aria-disabled", "true");
    expect(option).toHaveTextContent("only a fork can be promoted");
    await ctx.user.keyboard("{Enter}");
    expect(await screen.findByTestId("toast")).toHaveTextContent("Not a fork");
    expect(ctx.requests.some((r) => r.path.endsWith("/promote"))).toBe(false);
  });

  it("/promote on a fork promotes it", async () => {
    const ctx = setup(
      convo,
      (method, path) => (method === "POST" && path === "/api/sessions/s1/promote" ? session({ title: "Fix it (fork)" }) : undefined),
      { session: session({ parent_id: "s0", fork: { source_session_id: "s0", source_message_id: "m0", forked_at: 1, fork_depth: 1 } }) },
    );
    await screen.findByTestId("message-assistant");
    await run("/promote", ctx);
    await waitFor(() => expect(ctx.requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/promote", body: undefined }));
    expect(await screen.findByTestId("toast")).toHaveTextContent("“Fix it (fork)” is a top-level session now");
    // Promoted: no parent to compare with any more.
    await waitFor(() => expect(screen.queryByTestId("compare-parent")).not.toBeInTheDocument());
  });

  it("the header opens the fork tree, and a fork's header compares it with its parent", async () => {
    const ctx = setup(convo, undefined, {
      session: session({ parent_id: "s0", fork: { source_session_id: "s0", source_message_id: "m0", forked_at: 1, fork_depth: 1 } }),
    });
    await ctx.user.click(await screen.findByTestId("compare-parent"));
    expect(ctx.onCompareSessions).toHaveBeenCalledWith("s1", "s0");
    await ctx.user.click(screen.getByTestId("open-fork-tree"));
    expect(ctx.onForkTree).toHaveBeenCalledWith("s1");
  });
});

describe("the fork marker", () => {
  const marker = (files?: string) =>
    msg("f1", "system", "Forked from session s0 at message m0", {
      type: "fork",
      parts: [
        { id: "f1-0", message_id: "f1", index: 0, created_at: 1, content: { type: "text", text: "Forked from session s0 at message m0", synthetic: true } },
        ...(files ? [{ id: "f1-1", message_id: "f1", index: 1, created_at: 1, content: { type: "text" as const, text: files, synthetic: true } }] : []),
      ],
    });

  it("is a divider naming the parent at the fork point, whose link opens the parent there", async () => {
    const ctx = setup([...convo, marker("Files: worktree fork-a (/p/.mia/worktrees/fork-a) on branch mia/fork-a")], undefined, {}, {
      sessionTitle: (id) => (id === "s0" ? "The original" : undefined),
    });
    const notice = await screen.findByTestId("message-fork");
    expect(notice).toHaveTextContent("Forked from The original at It describes a tiny project.");
    expect(notice.querySelector("q")).toHaveTextContent("It describes a tiny project.");
    expect(notice).not.toHaveTextContent("Forked from session s0");
    expect(within(notice).getByTestId("fork-files")).toHaveTextContent("Files: worktree fork-a");
    // Not a chat bubble, and no fork menu of its own.
    expect(notice).not.toHaveClass("msg-user");
    expect(within(notice).queryByTestId("message-menu")).not.toBeInTheDocument();
    await ctx.user.click(within(notice).getByTestId("fork-parent-link"));
    expect(ctx.onOpenSession).toHaveBeenCalledWith("s0", "m0");
  });

  it("asks for the parent's title when the caller does not know it", async () => {
    setup([...convo, marker()], (method, path) =>
      method === "GET" && path === "/api/sessions/s0" ? { session: session({ id: "s0", title: "Parent from the API" }), agent: "build", messages: [] } : undefined,
      { session: session({ parent_id: "s0", fork: { source_session_id: "s0", source_message_id: "m0", forked_at: 1, fork_depth: 1 } }) },
    );
    expect(await screen.findByText("Parent from the API")).toBeInTheDocument();
    expect(screen.queryByTestId("fork-files")).not.toBeInTheDocument();
  });

  it("a session opened at a message marks that message", async () => {
    setup(convo, undefined, {}, { highlightMessage: "u1" });
    const userMsg = await screen.findByTestId("message-user");
    await waitFor(() => expect(userMsg.closest(".row")).toHaveAttribute("data-highlighted", "true"));
    expect(screen.getByTestId("message-assistant").closest(".row")).not.toHaveAttribute("data-highlighted");
  });
});
