import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { CommandList, HookRun, Message, SessionDetail } from "../protocol/generated";
import { hookLine, HookRuns } from "./HookRuns";
import { SessionView } from "./SessionView";
import { fakeTransport, Providers } from "./testing";
import { ToolCard } from "./ToolCard";

const base = { callId: "h1", tool: "bash", input: { command: "rm -rf /" }, messageId: "m1" };
const blocked: HookRun = {
  event: "PreToolUse",
  command: "./check.sh",
  exit_code: 2,
  duration_ms: 12,
  outcome: "block",
  message: "rm -rf is not allowed here",
};
const quiet: HookRun = { event: "PostToolUse", command: "./fmt.sh", exit_code: 0, duration_ms: 30, outcome: null };

describe("hook runs on a tool card", () => {
  it("a blocked run is a line in the warning colour with why", () => {
    render(<ToolCard info={{ ...base, output: "blocked by a hook", isError: true, hooks: [blocked] }} running={false} onDiff={() => undefined} />);
    const hooks = screen.getByTestId("tool-card-hooks");
    const line = within(hooks).getByTestId("hook-run");
    expect(line).toHaveTextContent("PreToolUse · ./check.sh · exit 2 · 12 ms · blocked: rm -rf is not allowed here");
    expect(line).toHaveClass("hook-stopped");
    expect(line).toHaveAttribute("data-outcome", "block");
    expect(line.querySelector("svg")).not.toBeNull();
    expect(line).toHaveAttribute("title", hookLine(blocked));
  });

  it("a run that decided nothing is quiet; a timeout or an error is in the danger colour", () => {
    const timeout: HookRun = { event: "PreToolUse", command: "./slow.sh", exit_code: null, duration_ms: 60_000, outcome: "timeout" };
    render(<HookRuns runs={[quiet, timeout]} />);
    const [a, b] = screen.getAllByTestId("hook-run");
    expect(a).toHaveTextContent("PostToolUse · ./fmt.sh · exit 0 · 30 ms");
    expect(a).toHaveClass("hook-quiet");
    expect(b).toHaveTextContent("PreToolUse · ./slow.sh · 1 min 0 s · timed out");
    expect(b).not.toHaveTextContent("exit");
    expect(b).toHaveClass("hook-failed");
  });

  it("no hooks, no line", () => {
    render(<ToolCard info={{ ...base, output: "ok" }} running={false} onDiff={() => undefined} />);
    expect(screen.queryByTestId("tool-card-hooks")).toBeNull();
  });
});

// A session view: hook runs as they come, and the / menu with the project's commands.
function msg(id: string, role: Message["role"], parts: Message["parts"][number]["content"][]): Message {
  return {
    id,
    session_id: "s1",
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: parts.map((content, index) => ({ id: `${id}-${index}`, message_id: id, index, created_at: 1, content })),
  };
}

const commands: CommandList = {
  commands: [
    { name: "review-pr", description: "Review a PR", argument_hint: "[pr]", source: "project", path: "/p/.mia/commands/review-pr.md", error: null },
  ],
};

function setup(messages: Message[]) {
  const d: SessionDetail = {
    session: {
      id: "s1",
      title: "Hooks",
      slug: "hooks",
      directory: "/p",
      project_id: "x",
      status: "idle",
      created_at: 1,
      updated_at: 2,
      version: "0.1",
    },
    agent: "build",
    messages,
  };
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === "/api/sessions/s1") return d;
    if (path.endsWith("/timeline")) return [];
    if (method === "GET" && path === "/api/commands?directory=%2Fp") return commands;
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

const stubbed = ["clientHeight", "clientWidth", "offsetHeight"] as const;
const originals = stubbed.map((k) => Object.getOwnPropertyDescriptor(HTMLElement.prototype, k));
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

describe("hook runs in the session view", () => {
  it("a call's runs show on its card as they come; the stored result's list replaces them; others are transcript lines", async () => {
    const { emit } = setup([msg("u1", "user", [{ type: "text", text: "clean up" }])]);
    expect(await screen.findByTestId("message-user")).toHaveTextContent("clean up");
    emit({ type: "step_started", session_id: "s1", message_id: "m1", agent: "build", model: "mock/m" });
    emit({ type: "tool_call", session_id: "s1", message_id: "m1", call_id: "c1", tool: "bash", input: { command: "rm -rf /" } });
    emit({ type: "hook_ran", session_id: "s1", call_id: "c1", run: blocked });
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(within(card).getByTestId("hook-run")).toHaveTextContent("blocked: rm -rf is not allowed here"));
    emit({
      type: "message_stored",
      message: msg("m1", "assistant", [
        { type: "tool_call", call_id: "c1", tool: "bash", input: { command: "rm -rf /" } },
        { type: "tool_result", call_id: "c1", tool: "bash", output: "blocked", is_error: true, hooks: [blocked] },
      ]),
    });
    await waitFor(() => expect(within(screen.getByTestId("tool-card")).getByTestId("tool-card-result")).toHaveTextContent("blocked"));
    expect(within(screen.getByTestId("tool-card")).getAllByTestId("hook-run")).toHaveLength(1);
    emit({ type: "hook_ran", session_id: "s1", run: { event: "Stop", command: "./done.sh", exit_code: 0, duration_ms: 4, outcome: null } });
    const notes = await screen.findByTestId("hook-notes");
    expect(notes).toHaveTextContent("Stop · ./done.sh · exit 0 · 4 ms");
    // After the assistant's row, not on a card.
    expect(notes.closest("[data-index]")).toBe(screen.getByTestId("tool-card").closest("[data-index]"));
  });

  it("the / menu lists the project's commands (read for the session's directory)", async () => {
    const { user, requests } = setup([msg("u1", "user", [{ type: "text", text: "hi" }])]);
    await screen.findByText("hi");
    await waitFor(() => expect(requests.some((r) => r.path === "/api/commands?directory=%2Fp")).toBe(true));
    const input = screen.getByTestId<HTMLTextAreaElement>("prompt-input");
    await user.click(input);
    await user.clear(input);
    await user.keyboard("/rev");
    const menu = await screen.findByTestId("command-menu");
    await waitFor(() => expect(within(menu).getByText("/review-pr")).toBeInTheDocument());
    // revert, review (built-ins), then review-pr.
    await user.keyboard("{ArrowDown}{ArrowDown}{Enter}");
    expect(input.value).toBe("/review-pr ");
    expect(requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
  });
});
