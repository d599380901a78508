import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import type { WorktreeView } from "../../protocol/generated";
import { Worktrees } from "../Worktrees";
import { fakeTransport, Providers } from "../testing";

const wt = (name: string, over: Partial<WorktreeView> = {}): WorktreeView => ({
  name,
  path: `/proj/.mia/worktrees/${name}`,
  branch: `mia/${name}`,
  base: "0123456789abcdef0123456789abcdef01234567",
  base_ref: "main",
  head: "0123456789abcdef0123456789abcdef01234567",
  created_at: Date.now(),
  size_bytes: 1,
  dirty: [],
  ahead: 1,
  merged: false,
  sessions: [],
  state: "ok",
  recorded_branch: `mia/${name}`,
  ...over,
});

describe("pull requests on worktree rows", () => {
  it("shows a worktree's PR with its status (a link in a new tab); none where the branch has none", async () => {
    const fake = fakeTransport((m, p) => {
      if (m === "GET" && p.startsWith("/api/worktrees?")) return [wt("alpha"), wt("beta"), wt("gone", { state: "missing" })];
      if (m === "GET" && p.startsWith("/api/git/status")) {
        const dir = new URL(p, "http://x").searchParams.get("directory");
        return {
          branch: "x",
          ahead: 0,
          behind: 0,
          staged: 0,
          unstaged: 0,
          remotes: [],
          pull_request: dir?.endsWith("alpha") ? { number: 3, provider: "github", url: "https://github.com/o/r/pull/3" } : null,
        };
      }
      if (m === "GET" && p.startsWith("/api/git/pr?"))
        return {
          number: 3,
          provider: "github",
          url: "https://github.com/o/r/pull/3",
          title: "Alpha",
          state: "merged",
          draft: false,
          head: "mia/alpha",
          base: "main",
          review_decision: null,
          checks: { state: "pending", total: 2, passed: 1, failed: 0, pending: 1 },
        };
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <Worktrees directory="/proj" onBack={vi.fn()} onCompare={vi.fn()} onOpenSession={vi.fn()} />
      </Providers>,
    );
    const rows = await screen.findAllByTestId("worktree-row");
    const row = (name: string) => rows.find((r) => r.getAttribute("data-name") === name)!;
    const chip = await within(row("alpha")).findByTestId("worktree-pr-chip");
    await waitFor(() => expect(chip).toHaveTextContent("PR #3 · merged · checks 1/2, 1 pending"));
    expect(within(chip).getByRole("link")).toHaveAttribute("target", "_blank");
    expect(within(row("beta")).queryByTestId("worktree-pr-chip")).toBeNull();
    // A missing folder is not asked about.
    expect(fake.requests.some((r) => r.path.includes("worktrees%2Fgone"))).toBe(false);
  });
});
