import { beforeEach, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { BranchStatus, HunkView, ReviewComment } from "../../protocol/generated";
import { ApiError } from "../../transport/types";
import { authDiff } from "../../components/diff/fixtures";
import { resetDiffFolding } from "../../components/diff/DiffView";
import { fakeTransport, Providers, type Handler } from "../testing";
import { REVIEW_WIDTH_KEY, ReviewPane } from "./ReviewPane";
import { hunksToFiles } from "./hunkFiles";

const hunk = (id: string, file: string, staged: boolean, lines: string[], start = 3): HunkView => ({
  id,
  file,
  staged,
  lines,
  old_start: start,
  old_lines: lines.filter((l) => !l.startsWith("+")).length,
  new_start: start,
  new_lines: lines.filter((l) => !l.startsWith("-")).length,
});

const unstaged = [
  hunk("h1", "src/auth.ts", false, [" a", "-export const TTL = 60;", "+export const TTL = 3600;", " b"]),
  hunk("h2", "src/auth.ts", false, ["+  audit();"], 20),
];
const staged = [hunk("h3", "README.md", true, ["-old", "+new"], 1)];

const comment = (over: Partial<ReviewComment> = {}): ReviewComment => ({
  id: "c1",
  file: "src/auth.ts",
  line: 4,
  end_line: 5,
  text: "An hour is too long",
  created_at: 1,
  outdated: false,
  quote: ["export const TTL = 3600;", ""],
  ...over,
});

const status = (over: Partial<BranchStatus> = {}): BranchStatus => ({
  branch: "feature",
  upstream: null,
  ahead: 0,
  behind: 0,
  staged: 1,
  unstaged: 1,
  remotes: ["origin"],
  ...over,
});

function setup(extra?: Handler, state: { comments?: ReviewComment[]; status?: BranchStatus } = {}) {
  let comments = state.comments ?? [];
  const handler: Handler = (m, p, body) => {
    const r = extra?.(m, p, body);
    if (r !== undefined) return r;
    if (m === "GET" && p.startsWith("/api/sessions/s1/review/diff")) return { scope: "uncommitted", base: "abc123", files: [authDiff] };
    if (m === "GET" && p === "/api/sessions/s1/review") return { comments };
    if (m === "POST" && p === "/api/sessions/s1/review") {
      const b = body as { file: string; line: number; end_line?: number; text: string };
      const c = comment({ id: `c${comments.length + 1}`, file: b.file, line: b.line, end_line: b.end_line ?? b.line, text: b.text });
      comments = [...comments, c];
      return c;
    }
    if (m === "DELETE" && p === "/api/sessions/s1/review") {
      const n = comments.length;
      comments = [];
      return { cleared: n };
    }
    if (m === "DELETE" && p.startsWith("/api/sessions/s1/review/")) {
      comments = comments.filter((c) => !p.endsWith(`/${c.id}`));
      return { comments };
    }
    if (m === "POST" && p === "/api/sessions/s1/review/send") {
      comments = [];
      return { accepted: true };
    }
    if (m === "GET" && p.startsWith("/api/hunks")) return { hunks: p.includes("staged=true") ? staged : unstaged };
    if (m === "POST" && p.startsWith("/api/hunks/")) return unstaged[0];
    if (m === "GET" && p.startsWith("/api/git/status")) return state.status ?? status();
    return undefined;
  };
  const fake = fakeTransport(handler);
  const onClose = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <ReviewPane sessionId="s1" directory="/proj" running={false} onClose={onClose} />
    </Providers>,
  );
  return { ...fake, onClose, user: userEvent.setup() };
}

beforeEach(() => {
  resetDiffFolding();
  localStorage.clear();
});

describe("hunk lists", () => {
  it("converts a HunkView's lines into a hunk with line numbers", () => {
    const { files, hunkAt } = hunksToFiles([...unstaged, ...staged]);
    expect(files.map((f) => [f.file, f.additions, f.deletions, f.hunks.length])).toEqual([
      ["src/auth.ts", 2, 1, 2],
      ["README.md", 1, 1, 1],
    ]);
    expect(files[0]!.hunks[0]!.lines.map((l) => [l.type, l.oldLine ?? null, l.newLine ?? null])).toEqual([
      ["context", 3, 3],
      ["delete", 4, null],
      ["add", null, 4],
      ["context", 5, 5],
    ]);
    expect(hunkAt("src/auth.ts", 1)?.id).toBe("h2");
  });

  it("stages, discards and unstages one hunk, reading both lists again after each", async () => {
    const { requests, user } = setup();
    const list = await screen.findByTestId("hunks-unstaged");
    const stage = await within(list).findAllByTestId("hunk-stage");
    expect(stage.map((b) => b.getAttribute("data-hunk"))).toEqual(["h1", "h2"]);
    const hunkGets = () => requests.filter((r) => r.method === "GET" && r.path.startsWith("/api/hunks")).length;
    const before = hunkGets();
    await user.click(stage[0]!);
    expect(requests).toContainEqual({ method: "POST", path: "/api/hunks/h1/stage?directory=%2Fproj", body: undefined });
    await waitFor(() => expect(hunkGets()).toBeGreaterThanOrEqual(before + 2));

    await user.click(within(list).getAllByTestId("hunk-discard")[1]!);
    expect(requests).toContainEqual({ method: "POST", path: "/api/hunks/h2/revert?directory=%2Fproj", body: { session: "s1" } });

    const stagedList = screen.getByTestId("hunks-staged");
    await user.click(await within(stagedList).findByTestId("hunk-unstage"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/hunks/h3/unstage?directory=%2Fproj", body: undefined });
  });

  it("a stale hunk (409) shows the server's message and reads the lists again", async () => {
    const { requests, user } = setup((m, p) => {
      if (m === "POST" && p.startsWith("/api/hunks/h1/stage")) throw new ApiError(409, "hunk h1 is stale: the file changed since it was listed");
      return undefined;
    });
    const list = await screen.findByTestId("hunks-unstaged");
    const before = requests.filter((r) => r.path.startsWith("/api/hunks?")).length;
    await user.click((await within(list).findAllByTestId("hunk-stage"))[0]!);
    expect(await screen.findByTestId("hunk-error")).toHaveTextContent("hunk h1 is stale: the file changed since it was listed");
    await waitFor(() => expect(requests.filter((r) => r.path.startsWith("/api/hunks?")).length).toBeGreaterThan(before));
  });
});

describe("review scopes and comments", () => {
  it("loads the diff of the chosen scope", async () => {
    const { requests, user } = setup();
    await screen.findByTestId("review-diff-uncommitted");
    expect(requests).toContainEqual({ method: "GET", path: "/api/sessions/s1/review/diff?scope=uncommitted", body: undefined });
    await user.click(screen.getByTestId("review-scope-branch"));
    await screen.findByTestId("review-diff-branch");
    expect(requests).toContainEqual({ method: "GET", path: "/api/sessions/s1/review/diff?scope=branch", body: undefined });
    await user.click(screen.getByTestId("review-scope-last_turn"));
    await screen.findByTestId("review-diff-last_turn");
    expect(requests).toContainEqual({ method: "GET", path: "/api/sessions/s1/review/diff?scope=last_turn", body: undefined });
  });

  it("a gutter click opens the editor; the comment is saved and listed; Shift+click comments on a range", async () => {
    const { requests, user } = setup();
    const diff = await screen.findByTestId("review-diff-uncommitted");
    const gutter = async (line: number) =>
      (await within(diff).findAllByTestId("diff-gutter")).find((g) => g.getAttribute("data-line") === String(line))!;
    await user.click(await gutter(4));
    await user.type(within(diff).getByTestId("review-comment-text"), "Why an hour?");
    await user.click(within(diff).getByTestId("review-comment-save"));
    expect(requests).toContainEqual({
      method: "POST",
      path: "/api/sessions/s1/review",
      body: { file: "src/auth.ts", line: 4, text: "Why an hour?" },
    });
    const item = await screen.findByTestId("review-comment");
    expect(within(item).getByTestId("review-comment-where")).toHaveTextContent("src/auth.ts:4");
    expect(item).toHaveTextContent("Why an hour?");
    expect(within(diff).queryByTestId("review-comment-editor")).toBeNull();
    // Shown inline under its line too.
    expect(await within(diff).findByTestId("review-inline-comment")).toHaveTextContent("Why an hour?");

    await user.click(await gutter(6));
    await user.keyboard("{Shift>}");
    await user.click(await gutter(8));
    await user.keyboard("{/Shift}");
    expect(within(diff).getByTestId("review-comment-editor")).toHaveTextContent("src/auth.ts:6–8");
    await user.type(within(diff).getByTestId("review-comment-text"), "Log it");
    await user.click(within(diff).getByTestId("review-comment-save"));
    expect(requests).toContainEqual({
      method: "POST",
      path: "/api/sessions/s1/review",
      body: { file: "src/auth.ts", line: 6, end_line: 8, text: "Log it" },
    });
    await waitFor(() => expect(screen.getAllByTestId("review-comment")).toHaveLength(2));
  });

  it("lists comments with their range, quoted lines and outdated badge; delete, send and clear", async () => {
    const { requests, user } = setup(undefined, {
      comments: [comment(), comment({ id: "c2", line: 9, end_line: 9, text: "Stale one", outdated: true, quote: ["}"] })],
    });
    const items = await screen.findAllByTestId("review-comment");
    expect(items).toHaveLength(2);
    expect(within(items[0]!).getByTestId("review-comment-where")).toHaveTextContent("src/auth.ts:4–5");
    expect(within(items[0]!).getByTestId("review-comment-quote")).toHaveTextContent("export const TTL = 3600;");
    expect(within(items[0]!).queryByTestId("review-comment-outdated")).toBeNull();
    expect(within(items[1]!).getByTestId("review-comment-outdated")).toHaveTextContent("outdated");

    await user.click(within(items[1]!).getByRole("button", { name: "Delete the comment on src/auth.ts:9" }));
    expect(requests).toContainEqual({ method: "DELETE", path: "/api/sessions/s1/review/c2", body: undefined });
    await waitFor(() => expect(screen.getAllByTestId("review-comment")).toHaveLength(1));

    await user.click(screen.getByTestId("review-send"));
    expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/review/send", body: undefined });
    expect(await screen.findByTestId("review-comments-empty")).toBeInTheDocument();
    expect(screen.getByTestId("review-send")).toBeDisabled();
  });

  it("Clear removes every comment", async () => {
    const { requests, user } = setup(undefined, { comments: [comment()] });
    await screen.findByTestId("review-comment");
    await user.click(screen.getByTestId("review-clear"));
    expect(requests).toContainEqual({ method: "DELETE", path: "/api/sessions/s1/review", body: undefined });
    expect(await screen.findByTestId("review-comments-empty")).toBeInTheDocument();
  });

  it("closes with its button", async () => {
    const { onClose, user } = setup();
    await user.click(screen.getByTestId("review-close"));
    expect(onClose).toHaveBeenCalled();
  });
});

describe("the pane's width", () => {
  it("starts at the remembered width and remembers a new one (keyboard on the handle)", async () => {
    localStorage.setItem(REVIEW_WIDTH_KEY, "800");
    const { user } = setup();
    const pane = screen.getByTestId("review-pane");
    expect(pane.style.width).toBe("800px");
    const handle = screen.getByRole("separator", { name: "Resize the review pane" });
    handle.focus();
    await user.keyboard("{ArrowLeft}");
    expect(pane.style.width).toBe("820px");
    expect(localStorage.getItem(REVIEW_WIDTH_KEY)).toBe("820");
    await user.keyboard("{End}");
    expect(pane.style.width).toBe("420px");
  });
});
