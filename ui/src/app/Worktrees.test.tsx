import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { WorktreeCreated, WorktreeView } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { App } from "./App";
import { Worktrees } from "./Worktrees";
import { fakePlatform, fakeTransport, Providers, type Handler } from "./testing";

const HOUR = 3_600_000;

function wt(name: string, over: Partial<WorktreeView> = {}): WorktreeView {
  return {
    name,
    path: `/proj/.mia/worktrees/${name}`,
    branch: `mia/${name}`,
    base: "0123456789abcdef0123456789abcdef01234567",
    base_ref: "main",
    head: "0123456789abcdef0123456789abcdef01234567",
    created_at: Date.now() - 2 * HOUR,
    size_bytes: 1536,
    dirty: [],
    ahead: 0,
    merged: true,
    sessions: [],
    state: "ok",
    recorded_branch: `mia/${name}`,
    ...over,
  };
}

const busy = wt("brave-otter", {
  dirty: ["src/a.ts", "src/b.ts", "README.md"],
  ahead: 2,
  merged: false,
  size_bytes: 3 * 1024 * 1024,
  sessions: [{ id: "s1", title: "Fix the parser", status: "busy" }],
});
const clean = wt("calm-heron");

function setup(handler: Handler, props: Partial<Parameters<typeof Worktrees>[0]> = {}) {
  const fake = fakeTransport(handler);
  const callbacks = { onBack: vi.fn(), onCompare: vi.fn(), onOpenSession: vi.fn() };
  render(
    <Providers transport={fake.transport}>
      <Worktrees directory="/proj" {...callbacks} {...props} />
    </Providers>,
  );
  return { ...fake, ...callbacks, user: userEvent.setup() };
}

const row = (name: string) =>
  screen.getAllByTestId("worktree-row").find((r) => r.getAttribute("data-name") === name)!;

describe("worktrees list", () => {
  it("shows each worktree with branch, base, age, size, state and its sessions", async () => {
    const { requests, user, onOpenSession, onCompare } = setup((m, p) =>
      m === "GET" && p.startsWith("/api/worktrees?") ? [busy, clean] : undefined,
    );
    const rows = await screen.findAllByTestId("worktree-row");
    expect(requests[0]).toEqual({ method: "GET", path: "/api/worktrees?directory=%2Fproj", body: undefined });
    expect(rows).toHaveLength(2);
    expect(screen.getByTestId("worktrees")).toBeInTheDocument();
    const b = row("brave-otter");
    expect(b).toHaveTextContent("brave-otter");
    expect(b).toHaveTextContent("mia/brave-otter");
    expect(b).toHaveTextContent("main @ 0123456");
    expect(b).toHaveTextContent("2 h ago");
    expect(b).toHaveTextContent("3.0 MB");
    const state = within(b).getByTestId("worktree-state");
    expect(state).toHaveTextContent("3 uncommitted");
    expect(state).toHaveTextContent("2 commits ahead");
    expect(state).toHaveTextContent("unmerged work");
    expect(within(state).getByText("3 uncommitted")).toHaveAttribute("title", "src/a.ts\nsrc/b.ts\nREADME.md");
    expect(b).toHaveTextContent("Fix the parser · running");

    const c = within(row("calm-heron"));
    expect(c.getByTestId("worktree-state")).toHaveTextContent("merged");
    expect(c.getByTestId("worktree-state")).toHaveTextContent("clean");
    expect(c.getByTestId("worktree-state")).not.toHaveTextContent("unmerged");
    expect(row("calm-heron")).toHaveTextContent("1.5 KB");
    expect(row("calm-heron")).toHaveTextContent("none");

    await user.click(within(b).getByTestId("worktree-session"));
    expect(onOpenSession).toHaveBeenCalledWith("s1");
    await user.click(c.getByTestId("worktree-compare"));
    expect(onCompare).toHaveBeenCalledWith("calm-heron", "main");
  });

  it("an empty list says so", async () => {
    setup(() => []);
    expect(await screen.findByTestId("worktrees-empty")).toBeInTheDocument();
    expect(screen.getByTestId("open-compare")).toBeDisabled();
  });
});

describe("create", () => {
  it("streams the start-script log while it runs, then shows the result", async () => {
    let answer!: (c: WorktreeCreated) => void;
    const created: WorktreeCreated = {
      name: "quick-fox",
      path: "/proj/.mia/worktrees/quick-fox",
      branch: "mia/quick-fox",
      base: "fedcba9876543210fedcba9876543210fedcba98",
      head: "fedcba9876543210fedcba9876543210fedcba98",
      included: [".env", "config/local.json"],
      submodules: false,
      scripts: [
        { command: "npm ci", exit_code: 0, cancelled: false, duration_ms: 2300, output: "" },
        { command: "npm run build", exit_code: 2, cancelled: false, duration_ms: 800, output: "error" },
      ],
    };
    const { requests, user, emit } = setup((m, p) => {
      if (m === "GET") return [];
      if (m === "POST" && p === "/api/worktrees") return new Promise<WorktreeCreated>((r) => (answer = r));
      return undefined;
    });
    await screen.findByTestId("worktrees-empty");
    const form = screen.getByTestId("worktree-create");
    await user.type(within(form).getByTestId("worktree-name"), "quick-fox");
    await user.type(within(form).getByTestId("worktree-base"), "develop");
    await user.click(screen.getByTestId("worktree-create-submit"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees",
        body: { directory: "/proj", name: "quick-fox", base: "develop" },
      }),
    );
    expect(screen.getByTestId("worktree-create-submit")).toBeDisabled();

    const line = (text: string, over: { name?: string; directory?: string; stderr?: boolean } = {}) =>
      emit({
        type: "worktree_log",
        directory: over.directory ?? "/proj",
        name: over.name ?? "quick-fox",
        command: "npm ci",
        line: text,
        stderr: over.stderr ?? false,
      });
    line("added 120 packages");
    line("npm warn deprecated", { stderr: true });
    line("another project", { directory: "/elsewhere" });
    line("another worktree", { name: "other" });
    const log = await screen.findByTestId("worktree-log");
    await waitFor(() => expect(log).toHaveTextContent("added 120 packages"));
    expect(log).toHaveTextContent("npm warn deprecated");
    expect(within(log).getByText("npm warn deprecated")).toHaveClass("wt-log-err");
    expect(log).not.toHaveTextContent("another");
    expect(screen.queryByTestId("worktree-result")).not.toBeInTheDocument();

    answer(created);
    const result = await screen.findByTestId("worktree-result");
    expect(result).toHaveTextContent("Created quick-fox on branch mia/quick-fox from fedcba9");
    expect(within(result).getByTestId("worktree-included")).toHaveTextContent(".envconfig/local.json");
    const scripts = within(result).getByTestId("worktree-scripts");
    expect(scripts).toHaveTextContent("npm ci — passed (exit 0) in 2.3 s");
    expect(scripts).toHaveTextContent("npm run build — failed (exit 2) in 800 ms");
    expect(within(result).getByTestId("worktree-script-failed")).toHaveTextContent("the worktree was kept");
    // The log stays for reading; the list is reloaded.
    expect(screen.getByTestId("worktree-log")).toHaveTextContent("added 120 packages");
    await waitFor(() => expect(requests.filter((r) => r.method === "GET")).toHaveLength(2));
  });

  it("without a name, an empty body part is left out and errors are shown", async () => {
    const { requests, user } = setup((m) => {
      if (m === "GET") return [];
      throw new ApiError(400, "base 'nope' is not a commit");
    });
    await screen.findByTestId("worktrees-empty");
    await user.click(screen.getByTestId("worktree-create-submit"));
    expect(await screen.findByTestId("worktree-create-error")).toHaveTextContent("base 'nope' is not a commit");
    expect(requests).toContainEqual({ method: "POST", path: "/api/worktrees", body: { directory: "/proj" } });
  });
});

describe("remove and reset", () => {
  it("a refused remove (409) shows what would be lost and offers remove anyway", async () => {
    const message =
      "worktree brave-otter was kept: removing it would lose 3 uncommitted change(s): src/a.ts, src/b.ts, README.md; promote it, or pass --force";
    let list = [busy, clean];
    const { requests, user } = setup((m, p) => {
      if (m === "GET") return list;
      if (m === "DELETE" && p.includes("force=false")) throw new ApiError(409, message, { error: message });
      if (m === "DELETE") {
        list = [clean];
        return busy;
      }
      return undefined;
    });
    await user.click(within((await screen.findAllByTestId("worktree-row"))[0]!).getByTestId("worktree-remove"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "DELETE",
        path: "/api/worktrees/brave-otter?directory=%2Fproj&force=false",
        body: undefined,
      }),
    );
    const dialog = await screen.findByTestId("worktree-remove-confirm");
    expect(within(dialog).getByTestId("worktree-remove-message")).toHaveTextContent(message);
    expect(screen.getAllByTestId("worktree-row")).toHaveLength(2);
    await user.click(within(dialog).getByTestId("worktree-remove-force"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "DELETE",
        path: "/api/worktrees/brave-otter?directory=%2Fproj&force=true",
        body: undefined,
      }),
    );
    await waitFor(() => expect(screen.getAllByTestId("worktree-row")).toHaveLength(1));
    expect(screen.queryByTestId("worktree-remove-confirm")).not.toBeInTheDocument();
    expect(screen.getByTestId("worktree-row")).toHaveAttribute("data-name", "calm-heron");
  });

  it("a merged worktree is removed without asking", async () => {
    let list = [clean];
    const { requests, user } = setup((m) => {
      if (m === "GET") return list;
      list = [];
      return clean;
    });
    await user.click(within(await screen.findByTestId("worktree-row")).getByTestId("worktree-remove"));
    expect(await screen.findByTestId("worktrees-empty")).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
    expect(screen.queryByTestId("worktree-remove-confirm")).not.toBeInTheDocument();
  });

  it("reset asks first, saying what is dropped, then posts the directory", async () => {
    const { requests, user } = setup((m) => (m === "GET" ? [busy] : undefined));
    await user.click(within(await screen.findByTestId("worktree-row")).getByTestId("worktree-reset"));
    const dialog = screen.getByTestId("worktree-reset-confirm");
    expect(dialog).toHaveTextContent("3 uncommitted changes and 2 commits of its own are dropped");
    expect(requests.some((r) => r.method === "POST")).toBe(false);
    await user.click(within(dialog).getByTestId("worktree-reset-confirm-button"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees/brave-otter/reset",
        body: { directory: "/proj" },
      }),
    );
    expect(dialog).toHaveTextContent("A copy goes to the worktree trash first");
  });

  it("a moved or vanished worktree, or one on another branch, says so and cannot be reset", async () => {
    const gone = wt("gone-one", { state: "missing" });
    const other = wt("other-one", { state: "branch-changed", branch: "feature", recorded_branch: "mia/other-one" });
    setup((m) => (m === "GET" ? [gone, other, clean] : undefined));
    await screen.findAllByTestId("worktree-row");
    expect(within(row("gone-one")).getByTestId("worktree-missing")).toHaveTextContent("folder missing");
    expect(within(row("other-one")).getByTestId("worktree-branch-changed")).toHaveAttribute(
      "title",
      expect.stringContaining("Mia Code made it on mia/other-one; feature is checked out there now"),
    );
    expect(within(row("gone-one")).getByTestId("worktree-reset")).toBeDisabled();
    expect(within(row("other-one")).getByTestId("worktree-reset")).toBeDisabled();
    expect(within(row("calm-heron")).getByTestId("worktree-reset")).toBeEnabled();
  });
});

describe("trash", () => {
  it("is read when opened, lists what was kept and restores an entry (into a chosen folder)", async () => {
    const entry = {
      id: "1700-brave-otter-remove",
      worktree: "brave-otter",
      operation: "remove" as const,
      created_at: Date.now() - HOUR,
      root: "/proj/.mia/worktrees/brave-otter",
      files: [".env", "logs/run.log"],
      refs: ["refs/heads/mia/brave-otter"],
      submodule_commits: [],
    };
    const { requests, user } = setup((m, p) => {
      if (m === "GET" && p.startsWith("/api/worktrees/trash?")) return [entry];
      if (m === "POST" && p.endsWith("/restore")) return { trash: entry, into: "/tmp/back" };
      if (m === "GET") return [clean];
      return undefined;
    });
    await screen.findAllByTestId("worktree-row");
    expect(requests.some((r) => r.path.startsWith("/api/worktrees/trash"))).toBe(false);
    const trash = screen.getByTestId("worktree-trash");
    await user.click(within(trash).getByText("Trash"));
    const item = await within(trash).findByTestId("worktree-trash-entry");
    expect(item).toHaveTextContent("brave-otter removed");
    expect(item).toHaveTextContent("2 file(s)");
    expect(item).toHaveTextContent("refs/heads/mia/brave-otter");
    await user.type(within(trash).getByTestId("worktree-trash-into"), "/tmp/back");
    await user.click(within(item).getByTestId("worktree-trash-restore"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees/trash/1700-brave-otter-remove/restore",
        body: { directory: "/proj", into: "/tmp/back" },
      }),
    );
    expect(await screen.findByText(/Restored 2 file\(s\) into \/tmp\/back; its commits are on branch/)).toBeInTheDocument();
  });
});

describe("try N ways", () => {
  it("starts N attempts with one prompt and lists their sessions", async () => {
    const attempt = (i: number) => ({
      worktree: { ...wt(`try-${i}`), included: [], submodules: false, scripts: [] },
      session: {
        id: `t${i}`,
        title: `Add caching (try-${i})`,
        slug: `t${i}`,
        directory: `/proj/.mia/worktrees/try-${i}`,
        project_id: "p",
        status: "busy",
        created_at: 1,
        updated_at: 1,
        version: "0.1",
      },
    });
    const { requests, user, onOpenSession, onCompare } = setup((m, p) => {
      if (m === "GET") return [];
      if (p === "/api/worktrees/try") return { attempts: [attempt(1), attempt(2), attempt(3)] };
      return undefined;
    });
    await screen.findByTestId("worktrees-empty");
    expect(screen.getByTestId("worktree-try-submit")).toBeDisabled();
    await user.type(screen.getByTestId("worktree-try-text"), "Add caching");
    await user.selectOptions(screen.getByTestId("worktree-try-n"), "3");
    await user.click(screen.getByTestId("worktree-try-submit"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees/try",
        body: { directory: "/proj", text: "Add caching", n: 3 },
      }),
    );
    const items = await screen.findAllByTestId("worktree-try-attempt");
    expect(items.map((i) => i.textContent)).toEqual([
      "try-1 — Add caching (try-1)",
      "try-2 — Add caching (try-2)",
      "try-3 — Add caching (try-3)",
    ]);
    await user.click(within(items[1]!).getByRole("button"));
    expect(onOpenSession).toHaveBeenCalledWith("t2");
    await user.click(screen.getByRole("button", { name: "Compare try-1 and try-2" }));
    expect(onCompare).toHaveBeenCalledWith("try-1", "try-2");
  });
});

describe("in the app", () => {
  it("the project bar's Worktrees button and /worktrees open the view; Compare opens the comparison", async () => {
    const fake = fakeTransport((m, p) => {
      if (p === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (p.startsWith("/api/sessions?")) return [];
      if (p.startsWith("/api/agents")) return [];
      if (p.startsWith("/api/worktrees?")) return [clean];
      if (p.startsWith("/api/worktrees/compare")) return new Promise(() => undefined);
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    await user.click(await screen.findByTestId("open-worktrees"));
    expect(await screen.findByTestId("worktree-row")).toHaveTextContent("calm-heron");
    await user.click(screen.getByTestId("worktree-compare"));
    expect(await screen.findByTestId("compare")).toBeInTheDocument();
    await waitFor(() =>
      expect(fake.requests.map((r) => r.path)).toContain(
        "/api/worktrees/compare?directory=%2Fproj&a=calm-heron&b=main&check=false&hunks=true",
      ),
    );
    await user.click(screen.getByTestId("compare-back"));
    expect(await screen.findByTestId("worktrees-view")).toBeInTheDocument();
    await user.click(screen.getByTestId("worktrees-back"));
    // Back in the draft: the slash command opens it again.
    const input = await screen.findByTestId("prompt-input");
    await user.type(input, "/worktrees{Enter}");
    expect(await screen.findByTestId("worktrees-view")).toBeInTheDocument();
  });
});
