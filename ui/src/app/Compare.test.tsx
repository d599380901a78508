import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AttemptFileStatus, AttemptView, ComparisonView, FileDiff, PromotedView, WorktreeView } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { Compare } from "./Compare";
import { fakeTransport, Providers, type Handler } from "./testing";

const BASE = "abcdef0123456789abcdef0123456789abcdef01";

function attempt(name: string, files: AttemptView["files"], over: Partial<AttemptView> = {}): AttemptView {
  return {
    name,
    path: `/proj/.mia/worktrees/${name}`,
    files,
    stats: {
      files: files.length,
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
    },
    usage: { sessions: 1, input_tokens: 12_400, output_tokens: 800, cost: 0.042, duration_ms: 95_000, steps: 7 },
    ...over,
  };
}

const f = (path: string, additions = 1, deletions = 0, status: AttemptFileStatus = "modified") => ({
  path,
  status,
  additions,
  deletions,
  binary: false,
});

const comparison: ComparisonView = {
  base: BASE,
  a: attempt("alpha", [f("src/shared.ts", 2, 1), f("src/only-a.ts", 3, 0, "added"), f("same.txt")]),
  b: attempt("beta", [f("src/shared.ts", 1, 1), f("src/only-b.ts", 1, 0, "added"), f("same.txt")], {
    usage: { sessions: 2, input_tokens: 500, output_tokens: 90, cost: null, duration_ms: 800, steps: 2 },
    check: { command: "npm test", exit_code: 1, cancelled: false, duration_ms: 4200, output: "1 failing: parses dates" },
  }),
  between: [
    { path: "same.txt", status: "same" },
    { path: "src/only-a.ts", status: "only_a" },
    { path: "src/only-b.ts", status: "only_b" },
    { path: "src/shared.ts", status: "differ" },
  ],
};

const diffText = (path: string, minus: string, plus: string) =>
  [
    `diff --git a/${path} b/${path}`,
    "index 1111111..2222222 100644",
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1,2 +1,2 @@",
    " keep",
    `-${minus}`,
    `+${plus}`,
    "",
  ].join("\n");

/** The same change as the server sends it: files and hunks. */
const fileDiff = (path: string, minus: string, plus: string): FileDiff => ({
  file: path,
  status: "modified",
  before: `keep\n${minus}\n`,
  after: `keep\n${plus}\n`,
  additions: 1,
  deletions: 1,
  hunks: [
    {
      startBefore: 1,
      linesBefore: 2,
      startAfter: 1,
      linesAfter: 2,
      lines: [
        { type: "context", content: "keep", lineNumber: 1, oldLine: 1, newLine: 1 },
        { type: "delete", content: minus, lineNumber: 2, oldLine: 2 },
        { type: "add", content: plus, lineNumber: 2, newLine: 2 },
      ],
    },
  ],
});

const worktree = (name: string) => ({ name }) as WorktreeView;

function setup(extra?: Handler, props: { initialA?: string; initialB?: string } = { initialA: "alpha", initialB: "beta" }) {
  const handler: Handler = (m, p, body) => {
    const r = extra?.(m, p, body);
    if (r !== undefined) return r;
    if (m === "GET" && p.startsWith("/api/worktrees?")) return [worktree("alpha"), worktree("beta"), worktree("gamma")];
    if (m === "GET" && p.startsWith("/api/worktrees/compare")) return comparison;
    if (m === "GET" && p.includes("/diff?")) {
      const u = new URL(p, "http://x");
      const name = u.pathname.split("/")[3]!;
      const path = u.searchParams.get("path")!;
      return { diff: diffText(path, "old line", `${name}'s line`), files: [fileDiff(path, "old line", `${name}'s line`)] };
    }
    if (m === "POST" && p.endsWith("/take")) return { trash: null };
    return undefined;
  };
  const fake = fakeTransport(handler);
  const onBack = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <Compare directory="/proj" onBack={onBack} {...props} />
    </Providers>,
  );
  return { ...fake, onBack, user: userEvent.setup() };
}

const rowFor = (path: string) =>
  screen.getAllByTestId("between-row").find((r) => r.getAttribute("data-path") === path)!;
const selectedPath = () =>
  screen
    .getAllByTestId("between-row")
    .find((r) => r.getAttribute("aria-selected") === "true")
    ?.getAttribute("data-path");

describe("comparison", () => {
  it("shows each attempt's numbers and check, and the between list with its labels", async () => {
    const { requests } = setup();
    const rows = await screen.findAllByTestId("between-row");
    expect(requests).toContainEqual({
      method: "GET",
      path: "/api/worktrees/compare?directory=%2Fproj&a=alpha&b=beta&check=false&hunks=true",
      body: undefined,
    });
    expect(rows.map((r) => r.textContent)).toEqual([
      "same.txtsame in both",
      "src/only-a.tsonly in A",
      "src/only-b.tsonly in B",
      "src/shared.tsboth differ",
    ]);
    const a = within(screen.getByTestId("attempt-a"));
    expect(a.getByTestId("stat-files")).toHaveTextContent("3");
    expect(a.getByTestId("stat-lines")).toHaveTextContent("+6 −1");
    expect(a.getByTestId("stat-steps")).toHaveTextContent("7");
    expect(a.getByTestId("stat-tokens")).toHaveTextContent("12k in · 800 out");
    expect(a.getByTestId("stat-cost")).toHaveTextContent("$0.04");
    expect(a.getByTestId("stat-duration")).toHaveTextContent("1 min 35 s");
    expect(a.getByTestId("check-result")).toHaveTextContent("Check: not run");
    const b = within(screen.getByTestId("attempt-b"));
    expect(b.getByTestId("stat-cost")).toHaveTextContent("unknown");
    expect(b.getByTestId("check-result")).toHaveTextContent("Check ✗ failed (exit 1) in 4.2 s npm test");
    expect(b.getByTestId("check-output")).toHaveTextContent("1 failing: parses dates");
    expect(b.getByTestId("check-result").tagName).toBe("DETAILS");
    expect(screen.getByTestId("compare-a")).toHaveValue("alpha");
    expect(screen.getByTestId("compare-b")).toHaveValue("beta");
    expect([...screen.getByTestId("compare-b").querySelectorAll("option")].map((o) => o.value)).toEqual([
      "main",
      "alpha",
      "beta",
      "gamma",
    ]);
  });

  it("shows both attempts' diffs of the selected file, or that one side left it alone", async () => {
    const { requests, user } = setup();
    await user.click((await screen.findAllByTestId("between-row"))[3]!);
    const colA = screen.getByTestId("diff-a");
    const colB = screen.getByTestId("diff-b");
    await waitFor(() => expect(within(colA).getByTestId("diff-view")).toHaveTextContent("alpha's line"));
    await waitFor(() => expect(within(colB).getByTestId("diff-view")).toHaveTextContent("beta's line"));
    expect(within(colA).getByTestId("diff-view")).toHaveTextContent("old line");
    expect(within(colA).getByTestId("diff-summary")).toHaveTextContent("1 file changed, 1 insertion(+), 1 deletion(-)");
    expect(requests.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        `/api/worktrees/alpha/diff?directory=%2Fproj&base=${BASE}&path=src%2Fshared.ts`,
        `/api/worktrees/beta/diff?directory=%2Fproj&base=${BASE}&path=src%2Fshared.ts`,
      ]),
    );

    await user.click(rowFor("src/only-a.ts"));
    await waitFor(() => expect(within(screen.getByTestId("diff-a")).getByTestId("diff-view")).toHaveTextContent("alpha's line"));
    expect(within(screen.getByTestId("diff-b")).getByTestId("diff-unchanged")).toHaveTextContent("Unchanged from the base in B");
    expect(requests.some((r) => r.path.startsWith("/api/worktrees/beta/diff") && r.path.includes("only-a"))).toBe(false);
  });

  it("take sends the file from one attempt into the other or into main, then reloads", async () => {
    const { requests, user } = setup();
    await user.click((await screen.findAllByTestId("between-row"))[3]!);
    const takes = () => requests.filter((r) => r.path.endsWith("/take"));
    await user.click(screen.getByTestId("take-into-b"));
    await user.click(screen.getByTestId("take-into-a"));
    await user.click(screen.getByTestId("take-into-main"));
    await user.selectOptions(screen.getByTestId("take-main-from"), "b");
    await user.click(screen.getByTestId("take-into-main"));
    await waitFor(() => expect(takes()).toHaveLength(4));
    expect(takes()).toEqual([
      { method: "POST", path: "/api/worktrees/alpha/take", body: { directory: "/proj", path: "src/shared.ts", into: "beta", force: false } },
      { method: "POST", path: "/api/worktrees/beta/take", body: { directory: "/proj", path: "src/shared.ts", into: "alpha", force: false } },
      { method: "POST", path: "/api/worktrees/alpha/take", body: { directory: "/proj", path: "src/shared.ts", into: "main", force: false } },
      { method: "POST", path: "/api/worktrees/beta/take", body: { directory: "/proj", path: "src/shared.ts", into: "main", force: false } },
    ]);
    await waitFor(() => expect(requests.filter((r) => r.path.startsWith("/api/worktrees/compare")).length).toBe(5));
    // The selection stays on the file.
    expect(selectedPath()).toBe("src/shared.ts");

    // A file only B changed goes into main from B by default; nothing to take for a file that is the same.
    await user.click(rowFor("src/only-b.ts"));
    expect(screen.getByTestId("take-main-from")).toHaveValue("b");
    await user.click(rowFor("same.txt"));
    expect(screen.getByTestId("take-into-a")).toBeDisabled();
    expect(screen.getByTestId("take-into-b")).toBeDisabled();
  });

  it("promote merges the chosen attempt, shows what happened and offers to remove the others", async () => {
    const promoted: PromotedView = {
      name: "beta",
      branch: "mia/beta",
      head: "9999999aaaaaaa",
      merged_into: "main",
      commit: "1234567890abcdef",
      fast_forward: true,
      removed: true,
      others: ["alpha", "gamma"],
    };
    const { requests, user } = setup((m, p) => {
      if (p === "/api/worktrees/beta/promote") return promoted;
      if (m === "DELETE" && p.startsWith("/api/worktrees/alpha")) return worktree("alpha");
      if (m === "DELETE" && p.startsWith("/api/worktrees/gamma?") && p.includes("force=false"))
        throw new ApiError(409, "worktree gamma was kept: removing it would lose 1 uncommitted change(s): x");
      if (m === "DELETE" && p.startsWith("/api/worktrees/gamma?")) return worktree("gamma");
      return undefined;
    });
    await screen.findAllByTestId("between-row");
    await user.click(screen.getByTestId("promote-b"));
    const dialog = screen.getByTestId("promote-dialog");
    expect(within(dialog).getByTestId("promote-mode-merge")).toBeChecked();
    await user.click(within(dialog).getByTestId("promote-confirm"));
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees/beta/promote",
        body: { directory: "/proj", mode: "merge", force: false },
      }),
    );
    const result = await screen.findByTestId("promote-result");
    expect(result).toHaveTextContent("Branch mia/beta was merged into main as a fast-forward (now at 1234567). Its worktree was removed.");
    const others = within(result).getAllByTestId("promote-other");
    expect(others.map((o) => o.getAttribute("data-name"))).toEqual(["alpha", "gamma"]);
    await user.click(within(result).getByTestId("remove-others"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "DELETE", path: "/api/worktrees/alpha?directory=%2Fproj&force=false", body: undefined }),
    );
    const confirm = await screen.findByTestId("worktree-remove-confirm");
    expect(confirm).toHaveTextContent("worktree gamma was kept");
    await user.click(within(confirm).getByTestId("worktree-remove-force"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "DELETE", path: "/api/worktrees/gamma?directory=%2Fproj&force=true", body: undefined }),
    );
    await waitFor(() => expect(within(result).queryAllByTestId("remove-other")).toHaveLength(0));
  });

  it("keep branch sends that mode; a merge conflict (409) is shown in the dialog", async () => {
    const { requests, user } = setup((_m, p, body) => {
      if (p === "/api/worktrees/alpha/promote") {
        if ((body as { mode: string }).mode === "merge")
          throw new ApiError(
            409,
            "merging mia/alpha into main conflicts in src/shared.ts: main was left as it was; the uncommitted changes were committed on mia/alpha as 1234567",
          );
        return { name: "alpha", branch: "mia/alpha", head: "feedbeef00", fast_forward: false, removed: false, others: [] };
      }
      return undefined;
    });
    await screen.findAllByTestId("between-row");
    await user.click(screen.getByTestId("promote-a"));
    await user.click(screen.getByTestId("promote-confirm"));
    expect(await screen.findByTestId("promote-error")).toHaveTextContent("conflicts in src/shared.ts: main was left as it was");
    await user.click(screen.getByTestId("promote-mode-keep"));
    await user.click(screen.getByTestId("promote-confirm"));
    expect(await screen.findByTestId("promote-result")).toHaveTextContent(
      "Its work is committed on branch mia/alpha at feedbee; nothing was merged.",
    );
    expect(requests.filter((r) => r.path.endsWith("/promote")).map((r) => r.body)).toEqual([
      { directory: "/proj", mode: "merge", force: false },
      { directory: "/proj", mode: "keep_branch", force: false },
    ]);
  });

  it("run check asks for the comparison with check=true", async () => {
    const checked: ComparisonView = {
      ...comparison,
      a: { ...comparison.a, check: { command: "npm test", exit_code: 0, cancelled: false, duration_ms: 1000, output: "ok" } },
    };
    const { requests, user } = setup((_m, p) => (p.includes("check=true") ? checked : undefined));
    await screen.findAllByTestId("between-row");
    await user.click(screen.getByTestId("run-check"));
    await waitFor(() =>
      expect(within(screen.getByTestId("attempt-a")).getByTestId("check-result")).toHaveTextContent("Check ✓ passed (exit 0)"),
    );
    expect(requests.map((r) => r.path)).toContain("/api/worktrees/compare?directory=%2Fproj&a=alpha&b=beta&check=true&hunks=true");
  });

  it("picks the first worktree and main when none is given; main cannot be promoted", async () => {
    const { requests } = setup(undefined, {});
    await screen.findAllByTestId("between-row");
    expect(requests.map((r) => r.path)).toContain("/api/worktrees/compare?directory=%2Fproj&a=alpha&b=beta&check=false&hunks=true");
    const one = setup((m, p) => (m === "GET" && p.startsWith("/api/worktrees?") ? [worktree("solo")] : undefined), {});
    await waitFor(() =>
      expect(one.requests.map((r) => r.path)).toContain("/api/worktrees/compare?directory=%2Fproj&a=solo&b=main&check=false&hunks=true"),
    );
  });
});

describe("refusals that would lose work", () => {
  it("a refused take (409) says what the target would lose; Take anyway sends force and names the trash", async () => {
    const { requests, user } = setup((_m, p, body) => {
      if (p === "/api/worktrees/alpha/take") {
        if (!(body as { force: boolean }).force)
          {
          const error = "beta's own version of src/shared.ts would be lost; pass --force (a copy goes to the trash)";
          throw new ApiError(409, error, { error, kind: "would_lose" });
        }
        return { trash: { id: "17-beta-take", worktree: "beta", operation: "take", created_at: 1, root: "/x", files: ["src/shared.ts"], refs: [], submodule_commits: [] } };
      }
      return undefined;
    });
    await user.click((await screen.findAllByTestId("between-row"))[3]!);
    await user.click(screen.getByTestId("take-into-b"));
    expect(await screen.findByTestId("force-message")).toHaveTextContent("beta's own version of src/shared.ts would be lost");
    await user.click(screen.getByTestId("force-confirm-button"));
    await waitFor(() => expect(screen.queryByTestId("force-confirm")).not.toBeInTheDocument());
    expect(requests.filter((r) => r.path.endsWith("/take")).map((r) => (r.body as { force: boolean }).force)).toEqual([false, true]);
    expect(await screen.findByText(/beta's own version is in the trash \(17-beta-take\)/)).toBeInTheDocument();
  });

  it("a promote refused over ignored files offers Promote anyway, and the result names what was kept", async () => {
    const { requests, user } = setup((_m, p, body) => {
      if (p === "/api/worktrees/alpha/promote") {
        if (!(body as { force: boolean }).force) {
          const error = "the merge would overwrite ignored files of main: .env";
          throw new ApiError(409, error, { error, kind: "would_lose" });
        }
        return {
          name: "alpha",
          branch: "mia/alpha",
          head: "feedbeef00",
          merged_into: "main",
          commit: "feedbeef00",
          fast_forward: true,
          removed: false,
          others: [],
          committed: "abcabc1234",
          kept: "it has 1 untracked file(s) (notes.md)",
          trash: { id: "18-main-promote", worktree: "main", operation: "promote", created_at: 1, root: "/proj", files: [".env"], refs: [], submodule_commits: [] },
        } satisfies PromotedView;
      }
      return undefined;
    });
    await screen.findAllByTestId("between-row");
    await user.click(screen.getByTestId("promote-a"));
    await user.click(screen.getByTestId("promote-confirm"));
    expect(await screen.findByTestId("promote-kept")).toHaveTextContent("would overwrite ignored files of main: .env");
    await user.click(screen.getByTestId("promote-force"));
    const result = await screen.findByTestId("promote-result");
    expect(within(result).getByTestId("promote-committed")).toHaveTextContent("committed on its branch as abcabc1");
    expect(within(result).getByTestId("promote-kept-reason")).toHaveTextContent("Kept because it has 1 untracked file(s)");
    expect(within(result).getByTestId("promote-trash")).toHaveTextContent(".env");
    expect(requests.filter((r) => r.path.endsWith("/promote")).map((r) => (r.body as { force: boolean }).force)).toEqual([false, true]);
  });
});

describe("between list keyboard", () => {
  it("ArrowDown/ArrowUp/Home/End move the selection; Tab reaches the actions", async () => {
    const { user, requests } = setup();
    await screen.findAllByTestId("between-row");
    expect(selectedPath()).toBe("same.txt");
    const list = screen.getByTestId("between");
    list.focus();
    await user.keyboard("{ArrowDown}");
    expect(selectedPath()).toBe("src/only-a.ts");
    // One tab stop; the focus moves with the selection.
    expect(rowFor("src/only-a.ts")).toHaveFocus();
    await user.keyboard("{ArrowDown}{ArrowDown}{ArrowDown}");
    expect(selectedPath()).toBe("src/shared.ts");
    await user.keyboard("{ArrowUp}");
    expect(selectedPath()).toBe("src/only-b.ts");
    await user.keyboard("{Home}");
    expect(selectedPath()).toBe("same.txt");
    await user.keyboard("{End}");
    expect(selectedPath()).toBe("src/shared.ts");
    await user.tab();
    expect(screen.getByTestId("take-into-b")).toHaveFocus();
    await user.keyboard("{Enter}");
    // Enter on the focused button takes A's version into B.
    await waitFor(() =>
      expect(requests).toContainEqual({
        method: "POST",
        path: "/api/worktrees/alpha/take",
        body: { directory: "/proj", path: "src/shared.ts", into: "beta", force: false },
      }),
    );
  });
});
