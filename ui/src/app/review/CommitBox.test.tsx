import { describe, expect, it } from "vitest";
import { cleanup, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { BranchStatus, PullRequestView } from "../../protocol/generated";
import { ApiError } from "../../transport/types";
import { fakeTransport, Providers, type Handler } from "../testing";
import { CommitBox } from "./CommitBox";
import { PrChip } from "./PrChip";

const status = (over: Partial<BranchStatus> = {}): BranchStatus => ({
  branch: "feature",
  upstream: null,
  ahead: 0,
  behind: 0,
  staged: 2,
  unstaged: 0,
  remotes: ["origin"],
  ...over,
});

const pr: PullRequestView = {
  number: 42,
  provider: "github",
  url: "https://github.com/o/r/pull/42",
  title: "Longer sessions",
  state: "open",
  draft: false,
  head: "feature",
  base: "main",
  review_decision: "changes_requested",
  checks: { state: "failure", total: 3, passed: 2, failed: 1, pending: 0 },
};

function setup(extra?: Handler, st: BranchStatus = status()) {
  const fake = fakeTransport((m, p, body) => {
    const r = extra?.(m, p, body);
    if (r !== undefined) return r;
    if (m === "GET" && p.startsWith("/api/git/status")) return st;
    if (m === "POST" && p === "/api/git/commit/draft") return { title: "Lengthen the session TTL", body: "An hour, as asked." };
    if (m === "POST" && p === "/api/git/commit")
      return { branch: "feature", commit: "0123456789abcdef", summary: "Lengthen the session TTL", output: "" };
    if (m === "POST" && p === "/api/git/pr/draft") return { title: "Longer sessions", body: "## Why\n\nUsers log in less." };
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <CommitBox directory="/proj" sessionId="s1" />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

describe("commit", () => {
  it("drafts a message into the box (title, blank line, body) and commits it", async () => {
    const { requests, user } = setup();
    await waitFor(() =>
      expect(screen.getByTestId("git-status")).toHaveTextContent("feature (no upstream) · 2 staged · 0 unstaged"),
    );
    await user.click(screen.getByTestId("commit-draft"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/git/commit/draft", body: { directory: "/proj" } });
    const box = screen.getByTestId("commit-message");
    await waitFor(() => expect(box).toHaveValue("Lengthen the session TTL\n\nAn hour, as asked."));
    await user.type(box, " Edited.");
    await user.click(screen.getByTestId("commit-submit"));
    expect(requests).toContainEqual({
      method: "POST",
      path: "/api/git/commit",
      body: { directory: "/proj", message: "Lengthen the session TTL\n\nAn hour, as asked. Edited." },
    });
    expect(await screen.findByTestId("commit-result")).toHaveTextContent("Committed 01234567 on feature: Lengthen the session TTL");
    expect(box).toHaveValue("");
  });

  it("cannot commit when nothing is staged", async () => {
    const { user } = setup(undefined, status({ staged: 0 }));
    await screen.findByText(/0 staged/);
    await user.type(screen.getByTestId("commit-message"), "msg");
    expect(screen.getByTestId("commit-submit")).toBeDisabled();
    expect(screen.getByTestId("commit-draft")).toBeDisabled();
  });
});

describe("push", () => {
  it("says why a push failed and keeps the rest as it was", async () => {
    const { user } = setup((m, p) => {
      if (m === "POST" && p === "/api/git/push") throw new ApiError(400, "feature has no upstream and no remote was named");
      return undefined;
    });
    await screen.findByText(/2 staged/);
    await user.type(screen.getByTestId("commit-message"), "kept");
    await user.click(screen.getByTestId("push"));
    expect(await screen.findByTestId("push-result")).toHaveTextContent(
      "Push failed: feature has no upstream and no remote was named",
    );
    expect(screen.getByTestId("commit-message")).toHaveValue("kept");
    expect(screen.getByTestId("push")).toBeEnabled();
  });

  it("publishes a branch without an upstream to origin", async () => {
    const { requests, user } = setup((m, p) =>
      m === "POST" && p === "/api/git/push" ? { branch: "feature", remote: "origin", output: "", upstream_set: true } : undefined,
    );
    await screen.findByText(/2 staged/);
    expect(screen.getByTestId("push")).toHaveTextContent("Publish to origin");
    await user.click(screen.getByTestId("push"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/git/push", body: { directory: "/proj", remote: "origin" } });
    expect(await screen.findByTestId("push-result")).toHaveTextContent("Pushed feature to origin (now tracks origin/feature)");
  });

  it("pushes a tracking branch to its upstream, and cannot push without a remote", async () => {
    const { requests, user } = setup(
      (m, p) =>
        m === "POST" && p === "/api/git/push" ? { branch: "feature", remote: "origin", output: "", upstream_set: false } : undefined,
      status({ upstream: "origin/feature" }),
    );
    await screen.findByText(/2 staged/);
    expect(screen.getByTestId("push")).toHaveTextContent(/^Push$/);
    await user.click(screen.getByTestId("push"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/git/push", body: { directory: "/proj" } });
    cleanup();
    setup(undefined, status({ remotes: [] }));
    await screen.findByText(/2 staged/);
    expect(screen.getByTestId("push")).toBeDisabled();
  });
});

describe("pull request", () => {
  it("drafts title and body, keeps them when creation fails, then creates and links the PR", async () => {
    let fail = true;
    const { requests, user } = setup((m, p) => {
      if (m === "POST" && p === "/api/git/pr") {
        if (fail) {
          fail = false;
          throw new ApiError(502, "GitHub said: Bad credentials");
        }
        return pr;
      }
      return undefined;
    });
    await screen.findByText(/2 staged/);
    await user.click(screen.getByTestId("open-pr-dialog"));
    const dialog = await screen.findByTestId("pr-dialog");
    await waitFor(() => expect(within(dialog).getByTestId("pr-title")).toHaveValue("Longer sessions"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/git/pr/draft", body: { directory: "/proj", session: "s1" } });
    expect(within(dialog).getByTestId("pr-body")).toHaveValue("## Why\n\nUsers log in less.");
    await user.type(within(dialog).getByTestId("pr-title"), "!");
    await user.type(within(dialog).getByTestId("pr-base"), "develop");
    await user.click(within(dialog).getByTestId("pr-draft"));
    await user.click(within(dialog).getByTestId("pr-create"));
    expect(await within(dialog).findByTestId("pr-error")).toHaveTextContent("GitHub said: Bad credentials");
    expect(within(dialog).getByTestId("pr-title")).toHaveValue("Longer sessions!");
    expect(within(dialog).getByTestId("pr-body")).toHaveValue("## Why\n\nUsers log in less.");
    await user.click(within(dialog).getByTestId("pr-create"));
    expect(requests.filter((r) => r.path === "/api/git/pr").at(-1)?.body).toEqual({
      directory: "/proj",
      title: "Longer sessions!",
      body: "## Why\n\nUsers log in less.",
      draft: true,
      base: "develop",
    });
    const link = await within(dialog).findByTestId("pr-link");
    expect(link).toHaveAttribute("href", "https://github.com/o/r/pull/42");
    expect(link).toHaveAttribute("target", "_blank");
    await user.click(within(within(dialog).getByTestId("pr-created")).getByRole("button", { name: "Close" }));
    expect(await screen.findByTestId("review-pr-chip")).toHaveTextContent("PR #42");
  });
});

describe("the PR chip", () => {
  it("shows state, review decision and checks, linking to the PR in a new tab", () => {
    render(<PrChip pr={pr} />);
    const chip = screen.getByTestId("pr-chip");
    expect(chip).toHaveTextContent("PR #42 · open · changes requested · checks: 1 failed");
    expect(within(chip).getByRole("link")).toHaveAttribute("target", "_blank");
    expect(chip).toHaveClass("pr-checks-failure");
  });

  it("shows a recorded link alone, and GitLab's merge requests as such", () => {
    render(<PrChip pr={{ number: 7, provider: "gitlab", url: "https://gitlab.com/o/r/-/merge_requests/7" }} />);
    expect(screen.getByTestId("pr-chip")).toHaveTextContent("MR !7");
  });
});
