import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { McpServerView, PluginView, SandboxView, ShareRecord } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { formatDate } from "../lib/format";
import type { UpdateStatus, Updates } from "../transport";
import { Settings } from "./Settings";
import { fakePlatform, fakeTransport, Providers } from "./testing";

function renderWith(sandbox: SandboxView) {
  const fake = fakeTransport((_m, path) => {
    if (path.startsWith("/api/settings"))
      return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [], sandbox };
    if (path.startsWith("/api/approvals")) return [];
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <Settings directory={null} onClose={() => undefined} onCreateAgent={() => undefined} />
    </Providers>,
  );
}

describe("Settings: the sandbox", () => {
  it("says commands run sandboxed, and how", async () => {
    renderWith({
      mode: "workspace-write",
      mechanism: "bubblewrap",
      available: true,
      detail: "bubblewrap (/usr/bin/bwrap): mount, PID, IPC, user and network namespaces",
      effect: "sandboxed",
      full: true,
      limits: [],
      network: "ask",
      env: "your environment minus secrets",
    });
    const s = await screen.findByTestId("settings-sandbox");
    expect(s).toHaveTextContent("run in the OS sandbox (bubblewrap, workspace-write)");
    expect(s).toHaveTextContent("network: ask");
    expect(s).toHaveTextContent("Environment: your environment minus secrets");
    expect(screen.queryByTestId("settings-sandbox-limits")).toBeNull();
  });

  it("names what the fallback cannot hold", async () => {
    renderWith({
      mode: "workspace-write",
      mechanism: "landlock+seccomp",
      available: true,
      detail: "Landlock ABI 7 and seccomp, the fallback: user namespaces do not work here",
      effect: "sandboxed",
      full: false,
      limits: ["other processes of your account are visible in /proc"],
      network: "ask",
      env: "",
    });
    const limits = await screen.findByTestId("settings-sandbox-limits");
    expect(limits).toHaveTextContent("ask again");
    expect(limits).toHaveTextContent("other processes of your account are visible in /proc");
  });

  it("says when this machine has none (Windows) and what that means", async () => {
    renderWith({
      mode: "workspace-write",
      network: "ask",
      available: false,
      detail: "this OS has no sandbox for shell commands yet",
      effect: "ask",
    });
    const s = await screen.findByTestId("settings-sandbox");
    expect(s).toHaveAttribute("data-effect", "ask");
    expect(s).toHaveTextContent("No OS sandbox on this machine (this OS has no sandbox for shell commands yet)");
    expect(s).toHaveTextContent("every shell command asks");
  });
});

describe("Settings: updates", () => {
  function renderUpdates(status: UpdateStatus | null, updatesCheck = true) {
    let saved: unknown = null;
    const fake = fakeTransport((method, path, body) => {
      if (path.startsWith("/api/settings")) {
        if (method === "PUT") saved = body;
        const check = method === "PUT" ? (body as { updates_check?: boolean }).updates_check : updatesCheck;
        return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [], updates_check: check };
      }
      return [];
    });
    const install = vi.fn(() => Promise.resolve());
    const updater: Updates | undefined = status
      ? {
          status: vi.fn(() => Promise.resolve(status)),
          check: vi.fn(() => Promise.resolve({ ...status, state: "available" as const, available: { version: "0.2.0", notes: "Faster diffs." } })),
          install,
        }
      : undefined;
    render(
      <Providers transport={fake.transport} platform={{ ...fakePlatform, kind: "desktop", updates: updater }}>
        <Settings directory={null} onClose={() => undefined} />
      </Providers>,
    );
    return { install, saved: () => saved };
  }
  const base: UpdateStatus = { current: "0.1.0", channel: true, installer: "self-update", state: "up-to-date" };

  it("turns the check at start off in the global config", async () => {
    const { saved } = renderUpdates(base);
    const box = await screen.findByTestId("updates-check");
    expect(box).toBeChecked();
    fireEvent.click(box);
    await waitFor(() => expect(saved()).toEqual({ updates_check: false, agent_models: {} }));
    await waitFor(() => expect(screen.getByTestId("updates-check")).not.toBeChecked());
  });

  it("installs only when the button is pressed", async () => {
    const { install } = renderUpdates(base);
    expect(await screen.findByTestId("update-state")).toHaveTextContent("You have the latest version.");
    expect(screen.queryByTestId("update-install")).toBeNull();
    fireEvent.click(screen.getByTestId("update-check-now"));
    expect(await screen.findByText("Mia Code 0.1.0. Mia Code 0.2.0 is available.")).toBeInTheDocument();
    expect(screen.getByText("Faster diffs.")).toBeInTheDocument();
    expect(install).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId("update-install"));
    await waitFor(() => expect(install).toHaveBeenCalledTimes(1));
  });

  it("sends a package-manager install to its package manager", async () => {
    renderUpdates({ ...base, installer: "package-manager", state: "available", available: { version: "0.2.0" } });
    expect(await screen.findByText(/update Mia Code there \(apt, dnf\)/)).toBeInTheDocument();
    expect(screen.queryByTestId("update-install")).toBeNull();
  });

  it("says when a build has no update channel, and offers no check", async () => {
    renderUpdates({ ...base, channel: false, installer: "none", state: "idle" });
    const s = await screen.findByTestId("update-state");
    expect(s).toHaveAttribute("data-state", "no-channel");
    expect(s).toHaveTextContent("This build has no update channel");
    expect(screen.queryByTestId("update-check-now")).toBeNull();
  });

  it("in a browser points at the command line instead", async () => {
    renderUpdates(null);
    expect(await screen.findByTestId("settings-updates")).toHaveTextContent("browser UI of mia-code serve");
  });
});

describe("Settings: my shares", () => {
  const share = (over: Partial<ShareRecord>): ShareRecord => ({
    id: "sh1",
    url: "https://share.example.org/s/sh1#k",
    server: "https://share.example.org",
    session_id: "s1",
    session_title: "Fix the parser",
    created_at: Date.now() - 2 * 3_600_000,
    updated_at: Date.now() - 10 * 60_000,
    expires_at: Date.UTC(2031, 0, 15, 12, 0),
    ...over,
  });

  function renderShares(initial: ShareRecord[]) {
    let shares = initial;
    const fake = fakeTransport((method, path) => {
      if (path.startsWith("/api/settings"))
        return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [] };
      if (method === "GET" && path === "/api/shares") return shares;
      if (method === "DELETE" && path.startsWith("/api/shares/")) {
        const id = decodeURIComponent(path.slice("/api/shares/".length));
        shares = shares.filter((s) => s.id !== id);
        return undefined;
      }
      return [];
    });
    const onOpenSession = vi.fn();
    render(
      <Providers transport={fake.transport}>
        <Settings directory={null} onClose={() => undefined} onOpenSession={onOpenSession} />
      </Providers>,
    );
    return { ...fake, onOpenSession };
  }

  it("lists every share, opens a local session, and revokes one after asking", async () => {
    const ctx = renderShares([
      share({}),
      share({
        id: "sh0",
        url: "https://share.example.org/s/sh0#k",
        session_id: null,
        session_deleted: true,
        session_title: "Old experiment",
        expires_at: null,
      }),
    ]);
    const section = await screen.findByTestId("my-shares");
    const rows = await within(section).findAllByTestId("my-share");
    expect(rows.map((r) => r.getAttribute("data-share"))).toEqual(["sh1", "sh0"]);
    expect(rows[0]).toHaveTextContent("Fix the parser");
    expect(rows[0]).toHaveTextContent("2 h ago");
    expect(rows[0]).toHaveTextContent("10 min ago");
    expect(rows[0]).toHaveTextContent(formatDate(Date.UTC(2031, 0, 15, 12, 0)));
    const link = within(rows[0]!).getByRole("link", { name: "https://share.example.org/s/sh1#k" });
    expect(link).toHaveAttribute("href", "https://share.example.org/s/sh1#k");
    expect(link).toHaveAttribute("rel", "noopener noreferrer");
    expect(rows[1]).toHaveTextContent("Old experiment (deleted locally)");
    expect(rows[1]).toHaveTextContent("never");
    expect(within(rows[1]!).queryByTestId("my-share-open")).toBeNull();

    fireEvent.click(within(rows[0]!).getByTestId("my-share-open"));
    expect(ctx.onOpenSession).toHaveBeenCalledWith("s1");

    // Revoking the locally deleted one: asked first, then DELETE by share id and the list again.
    fireEvent.click(within(rows[1]!).getByRole("button", { name: "Revoke the share of Old experiment" }));
    expect(ctx.requests.some((r) => r.method === "DELETE")).toBe(false);
    fireEvent.click(within(rows[1]!).getByTestId("confirm-revoke-share"));
    await waitFor(() => expect(ctx.requests).toContainEqual({ method: "DELETE", path: "/api/shares/sh0", body: undefined }));
    await waitFor(() => expect(within(section).getAllByTestId("my-share")).toHaveLength(1));
    expect(ctx.requests.filter((r) => r.method === "GET" && r.path === "/api/shares")).toHaveLength(2);
    expect(await screen.findByTestId("toast")).toHaveTextContent("Share of “Old experiment” revoked");
  });

  it("says when nothing was shared", async () => {
    renderShares([]);
    const empty = await screen.findByText("You have not shared any session.");
    expect(screen.getByTestId("my-shares")).toContainElement(empty);
    expect(screen.queryByTestId("my-share")).toBeNull();
  });
});

describe("Settings: MCP servers", () => {
  const servers: McpServerView[] = [
    {
      name: "fixture",
      source: "/proj/.mcp.json",
      transport: "stdio: python3 server.py",
      state: "ready",
      server: "fixture-server 1.2.0",
      tools: ["echo", "picture"],
    },
    {
      name: "big",
      source: "/h/config.json",
      transport: "http: https://mcp.example.org/mcp",
      state: "ready",
      tools: ["a", "b", "c", "d", "e", "f"],
    },
    {
      name: "broken",
      source: "/proj/.mcp.json",
      transport: "stdio: node crash.js",
      state: "failed",
      error: "exited with status 1 before initialize",
      stderr: ["Error: Cannot find module 'x'", "    at require (node:internal)"],
    },
    {
      name: "stranger",
      source: "/proj/.mcp.json",
      transport: "stdio: ./run.sh",
      state: "untrusted",
      error: "the workspace is not trusted: run `mia-code permissions trust` to start its servers",
    },
  ];

  function renderMcp(answer: () => unknown, directory: string | null = "/proj") {
    const fake = fakeTransport((_m, path) => {
      if (path.startsWith("/api/settings"))
        return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [] };
      if (path.startsWith("/api/permissions")) return { agent: "build", rules: [], trusted: true, warnings: [] };
      if (path.startsWith("/api/mcp")) return answer();
      return [];
    });
    render(
      <Providers transport={fake.transport}>
        <Settings directory={directory} onClose={() => undefined} />
      </Providers>,
    );
    return { ...fake, mcpRequests: () => fake.requests.filter((r) => r.path.startsWith("/api/mcp")) };
  }

  /** An answer the test releases: the loading state stays until then. */
  function deferred<T>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  it("loads the project's servers on open, saying they are starting meanwhile", async () => {
    const answer = deferred<McpServerView[]>();
    const ctx = renderMcp(() => answer.promise, "/home/me/my proj");
    const section = await screen.findByTestId("mcp-servers");
    expect(within(section).getByRole("heading")).toHaveTextContent("MCP servers");
    expect(within(section).getByRole("status")).toHaveTextContent("Starting servers…");
    expect(within(section).getByTestId("mcp-refresh")).toBeDisabled();
    // The request goes out from an effect, after the first paint.
    await waitFor(() =>
      expect(ctx.mcpRequests()).toEqual([{ method: "GET", path: "/api/mcp?directory=%2Fhome%2Fme%2Fmy+proj", body: undefined }]),
    );
    answer.resolve(servers);
    const rows = await within(section).findAllByTestId("mcp-server");
    expect(within(section).queryByText("Starting servers…")).toBeNull();
    expect(rows.map((r) => r.getAttribute("data-server"))).toEqual(["fixture", "big", "broken", "stranger"]);
    expect(rows[0]).toHaveTextContent("fixture");
    expect(rows[0]).toHaveTextContent("fixture-server 1.2.0");
    expect(rows[0]).toHaveTextContent("stdio: python3 server.py");
    expect(rows[0]).toHaveTextContent("/proj/.mcp.json");
    expect(within(section).getByTestId("mcp-state-fixture")).toHaveTextContent("ready");
    expect(within(section).getByTestId("mcp-state-fixture")).toHaveClass("badge-completed");
    expect(within(section).getByTestId("mcp-state-broken")).toHaveTextContent("failed");
    expect(within(section).getByTestId("mcp-state-broken")).toHaveClass("badge-error");
    expect(within(section).getByTestId("mcp-state-stranger")).toHaveTextContent("untrusted");
    // Few tools inline, many folded into a count.
    expect(within(section).getByTestId("mcp-tools-fixture")).toHaveTextContent(/^echo, picture$/);
    const many = within(section).getByTestId("mcp-tools-big");
    expect(many.querySelector("details summary")).toHaveTextContent("6 tools");
    expect(many.querySelector("details")).toHaveTextContent("a, b, c, d, e, f");
    expect(within(section).getByTestId("mcp-tools-broken")).toHaveTextContent("none");
  });

  it("shows a failed server's error and stderr, and how to trust an untrusted workspace", async () => {
    renderMcp(() => servers);
    const broken = await screen.findByTestId("mcp-detail-broken");
    expect(broken).toHaveTextContent("exited with status 1 before initialize");
    expect(within(broken).getByLabelText("stderr of broken")).toHaveTextContent(
      "Error: Cannot find module 'x' at require (node:internal)",
    );
    const stranger = screen.getByTestId("mcp-detail-stranger");
    expect(stranger).toHaveTextContent("run `mia-code permissions trust` to start its servers");
    expect(screen.queryByTestId("mcp-detail-fixture")).toBeNull();
  });

  it("Refresh asks again and shows the new states", async () => {
    let calls = 0;
    const ctx = renderMcp(() => {
      calls += 1;
      return calls === 1 ? [servers[2]] : [{ ...servers[2]!, state: "ready", error: null, stderr: [], tools: ["fixed"] }];
    });
    expect(await screen.findByTestId("mcp-state-broken")).toHaveTextContent("failed");
    fireEvent.click(screen.getByTestId("mcp-refresh"));
    await waitFor(() => expect(screen.getByTestId("mcp-state-broken")).toHaveTextContent("ready"));
    expect(ctx.mcpRequests()).toHaveLength(2);
    expect(screen.getByTestId("mcp-tools-broken")).toHaveTextContent("fixed");
    expect(screen.queryByTestId("mcp-detail-broken")).toBeNull();
  });

  it("says how to add servers when there are none", async () => {
    renderMcp(() => []);
    const empty = await screen.findByTestId("mcp-empty");
    expect(empty).toHaveTextContent(
      "No MCP servers. Add them under mcp in your config or in the project's .mcp.json.",
    );
    expect(screen.queryByTestId("mcp-table")).toBeNull();
  });

  it("shows a failed request as an alert", async () => {
    renderMcp(() => Promise.reject(new ApiError(500, "mcp: cannot read /proj/.mcp.json: invalid JSON at line 3")));
    const alert = await within(await screen.findByTestId("mcp-servers")).findByRole("alert");
    expect(alert).toHaveTextContent("mcp: cannot read /proj/.mcp.json: invalid JSON at line 3");
    expect(screen.queryByText("Starting servers…")).toBeNull();
    expect(screen.getByTestId("mcp-refresh")).toBeEnabled();
  });

  it("has no section without a project", async () => {
    const ctx = renderMcp(() => servers, null);
    await screen.findByTestId("my-shares");
    expect(screen.queryByTestId("mcp-servers")).toBeNull();
    expect(ctx.mcpRequests()).toEqual([]);
  });
});

describe("Settings: plugins", () => {
  const plugins: PluginView[] = [
    {
      entry: "mia-code-plugin-example@^1.0.0",
      name: "mia-code-plugin-example",
      source: "/h/config.json",
      state: "loaded",
      version: "1.0.0",
      tools: ["example_echo", "example_time"],
      hooks: ["tool.before", "session.start"],
    },
    {
      entry: "./plugins/many",
      name: "many",
      source: "/proj/mia-code.json",
      state: "loaded",
      tools: ["t1", "t2", "t3", "t4", "t5"],
      hooks: [],
    },
    {
      entry: "./plugins/crash",
      name: "crash",
      source: "/proj/mia-code.json",
      state: "failed",
      error: "the plugin exited before it answered: SyntaxError: Unexpected token",
    },
    {
      entry: "mia-code-plugin-old@^0.1.0",
      name: "mia-code-plugin-old",
      source: "/h/config.json",
      state: "refused",
      version: "0.1.0",
      error: "speaks plugin protocol 0, this mia-code speaks 1",
    },
    {
      entry: "mia-code-plugin-net@^2.0.0",
      name: "mia-code-plugin-net",
      source: "/h/config.json",
      state: "skipped",
      error: "Plugin mia-code-plugin-net not cached, skipping (offline mode)",
    },
    {
      entry: "./tools/local",
      name: "local",
      source: "/proj/mia-code.json",
      state: "untrusted",
      error: "the workspace is not trusted: run `mia-code permissions trust` to load its plugins",
    },
  ];

  function renderPlugins(answer: () => unknown, directory: string | null = "/proj") {
    const fake = fakeTransport((_m, path) => {
      if (path.startsWith("/api/settings"))
        return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [] };
      if (path.startsWith("/api/permissions")) return { agent: "build", rules: [], trusted: true, warnings: [] };
      if (path.startsWith("/api/plugins")) return answer();
      return [];
    });
    render(
      <Providers transport={fake.transport}>
        <Settings directory={directory} onClose={() => undefined} />
      </Providers>,
    );
    return { ...fake, pluginRequests: () => fake.requests.filter((r) => r.path.startsWith("/api/plugins")) };
  }

  it("loads the project's plugins on open, saying so meanwhile", async () => {
    let release!: (v: PluginView[]) => void;
    const answer = new Promise<PluginView[]>((res) => (release = res));
    const ctx = renderPlugins(() => answer, "/home/me/my proj");
    const section = await screen.findByTestId("plugins");
    expect(within(section).getByRole("heading")).toHaveTextContent("Plugins");
    expect(within(section).getByRole("status")).toHaveTextContent("Loading plugins…");
    expect(section).toHaveAttribute("aria-busy", "true");
    expect(within(section).getByTestId("plugins-refresh")).toBeDisabled();
    // The request goes out from an effect, after the first paint.
    await waitFor(() =>
      expect(ctx.pluginRequests()).toEqual([
        { method: "GET", path: "/api/plugins?directory=%2Fhome%2Fme%2Fmy+proj", body: undefined },
      ]),
    );
    release(plugins);
    const rows = await within(section).findAllByTestId("plugin");
    expect(within(section).queryByText("Loading plugins…")).toBeNull();
    expect(rows.map((r) => r.getAttribute("data-plugin"))).toEqual([
      "mia-code-plugin-example",
      "many",
      "crash",
      "mia-code-plugin-old",
      "mia-code-plugin-net",
      "local",
    ]);
    expect(rows[0]).toHaveTextContent("mia-code-plugin-example 1.0.0");
    expect(rows[0]).toHaveTextContent("mia-code-plugin-example@^1.0.0");
    expect(rows[0]).toHaveTextContent("/h/config.json");
    expect(within(section).getByTestId("plugin-state-mia-code-plugin-example")).toHaveTextContent("loaded");
    expect(within(section).getByTestId("plugin-state-mia-code-plugin-example")).toHaveClass("badge-completed");
    expect(within(section).getByTestId("plugin-state-crash")).toHaveTextContent("failed");
    expect(within(section).getByTestId("plugin-state-crash")).toHaveClass("badge-error");
    expect(within(section).getByTestId("plugin-state-mia-code-plugin-old")).toHaveTextContent("refused");
    expect(within(section).getByTestId("plugin-state-mia-code-plugin-net")).toHaveTextContent("skipped");
    expect(within(section).getByTestId("plugin-state-local")).toHaveTextContent("untrusted");
    expect(within(section).getByTestId("plugin-state-local")).toHaveClass("badge-blocked");
    expect(within(section).getByTestId("plugin-tools-mia-code-plugin-example")).toHaveTextContent(
      /^example_echo, example_time$/,
    );
    expect(within(section).getByTestId("plugin-hooks-mia-code-plugin-example")).toHaveTextContent(
      /^tool\.before, session\.start$/,
    );
    const many = within(section).getByTestId("plugin-tools-many");
    expect(many.querySelector("details summary")).toHaveTextContent("5 tools");
    expect(many.querySelector("details")).toHaveTextContent("t1, t2, t3, t4, t5");
    expect(within(section).getByTestId("plugin-hooks-many")).toHaveTextContent("none");
    expect(within(section).getByTestId("plugin-tools-crash")).toHaveTextContent("none");
  });

  it("shows why a plugin failed, was refused, skipped or is untrusted", async () => {
    renderPlugins(() => plugins);
    expect(await screen.findByTestId("plugin-detail-crash")).toHaveTextContent(
      "the plugin exited before it answered: SyntaxError: Unexpected token",
    );
    expect(screen.getByTestId("plugin-detail-crash").querySelector("p")).toHaveClass("error-text");
    expect(screen.getByTestId("plugin-detail-mia-code-plugin-old")).toHaveTextContent(
      "speaks plugin protocol 0, this mia-code speaks 1",
    );
    expect(screen.getByTestId("plugin-detail-mia-code-plugin-net")).toHaveTextContent(
      "Plugin mia-code-plugin-net not cached, skipping (offline mode)",
    );
    expect(screen.getByTestId("plugin-detail-local")).toHaveTextContent(
      "run `mia-code permissions trust` to load its plugins",
    );
    expect(screen.queryByTestId("plugin-detail-mia-code-plugin-example")).toBeNull();
    expect(screen.queryByTestId("plugin-detail-many")).toBeNull();
  });

  it("Refresh asks again and shows the new states", async () => {
    let calls = 0;
    const ctx = renderPlugins(() => {
      calls += 1;
      return calls === 1
        ? [plugins[2]]
        : [{ ...plugins[2]!, state: "loaded", version: "0.3.0", error: null, tools: ["fixed"], hooks: ["chat.message"] }];
    });
    expect(await screen.findByTestId("plugin-state-crash")).toHaveTextContent("failed");
    fireEvent.click(screen.getByTestId("plugins-refresh"));
    await waitFor(() => expect(screen.getByTestId("plugin-state-crash")).toHaveTextContent("loaded"));
    expect(ctx.pluginRequests()).toEqual([
      { method: "GET", path: "/api/plugins?directory=%2Fproj", body: undefined },
      { method: "GET", path: "/api/plugins?directory=%2Fproj", body: undefined },
    ]);
    expect(screen.getByTestId("plugin-tools-crash")).toHaveTextContent("fixed");
    expect(screen.getByTestId("plugin-hooks-crash")).toHaveTextContent("chat.message");
    expect(screen.getByTestId("plugin")).toHaveTextContent("crash 0.3.0");
    expect(screen.queryByTestId("plugin-detail-crash")).toBeNull();
  });

  it("says how to add plugins when there are none", async () => {
    renderPlugins(() => []);
    const empty = await screen.findByTestId("plugins-empty");
    expect(empty).toHaveTextContent(
      "No plugins. List them under plugin in your config (npm packages like name@^1.0.0, or local paths).",
    );
    expect(screen.queryByTestId("plugins-table")).toBeNull();
  });

  it("shows a failed request as an alert", async () => {
    renderPlugins(() => Promise.reject(new ApiError(500, "plugin: cannot run npm: No such file or directory")));
    const alert = await within(await screen.findByTestId("plugins")).findByRole("alert");
    expect(alert).toHaveTextContent("plugin: cannot run npm: No such file or directory");
    expect(screen.queryByText("Loading plugins…")).toBeNull();
    expect(screen.getByTestId("plugins-refresh")).toBeEnabled();
  });

  it("has no section without a project", async () => {
    const ctx = renderPlugins(() => plugins, null);
    await screen.findByTestId("my-shares");
    expect(screen.queryByTestId("plugins")).toBeNull();
    expect(ctx.pluginRequests()).toEqual([]);
  });
});

describe("Settings: appearance", () => {
  it("the theme is a radio group: picking Dark switches the window's tokens and is remembered; Follow the system forgets it", async () => {
    localStorage.clear();
    renderWith({
      mode: "workspace-write",
      network: "ask",
      mechanism: "landlock+seccomp",
      available: true,
      detail: "Landlock ABI 7",
      effect: "sandboxed",
    });
    const group = await screen.findByTestId("theme-choice");
    expect(within(group).getAllByRole("radio")).toHaveLength(3);
    expect(within(group).getByRole("radio", { name: "Follow the system" })).toBeChecked();
    fireEvent.click(within(group).getByRole("radio", { name: "Dark" }));
    await waitFor(() => expect(document.documentElement.dataset.theme).toBe("dark"));
    expect(within(group).getByRole("radio", { name: "Dark" })).toBeChecked();
    expect(localStorage.getItem("mia-code.theme")).toBe("dark");
    fireEvent.click(within(group).getByRole("radio", { name: "Follow the system" }));
    await waitFor(() => expect(localStorage.getItem("mia-code.theme")).toBeNull());
    expect(document.documentElement.dataset.themeChoice).toBe("system");
  });
});

describe("Settings: loading and errors", () => {
  it("says it is loading, then why the settings could not be read, with Try again", async () => {
    let fail = true;
    const fake = fakeTransport((_m, path) => {
      if (path.startsWith("/api/settings")) {
        if (fail) return Promise.reject(new ApiError(500, "config.json: expected `,` at line 3"));
        return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [] };
      }
      if (path.startsWith("/api/approvals")) return [];
      if (path.startsWith("/api/shares")) return [];
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <Settings directory={null} onClose={() => undefined} />
      </Providers>,
    );
    expect(screen.getByTestId("settings-loading")).toHaveTextContent("Loading…");
    const error = await screen.findByTestId("settings-error", {}, { timeout: 5000 });
    expect(error).toHaveTextContent("Could not read the settings: config.json: expected `,` at line 3");
    fail = false;
    fireEvent.click(within(error).getByRole("button", { name: "Try again" }));
    await waitFor(() => expect(screen.queryByTestId("settings-error")).toBeNull());
    expect(await screen.findByRole("heading", { name: "Providers" })).toBeInTheDocument();
  });
});
