import { describe, expect, it, vi } from "vitest";
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { SessionSummary } from "../protocol/generated";
import { App, LOST_AFTER_MS } from "./App";
import { fakePlatform, fakeTransport } from "./testing";
import { ApiError } from "../transport/types";
import { zoomStep } from "./zoom";

function summary(i: number, over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id: `s${i}`,
    title: `Session ${i}`,
    slug: `slug-${i}`,
    directory: "/proj",
    project_id: "p",
    status: "idle",
    created_at: 1,
    updated_at: Date.now() - i * 60_000,
    version: "0.1",
    message_count: i,
    ...over,
  };
}

function setup(sessions: SessionSummary[], demo = true) {
  const fake = fakeTransport((method, path) => {
    if (path === "/api/info") return { version: "0.1", demo, home: "/h", project: "/proj" };
    if (path.endsWith("/timeline")) return [];
    // A fresh copy each time, as a server's JSON is.
    if (method === "GET" && path.startsWith("/api/sessions?")) return sessions.map((x) => ({ ...x }));
    if (method === "GET" && path.startsWith("/api/sessions/")) {
      const id = path.split("/")[3]!;
      const s = sessions.find((x) => x.id === id)!;
      return { session: s, agent: "build", messages: [] };
    }
    if (path.startsWith("/api/agents")) return [];
    if (path.endsWith("/timeline")) return [];
    return undefined;
  });
  render(<App transport={fake.transport} platform={fakePlatform} />);
  return { ...fake, user: userEvent.setup() };
}

describe("app shell", () => {
  it("shows the demo banner, the project and its sessions", async () => {
    const { requests } = setup([summary(1), summary(2)]);
    expect(await screen.findByTestId("demo-banner")).toHaveTextContent(
      "Scripted demo — answers come from a recorded script, not a real model",
    );
    expect(screen.getByTestId("project-name")).toHaveTextContent("proj");
    expect(screen.getByTestId("project-name")).toHaveAttribute("title", "/proj");
    const items = await screen.findAllByTestId("session-item");
    expect(items.map((i) => i.getAttribute("data-session-id"))).toEqual(["s1", "s2"]);
    expect(items[1]).toHaveTextContent("2 msg");
    expect(requests.some((r) => r.path === "/api/sessions?project=%2Fproj")).toBe(true);
  });

  it("a turn run by another process shows as running, and stops showing when it ends (the list is read again while one is busy)", async () => {
    // s2 is busy in another process: this window hears none of its Events, only the store says so.
    const sessions = [summary(1), summary(2, { status: "busy" })];
    const fake = setup(sessions, false);
    const row = () => screen.getAllByTestId("session-item").find((i) => i.getAttribute("data-session-id") === "s2")!;
    await waitFor(() => expect(row()).toHaveAttribute("data-running", "true"));
    const lists = () => fake.requests.filter((r) => r.method === "GET" && r.path.startsWith("/api/sessions?")).length;
    const before = lists();
    sessions[1] = summary(2, { status: "idle" });
    await waitFor(() => expect(row()).not.toHaveAttribute("data-running"), { timeout: 7000 });
    expect(lists()).toBeGreaterThan(before);
    // Nothing busy: no more polling.
    const settled = lists();
    await new Promise((r) => setTimeout(r, 4500));
    expect(lists()).toBe(settled);
  }, 20_000);

  it("the sidebar says it is loading, then why the list could not be read, with Try again; an empty project says so", async () => {
    let answer: "wait" | "fail" | "empty" = "wait";
    const release: (() => void)[] = [];
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (method === "GET" && path.startsWith("/api/sessions?")) {
        if (answer === "wait") return new Promise((_, reject) => release.push(() => reject(new ApiError(500, "database is locked"))));
        if (answer === "fail") return Promise.reject(new ApiError(500, "database is locked"));
        return [];
      }
      if (path.startsWith("/api/agents")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    expect(await screen.findByTestId("sessions-loading")).toHaveTextContent("Loading sessions…");
    expect(screen.queryByTestId("sessions-empty")).toBeNull();
    answer = "fail";
    act(() => release.forEach((r) => r()));
    const error = await screen.findByTestId("sessions-error", {}, { timeout: 8000 });
    expect(error).toHaveTextContent("Could not read the sessions: database is locked");
    expect(screen.queryByTestId("sessions-empty")).toBeNull();
    answer = "empty";
    await userEvent.setup().click(within(error).getByRole("button", { name: "Try again" }));
    expect(await screen.findByTestId("sessions-empty")).toHaveTextContent("No sessions yet.");
    expect(screen.queryByTestId("sessions-error")).toBeNull();
  });

  it("no banner outside the demo", async () => {
    setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    expect(screen.queryByTestId("demo-banner")).not.toBeInTheDocument();
  });

  it("says when the connection to the runtime is lost, and when it is back", async () => {
    const { streamState } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    expect(screen.queryByTestId("connection-banner")).toBeNull();
    act(() => streamState("reconnecting"));
    expect(await screen.findByTestId("connection-banner")).toHaveTextContent("reconnecting");
    act(() => streamState("open"));
    await waitFor(() => expect(screen.queryByTestId("connection-banner")).toBeNull());
  });

  it("says the connection is lost after a while of failed retries, and Retry now retries at once", async () => {
    const { streamState, reconnect } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      act(() => streamState("reconnecting"));
      expect(screen.getByTestId("connection-banner")).toHaveAttribute("data-state", "reconnecting");
      // Retries keep failing: still "reconnecting…" until LOST_AFTER_MS has passed.
      act(() => {
        vi.advanceTimersByTime(LOST_AFTER_MS - 1000);
      });
      act(() => streamState("reconnecting"));
      expect(screen.getByTestId("connection-banner")).toHaveAttribute("data-state", "reconnecting");
      act(() => {
        vi.advanceTimersByTime(1000);
      });
      const banner = screen.getByTestId("connection-banner");
      expect(banner).toHaveAttribute("data-state", "lost");
      expect(banner).toHaveAttribute("role", "alert");
      expect(banner).toHaveTextContent("The connection to Mia Code is lost");
      // Another failed retry does not hide that it is lost.
      act(() => streamState("reconnecting"));
      expect(screen.getByTestId("connection-banner")).toHaveAttribute("data-state", "lost");
      act(() => screen.getByTestId("connection-retry").click());
      expect(reconnect).toHaveBeenCalledTimes(1);
      expect(screen.getByTestId("connection-banner")).toHaveAttribute("data-state", "reconnecting");
      act(() => streamState("open"));
      expect(screen.queryByTestId("connection-banner")).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it("asks waiting in another session show as a badge and a marker, live", async () => {
    const ask = {
      id: "perm-1",
      session_id: "s2",
      agent: "build",
      tool: "write",
      permission: "write",
      input: {},
      target: "a.txt",
      segments: [],
      reason: "r",
      options: ["once", "deny"],
    };
    let asks: unknown[] = [];
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (path.startsWith("/api/asks")) return asks;
      if (path.endsWith("/timeline")) return [];
      if (method === "GET" && path.startsWith("/api/sessions?")) return [summary(1), summary(2)];
      if (method === "GET" && path.startsWith("/api/sessions/")) return { session: summary(1), agent: "build", messages: [] };
      if (path.startsWith("/api/agents")) return [];
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    await screen.findAllByTestId("session-item");
    expect(screen.queryByTestId("attention-badge")).toBeNull();
    asks = [ask];
    act(() => fake.emit({ type: "permission_asked", request: ask } as never));
    expect(await screen.findByTestId("attention-badge")).toHaveTextContent("1 waiting");
    const row = screen.getAllByTestId("session-item").find((r) => r.getAttribute("data-session-id") === "s2")!;
    expect(within(row).getByTestId("session-needs-you")).toHaveTextContent("1");
    // The OS is told (the platform shows it only when the window is unfocused); clicked, it opens s2.
    await waitFor(() =>
      expect(fakePlatform.notify).toHaveBeenCalledWith("Mia Code needs you", "build asks to use write in Session 2", expect.any(Function)),
    );
    const onClick = fakePlatform.notify.mock.calls.find((c) => c[0] === "Mia Code needs you")![2]!;
    act(() => onClick());
    await waitFor(() => expect(fake.requests.some((r) => r.method === "GET" && r.path === "/api/sessions/s2")).toBe(true));
    act(() =>
      fake.emit({ type: "permission_resolved", session_id: "s2", request_id: "perm-1", decision: "allow", by: "user", reason: "" }),
    );
    await waitFor(() => expect(screen.queryByTestId("attention-badge")).toBeNull());
  });

  it("Ctrl+K opens the command palette: type to filter, Enter runs, Esc closes", async () => {
    const { user } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    await user.keyboard("{Control>}k{/Control}");
    const palette = await screen.findByTestId("command-palette");
    expect(within(palette).getAllByTestId("palette-item").map((i) => i.getAttribute("data-action"))).toContain("settings");
    expect(screen.getByTestId("palette-input")).toHaveFocus();
    await user.keyboard("settin");
    const items = within(palette).getAllByTestId("palette-item");
    expect(items[0]).toHaveAttribute("data-action", "settings");
    await user.keyboard("{Enter}");
    expect(await screen.findByTestId("settings")).toBeInTheDocument();
    expect(screen.queryByTestId("command-palette")).toBeNull();
  });

  it("the palette offers the open session's actions: the plan/build toggle and its / commands, Stop only while a turn runs", async () => {
    const agents = [
      { name: "build", mode: "primary", builtin: true, description: "build", read_only: false },
      { name: "plan", mode: "primary", builtin: true, description: "plan", read_only: true },
    ];
    let running = false;
    const s1 = summary(1);
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (method === "GET" && path.startsWith("/api/sessions?")) return [{ ...s1 }];
      if (method === "GET" && path === "/api/sessions/s1") return { session: s1, agent: "build", messages: [], running };
      if (path.startsWith("/api/agents")) return agents;
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    expect(await screen.findByTestId("mode-badge")).toHaveAttribute("data-agent", "build");
    await user.keyboard("{Control>}k{/Control}");
    let palette = await screen.findByTestId("command-palette");
    const ids = () => within(palette).getAllByTestId("palette-item").map((i) => i.getAttribute("data-action"));
    expect(ids()).toEqual(expect.arrayContaining(["mode", "cmd-undo", "cmd-diff", "cmd-plan", "cmd-fork", "cmd-compact"]));
    expect(ids()).not.toContain("stop");
    const mode = within(palette).getAllByTestId("palette-item").find((i) => i.getAttribute("data-action") === "mode")!;
    expect(mode).toHaveTextContent("Tab");
    // Running the toggle switches the session's agent, as Tab does.
    await user.click(mode);
    await waitFor(() =>
      expect(fake.requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/agent", body: { agent: "plan" } }),
    );
    expect(screen.queryByTestId("command-palette")).toBeNull();
    // While a turn runs, Stop is offered first, with its key.
    running = true;
    act(() => fake.emit({ type: "step_started", session_id: "s1", message_id: "m1", model: "mock/m", agent: "plan" }));
    await screen.findByTestId("stop");
    await user.keyboard("{Control>}k{/Control}");
    palette = await screen.findByTestId("command-palette");
    expect(ids()[0]).toBe("stop");
    expect(within(palette).getAllByTestId("palette-item")[0]).toHaveTextContent("Esc");
    await user.click(within(palette).getAllByTestId("palette-item")[0]!);
    await waitFor(() => expect(fake.requests.some((r) => r.method === "POST" && r.path === "/api/sessions/s1/cancel")).toBe(true));
  });

  it("? outside a text field shows the keyboard shortcuts; typed in the input it is just text", async () => {
    const { user } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("?");
    expect(screen.queryByTestId("shortcuts")).toBeNull();
    expect(screen.getByTestId("prompt-input")).toHaveValue("?");
    (document.activeElement as HTMLElement).blur();
    await user.keyboard("?");
    expect(await screen.findByTestId("shortcuts")).toHaveTextContent("command palette");
  });

  it("the palette lists shortcuts and closes on Esc", async () => {
    const { user } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    await user.keyboard("{Control>}k{/Control}");
    const palette = await screen.findByTestId("command-palette");
    const zoom = within(palette).getAllByTestId("palette-item").find((i) => i.getAttribute("data-action") === "zoom-in")!;
    expect(zoom).toHaveTextContent("Ctrl++");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("command-palette")).toBeNull());
  });

  it("the palette's arrows move through the filtered actions while the field keeps the focus; Enter runs the one shown as current", async () => {
    const { user } = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    await user.keyboard("{Control>}k{/Control}");
    const palette = await screen.findByTestId("command-palette");
    const input = screen.getByTestId("palette-input");
    await user.keyboard("zoom");
    const items = within(palette).getAllByTestId("palette-item");
    expect(items.map((i) => i.getAttribute("data-action"))).toEqual(["zoom-in", "zoom-out"]);
    // The field keeps the keys; the arrows move the current action (aria-activedescendant).
    const current = () => items.find((i) => i.id === input.getAttribute("aria-activedescendant"));
    await user.keyboard("{ArrowDown}");
    await waitFor(() => expect(current()).toBeDefined());
    const first = current()!.getAttribute("data-action");
    await user.keyboard("{ArrowDown}");
    await waitFor(() => expect(current()?.getAttribute("data-action")).not.toBe(first));
    const chosen = current()!.getAttribute("data-action");
    expect(input).toHaveFocus();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(screen.queryByTestId("command-palette")).toBeNull());
    expect(document.documentElement.dataset.zoom).toBe(chosen === "zoom-in" ? "1.1" : "0.9");
    zoomStep(0);
  });

  it("search filters by title or slug", async () => {
    const { user } = setup([summary(1), summary(2, { title: "Fix auth bug" }), summary(3, { slug: "auth-refactor" })]);
    await screen.findAllByTestId("session-item");
    await user.type(screen.getByTestId("session-search"), "auth");
    expect(screen.getAllByTestId("session-item").map((i) => i.getAttribute("data-session-id"))).toEqual(["s2", "s3"]);
  });

  it("archive sends PATCH {archived:true}; delete asks for confirmation, then DELETE", async () => {
    const { requests, user } = setup([summary(1), summary(2)]);
    const items = await screen.findAllByTestId("session-item");
    await user.click(within(items[1]!).getByTestId("session-archive"));
    await waitFor(() => expect(requests).toContainEqual({ method: "PATCH", path: "/api/sessions/s2", body: { archived: true } }));
    await user.click(within(screen.getAllByTestId("session-item")[1]!).getByTestId("session-delete"));
    expect(requests.some((r) => r.method === "DELETE")).toBe(false);
    const confirm = await screen.findByTestId("confirm-delete");
    await user.click(confirm);
    await waitFor(() => expect(requests).toContainEqual({ method: "DELETE", path: "/api/sessions/s2", body: undefined }));
    await waitFor(() =>
      expect(screen.getAllByTestId("session-item").map((i) => i.getAttribute("data-session-id"))).toEqual(["s1"]),
    );
  });

  it("a failed request shows the server's message in a toast", async () => {
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (method === "GET" && path.startsWith("/api/sessions?")) return [summary(1)];
      if (method === "GET" && path === "/api/sessions/s1") return { session: summary(1), agent: "build", messages: [] };
      if (method === "DELETE")
        throw Object.assign(new Error("a turn is running in this session: stop it first"), { status: 409 });
      return [];
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    const item = await screen.findByTestId("session-item");
    await user.click(within(item).getByTestId("session-delete"));
    await user.click(await screen.findByTestId("confirm-delete"));
    expect(await screen.findByTestId("toast")).toHaveTextContent("a turn is running in this session: stop it first");
    expect(screen.getByTestId("session-item")).toBeInTheDocument();
  });
});

describe("notices", () => {
  const notice = (message: string, session_id?: string) => ({ type: "notice" as const, message, session_id });

  it("shows a notice of the runtime as a polite status toast, not an error", async () => {
    const fake = setup([summary(1), summary(2)], false);
    await screen.findAllByTestId("session-item");
    act(() => fake.emit(notice("Installing plugin mia-code-plugin-example@^1.0.0...")));
    const toast = await screen.findByTestId("toast");
    expect(toast).toHaveTextContent("Installing plugin mia-code-plugin-example@^1.0.0...");
    expect(toast).toHaveAttribute("data-kind", "notice");
    expect(toast).toHaveClass("toast-notice");
    expect(toast).not.toHaveClass("toast-error");
    const region = toast.closest("[role='status']");
    expect(region).not.toBeNull();
    expect(region).toHaveAttribute("aria-live", "polite");
    expect(screen.getAllByRole("status")).toContain(region);
    // Nothing blocks: no dialog, no alert.
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();

    act(() => fake.emit(notice("✓ Installed plugin mia-code-plugin-example@1.0.0")));
    await waitFor(() => expect(screen.getAllByTestId("toast")).toHaveLength(2));
    expect(screen.getAllByTestId("toast")[1]).toHaveTextContent("✓ Installed plugin mia-code-plugin-example@1.0.0");
  });

  it("the same notice again counts instead of stacking", async () => {
    const fake = setup([summary(1)], false);
    await screen.findAllByTestId("session-item");
    act(() => {
      for (let i = 0; i < 5; i++) fake.emit(notice("Plugin mia-code-plugin-net not cached, skipping (offline mode)"));
    });
    await waitFor(() => expect(screen.getByTestId("toast-count")).toHaveTextContent("×5"));
    expect(screen.getAllByTestId("toast")).toHaveLength(1);
    expect(screen.getByTestId("toast")).toHaveTextContent("Plugin mia-code-plugin-net not cached, skipping (offline mode)");
  });

  it("names the session of a notice about another session than the open one", async () => {
    const fake = setup([summary(1), summary(2)], false);
    await screen.findAllByTestId("session-item");
    await screen.findByTestId("prompt-input");
    act(() => fake.emit(notice("plugin crash is disabled for this session: the plugin exited", "s2")));
    expect(await screen.findByTestId("toast")).toHaveTextContent(
      /^plugin crash is disabled for this session: the plugin exited \(in “Session 2”\)$/,
    );
    act(() => fake.emit(notice("plugin crash is disabled for this session: the plugin exited", "s1")));
    await waitFor(() => expect(screen.getAllByTestId("toast")).toHaveLength(2));
    expect(screen.getAllByTestId("toast")[1]).toHaveTextContent(
      /^plugin crash is disabled for this session: the plugin exited$/,
    );
  });
});

describe("sidebar virtualisation", () => {
  it("renders only the visible rows of a long session list", async () => {
    const desc = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "clientHeight");
    Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 600 });
    try {
      const many = Array.from({ length: 500 }, (_, i) => summary(i + 1));
      setup(many);
      await waitFor(() => expect(screen.getAllByTestId("session-item").length).toBeGreaterThan(5));
      const items = within(screen.getByTestId("session-list")).getAllByTestId("session-item");
      expect(items.length).toBeLessThan(60);
      expect(items[0]).toHaveAttribute("data-session-id", "s1");
    } finally {
      if (desc) Object.defineProperty(HTMLElement.prototype, "clientHeight", desc);
      else delete (HTMLElement.prototype as unknown as Record<string, unknown>).clientHeight;
    }
  });
});

describe("new session", () => {
  it("starts as a draft: the first message creates the session with the chosen agent, then is sent", async () => {
    const created = summary(9, { title: "", message_count: 0 });
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (path.endsWith("/timeline")) return [];
      if (method === "GET" && path.startsWith("/api/sessions?")) return [summary(1)];
      if (method === "POST" && path === "/api/sessions") return created;
      if (method === "GET" && path.startsWith("/api/sessions/"))
        return {
          session: path.includes("s9") ? created : summary(1),
          agent: path.includes("s9") ? "plan" : "build",
          messages: [],
        };
      if (path.startsWith("/api/agents")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    await screen.findByTestId("session-item");
    await user.click(screen.getByTestId("new-session"));
    expect(fake.requests.some((r) => r.method === "POST")).toBe(false);
    const input = screen.getByTestId("prompt-input");
    await user.click(input);
    await user.keyboard("{Tab}");
    expect(screen.getByTestId("mode-badge")).toHaveAttribute("data-agent", "plan");
    await user.type(input, "Plan the refactor{Enter}");
    await waitFor(() =>
      expect(fake.requests).toContainEqual({
        method: "POST",
        path: "/api/sessions",
        body: { directory: "/proj", agent: "plan" },
      }),
    );
    await waitFor(() =>
      expect(fake.requests).toContainEqual({
        method: "POST",
        path: "/api/sessions/s9/messages",
        body: { text: "Plan the refactor" },
      }),
    );
    expect(screen.getByTestId("mode-badge")).toHaveAttribute("data-agent", "plan");
  });

  it("a first message that could not be sent is back in the new session's input, with the reason", async () => {
    const created = summary(9, { title: "", message_count: 0 });
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (path.endsWith("/timeline")) return [];
      if (method === "GET" && path.startsWith("/api/sessions?")) return [summary(1), created];
      if (method === "POST" && path === "/api/sessions") return created;
      if (method === "POST" && path === "/api/sessions/s9/messages") throw new ApiError(503, "the runtime is shutting down");
      if (method === "GET" && path.startsWith("/api/sessions/"))
        return { session: path.includes("s9") ? created : summary(1), agent: "build", messages: [] };
      if (path.startsWith("/api/agents")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    await screen.findAllByTestId("session-item");
    await user.click(screen.getByTestId("new-session"));
    await user.type(screen.getByTestId("prompt-input"), "Keep this text{Enter}");
    expect(await screen.findByText(/the runtime is shutting down/)).toBeInTheDocument();
    // The new session is open, not running, and what was typed is in its input.
    await waitFor(() => expect(screen.getByTestId("prompt-input")).toHaveValue("Keep this text"));
    expect(screen.queryByTestId("stop")).toBeNull();
    expect(fake.requests.filter((r) => r.method === "POST" && r.path === "/api/sessions")).toHaveLength(1);
  });
});
