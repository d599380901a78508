import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AgentInfo, SessionDetail } from "../protocol/generated";
import { SessionView } from "./SessionView";
import { fakeTransport, Providers } from "./testing";

const agent = (name: string, mode: AgentInfo["mode"] = "primary"): AgentInfo => ({
  name,
  mode,
  builtin: true,
  description: `${name} agent`,
  read_only: name === "plan",
});

function detail(over: Partial<SessionDetail> = {}): SessionDetail {
  return {
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
    messages: [],
    running: false,
    ...over,
  };
}

function setup(d: SessionDetail, agents: AgentInfo[] = [agent("build"), agent("plan"), agent("explore", "subagent")]) {
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === "/api/sessions/s1") return d;
    if (path.endsWith("/timeline")) return [];
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView
        sessionId="s1"
        directory="/p"
        agents={agents}
        onNewSession={() => undefined}
        onSessionsChanged={() => undefined}
      />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

describe("mode badge and Tab", () => {
  it("shows the agent and toggles build → plan with Tab in the empty input", async () => {
    const { requests, user } = setup(detail());
    const badge = await screen.findByTestId("mode-badge");
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    expect(badge).toHaveAttribute("data-agent", "build");
    expect(badge).toHaveTextContent("[BUILD 🔨]");
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("{Tab}");
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/agent", body: { agent: "plan" } }),
    );
    expect(screen.getByTestId("mode-badge")).toHaveAttribute("data-agent", "plan");
    expect(screen.getByTestId("mode-badge")).toHaveTextContent("[PLAN 🔍]");
    // And back.
    await user.keyboard("{Tab}");
    await waitFor(() => expect(requests.filter((r) => r.path.endsWith("/agent")).at(-1)?.body).toEqual({ agent: "build" }));
  });

  it("a switch while running is shown as queued until agent_switched(queued=false)", async () => {
    const { requests, emit, user } = setup(detail({ running: true }));
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await screen.findByTestId("stop");
    await user.click(screen.getByTestId("mode-badge"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/agent", body: { agent: "plan" } }),
    );
    expect(screen.getByTestId("mode-badge")).toHaveAttribute("data-agent", "build");
    expect(screen.getByTestId("mode-queued")).toHaveTextContent("→ PLAN queued");
    emit({ type: "agent_switched", session_id: "s1", from: "build", to: "plan", queued: true });
    emit({ type: "agent_switched", session_id: "s1", from: "build", to: "plan", queued: false });
    await waitFor(() => expect(screen.getByTestId("mode-badge")).toHaveAttribute("data-agent", "plan"));
    expect(screen.queryByTestId("mode-queued")).not.toBeInTheDocument();
  });

  it("with three primary agents Tab opens a picker", async () => {
    const { requests, user } = setup(detail(), [agent("build"), agent("plan"), agent("review", "all")]);
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("{Tab}");
    const picker = await screen.findByTestId("agent-picker");
    expect(picker).toHaveTextContent("[REVIEW]");
    expect(requests.some((r) => r.path.endsWith("/agent"))).toBe(false);
    await user.click(screen.getAllByTestId("agent-option").find((o) => o.textContent?.includes("REVIEW"))!);
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/agent", body: { agent: "review" } }),
    );
  });

  it("the agent picker is a listbox driven by the keyboard: the next agent first, arrows and Tab step, Enter picks, Escape closes", async () => {
    const { requests, user } = setup(detail(), [agent("build"), agent("plan"), agent("review", "all")]);
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("{Tab}");
    const list = await screen.findByRole("listbox", { name: "Choose the agent" });
    const options = within(list).getAllByRole("option");
    expect(options.map((o) => o.textContent)).toEqual([
      expect.stringContaining("[BUILD"),
      expect.stringContaining("[PLAN"),
      expect.stringContaining("[REVIEW]"),
    ]);
    // The session is in build: plan, the next one, has the focus.
    await waitFor(() => expect(document.activeElement).toBe(options[1]));
    await user.keyboard("{ArrowDown}");
    expect(document.activeElement).toBe(options[2]);
    await user.keyboard("{Tab}");
    expect(document.activeElement).toBe(options[0]);
    await user.keyboard("{Shift>}{Tab}{/Shift}");
    expect(document.activeElement).toBe(options[2]);
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("agent-picker")).not.toBeInTheDocument());
    expect(requests.some((r) => r.path.endsWith("/agent"))).toBe(false);
    // Back in the composer.
    expect(document.activeElement).toBe(screen.getByTestId("prompt-input"));
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("{Tab}");
    const again = await screen.findByTestId("agent-picker");
    await waitFor(() => expect(again.contains(document.activeElement)).toBe(true));
    await user.keyboard("{ArrowDown}{Enter}");
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/agent", body: { agent: "review" } }),
    );
    await waitFor(() => expect(screen.queryByTestId("agent-picker")).not.toBeInTheDocument());
    // A click on the option that has the focus picks it too (once).
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("{Tab}");
    const third = await screen.findByTestId("agent-picker");
    const focused = await waitFor(() => {
      const f = document.activeElement;
      expect(f && third.contains(f)).toBe(true);
      return f as HTMLElement;
    });
    await user.click(focused);
    const picked = focused.textContent?.includes("[BUILD") ? "build" : focused.textContent?.includes("[PLAN") ? "plan" : "review";
    await waitFor(() =>
      expect(requests.filter((r) => r.method === "POST" && r.path.endsWith("/agent")).map((r) => r.body)).toEqual([
        { agent: "review" },
        { agent: picked },
      ]),
    );
  });

  it("Stop cancels the running turn", async () => {
    const { requests, user } = setup(detail({ running: true }));
    await user.click(await screen.findByTestId("stop"));
    await waitFor(() => expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/cancel", body: undefined }));
  });
});
