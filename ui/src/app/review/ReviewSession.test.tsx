import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Session, SessionDetail } from "../../protocol/generated";
import { PALETTE_SESSION_COMMANDS } from "../commands";
import { SessionView } from "../SessionView";
import { fakeTransport, Providers } from "../testing";

const session = (): Session => ({
    id: "s1",
    slug: "s1",
    title: "Fix it",
    directory: "/p/.mia/worktrees/alpha",
    project_id: "x",
    status: "idle",
    created_at: 1,
    updated_at: 2,
    version: "0.1",
});

function open(pr: boolean) {
  const detail: SessionDetail = { session: session(), agent: "build", messages: [] };
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === "/api/sessions/s1") return detail;
    if (path.endsWith("/timeline")) return [];
    if (method === "GET" && path.startsWith("/api/git/status"))
      return {
        branch: "alpha",
        ahead: 1,
        behind: 0,
        staged: 0,
        unstaged: 0,
        remotes: ["origin"],
        pull_request: pr ? { number: 9, provider: "github", url: "https://github.com/o/r/pull/9" } : null,
      };
    if (method === "GET" && path.startsWith("/api/git/pr?"))
      return {
        number: 9,
        provider: "github",
        url: "https://github.com/o/r/pull/9",
        title: "Alpha",
        state: "open",
        draft: false,
        head: "alpha",
        base: "main",
        review_decision: "approved",
        checks: { state: "success", total: 2, passed: 2, failed: 0, pending: 0 },
      };
    if (method === "GET" && path === "/api/sessions/s1/review") return { comments: [] };
    if (method === "GET" && path.startsWith("/api/hunks")) return { hunks: [] };
    if (method === "GET" && path.includes("/review/diff")) return { scope: "uncommitted", base: "", files: [] };
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

describe("review from the session screen", () => {
  it("the header's Review button opens the pane on the session's own checkout; its button closes it", async () => {
    const { requests, user } = open(false);
    await user.click(await screen.findByTestId("open-review"));
    const pane = await screen.findByTestId("review-pane");
    expect(pane).toHaveTextContent("/p/.mia/worktrees/alpha");
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "GET", path: "/api/hunks?directory=%2Fp%2F.mia%2Fworktrees%2Falpha", body: undefined }),
    );
    await user.click(within(pane).getByTestId("review-close"));
    expect(screen.queryByTestId("review-pane")).toBeNull();
  });

  it("/review opens the pane (not sent as a message), and the palette offers it", async () => {
    const { requests, user } = open(false);
    const input = await screen.findByTestId("prompt-input");
    await user.click(input);
    await user.type(input, "/review{Enter}");
    expect(await screen.findByTestId("review-pane")).toBeInTheDocument();
    expect(requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
    expect(PALETTE_SESSION_COMMANDS.map((c) => c.name)).toContain("review");
  });

  it("shows the branch's pull request with its status on the header", async () => {
    open(true);
    const chip = await screen.findByTestId("session-pr-chip");
    await waitFor(() => expect(chip).toHaveTextContent("PR #9 · open · approved · checks passed (2)"));
    expect(within(chip).getByRole("link")).toHaveAttribute("href", "https://github.com/o/r/pull/9");
  });

  it("shows no chip when the branch has no pull request (and asks no forge)", async () => {
    const { requests } = open(false);
    await waitFor(() => expect(requests.some((r) => r.path.startsWith("/api/git/status"))).toBe(true));
    expect(screen.queryByTestId("session-pr-chip")).toBeNull();
    expect(requests.some((r) => r.path.startsWith("/api/git/pr"))).toBe(false);
  });
});
