import { act, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FileDiff } from "../../protocol/generated";
import { DiffView, resetDiffFolding } from "./DiffView";
import { authDiff, sessionDiff } from "./fixtures";
import { buildTree } from "./FileTree";
import { changedRanges, segments } from "./wordDiff";

beforeEach(() => resetDiffFolding());

const fileEl = (path: string) =>
  screen.getAllByTestId("diff-file").find((el) => el.getAttribute("data-path") === path)!;

describe("word-level changes", () => {
  it("marks only the words that differ", () => {
    const old = "export const TTL = 60;";
    const now = "export const TTL = 3600;";
    expect(changedRanges(now, old).map(([s, e]) => now.slice(s, e))).toEqual(["3600"]);
    expect(changedRanges(old, now).map(([s, e]) => old.slice(s, e))).toEqual(["60"]);
    // Two changed words with only a space between them are one mark.
    const a = "let total = price * count;";
    const b = "let total = cost plus count;";
    expect(changedRanges(b, a).map(([s, e]) => b.slice(s, e))).toEqual(["cost plus"]);
  });

  it("marks nothing when the lines are unrelated or the same", () => {
    expect(changedRanges("completely different", "x = [1, 2, 3];")).toEqual([]);
    expect(changedRanges("same", "same")).toEqual([]);
  });

  it("cuts syntax tokens at the changed ranges", () => {
    const segs = segments("const x = 1;", [{ text: "const", cls: "kw" }, { text: " x = 1;" }], [[4, 7]]);
    expect(segs).toEqual([
      { text: "cons", cls: "kw", changed: false },
      { text: "t", cls: "kw", changed: true },
      { text: " x", cls: undefined, changed: true },
      { text: " = 1;", cls: undefined, changed: false },
    ]);
  });

  it("highlights the changed words of paired lines, in both layouts", async () => {
    const user = userEvent.setup();
    render(<DiffView diff={{ ...sessionDiff, files: [authDiff] }} />);
    const words = () => [...document.querySelectorAll(".mia-diff-word")].map((w) => [w.className.includes("add") ? "+" : "-", w.textContent]);
    expect(words()).toEqual([
      ["-", "60"],
      ["+", "3600"],
    ]);
    // Syntax colours are kept on the marked word.
    expect(screen.getByText("3600")).toHaveClass("hljs-number", "mia-diff-word-add");
    await user.click(screen.getByTestId("diff-mode-unified"));
    expect(words()).toEqual([
      ["-", "60"],
      ["+", "3600"],
    ]);
    // A plain addition (no counterpart) has no word marks.
    const auditLine = screen.getAllByTestId("diff-line-add")[0]!;
    expect(auditLine).toHaveTextContent('import { audit } from "./audit";');
    expect(auditLine.querySelector(".mia-diff-word")).toBeNull();
  });
});

describe("narrow boxes", () => {
  let width = 400;
  const observers: ResizeObserverCallback[] = [];
  beforeEach(() => {
    observers.length = 0;
    vi.stubGlobal(
      "ResizeObserver",
      class {
        constructor(private cb: ResizeObserverCallback) {
          observers.push(cb);
        }
        observe() {
          this.cb([{ contentRect: { width } } as ResizeObserverEntry], {} as ResizeObserver);
        }
        disconnect() {}
        unobserve() {}
      },
    );
  });
  afterEach(() => vi.unstubAllGlobals());

  it("shows side by side as unified when narrower than 700 px: both the old and the new lines are there", () => {
    width = 400;
    render(<DiffView diff={{ ...sessionDiff, files: [authDiff] }} defaultMode="split" />);
    expect(screen.getByTestId("diff-view")).toHaveAttribute("data-mode", "unified");
    expect(screen.getByTestId("diff-mode-split")).toBeDisabled();
    expect(screen.getByTestId("diff-mode-unified")).toHaveAttribute("aria-pressed", "true");
    // One line per row, every line visible: the deletion and the addition (the bug: only the old column).
    expect(screen.getByTestId("diff-line-del")).toHaveTextContent("export const TTL = 60;");
    expect(screen.getAllByTestId("diff-line-add").map((c) => c.textContent)).toContain("+export const TTL = 3600;");
    expect(document.querySelector(".mia-diff-split")).toBeNull();
    expect(screen.getByTestId("diff-line-del").closest("tr")!.querySelectorAll("td")).toHaveLength(3);
  });

  it("goes back to side by side when the box widens", () => {
    width = 400;
    render(<DiffView diff={{ ...sessionDiff, files: [authDiff] }} defaultMode="split" />);
    expect(screen.getByTestId("diff-view")).toHaveAttribute("data-mode", "unified");
    act(() => {
      for (const cb of observers) cb([{ contentRect: { width: 1200 } } as ResizeObserverEntry], {} as ResizeObserver);
    });
    expect(screen.getByTestId("diff-view")).toHaveAttribute("data-mode", "split");
    expect(screen.getByTestId("diff-mode-split")).toBeEnabled();
  });
});

const many = (paths: string[]): FileDiff[] => paths.map((file) => ({ ...authDiff, file }));

describe("file tree", () => {
  const paths = [
    "src/app/a.ts",
    "src/app/b.ts",
    "src/lib/c.ts",
    "src/lib/deep/d.ts",
    "docs/e.md",
    "docs/f.md",
    "g.txt",
    "src/app/h.ts",
    "tests/unit/x/i.ts",
  ];

  it("groups folders with their counts (single-folder chains joined)", () => {
    const tree = buildTree(many(paths));
    expect(tree.folders.map((f) => [f.name, f.count])).toEqual([
      ["src", 5],
      ["docs", 2],
      ["tests/unit/x", 1],
    ]);
    expect(tree.files.map((f) => f.file.file)).toEqual(["g.txt"]);
  });

  it("shows a tree for more than 8 files; folders fold; a file jumps to its diff", async () => {
    const user = userEvent.setup();
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    render(<DiffView diff={{ ...sessionDiff, files: many(paths) }} defaultMode="unified" />);
    expect(screen.queryByTestId("diff-file-list")).toBeNull();
    const tree = screen.getByTestId("diff-file-tree");
    const src = within(tree).getAllByTestId("diff-tree-folder").find((f) => f.getAttribute("data-path") === "src")!;
    expect(within(src).getAllByTestId("diff-tree-count")[0]).toHaveTextContent("5 files");
    expect(within(src).getAllByTestId("diff-tree-file")).toHaveLength(5);
    const toggle = within(src).getAllByRole("button")[0]!;
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(within(src).queryAllByTestId("diff-tree-file")).toHaveLength(0);
    await user.click(within(tree).getByText("g.txt"));
    expect(scrolled).toEqual([fileEl("g.txt")]);
  });

  it("keeps the flat list up to 8 files", () => {
    render(<DiffView diff={sessionDiff} />);
    expect(screen.getByTestId("diff-file-list")).toBeInTheDocument();
    expect(screen.queryByTestId("diff-file-tree")).toBeNull();
  });
});

describe("comments and hunk actions", () => {
  it("a gutter click comments on a line; Shift+click extends to a range", async () => {
    const user = userEvent.setup();
    const onComment = vi.fn();
    render(<DiffView diff={{ ...sessionDiff, files: [authDiff] }} defaultMode="unified" onComment={onComment} />);
    const gutter = (line: number) =>
      screen.getAllByTestId("diff-gutter").find((g) => g.getAttribute("data-line") === String(line))!;
    // Deleted lines have no after-side number: no button.
    expect(screen.getAllByTestId("diff-gutter").map((g) => g.getAttribute("data-line"))).toEqual(
      ["1", "2", "3", "4", "5", "6", "7", "8", "9"],
    );
    await user.click(gutter(4));
    expect(onComment).toHaveBeenLastCalledWith({ file: "src/auth.ts", line: 4, endLine: 4 });
    await user.keyboard("{Shift>}");
    await user.click(gutter(7));
    await user.keyboard("{/Shift}");
    expect(onComment).toHaveBeenLastCalledWith({ file: "src/auth.ts", line: 4, endLine: 7 });
    await user.click(gutter(2));
    expect(onComment).toHaveBeenLastCalledWith({ file: "src/auth.ts", line: 2, endLine: 2 });
  });

  it("has no gutter buttons without onComment", () => {
    render(<DiffView diff={{ ...sessionDiff, files: [authDiff] }} />);
    expect(screen.queryAllByTestId("diff-gutter")).toHaveLength(0);
  });

  it("shows comments under their last line and the editor under the lines it is for", () => {
    render(
      <DiffView
        diff={{ ...sessionDiff, files: [authDiff] }}
        defaultMode="split"
        comments={[
          { id: "c1", file: "src/auth.ts", line: 4, endLine: 4, text: "Why an hour?" },
          { id: "c2", file: "src/auth.ts", line: 40, endLine: 41, text: "Far away", outdated: true },
        ]}
        commentEditor={{ target: { file: "src/auth.ts", line: 6, endLine: 7 }, node: <textarea aria-label="Comment" /> }}
      />,
    );
    const auth = fileEl("src/auth.ts");
    const comment = within(auth).getByText("Why an hour?");
    const row = comment.closest("tr")!;
    expect(row.previousElementSibling).toHaveTextContent("export const TTL = 3600;");
    // Not in the diff: after the hunks.
    expect(within(auth).getByText("Far away").closest("tr")).toBeNull();
    const editorRow = within(auth).getByRole("textbox", { name: "Comment" }).closest("tr")!;
    expect(editorRow.previousElementSibling).toHaveTextContent('audit("login", user);');
    expect(auth.querySelectorAll("tr.mia-diff-selected")).toHaveLength(2);
  });

  it("renders the caller's buttons in each hunk header", async () => {
    const user = userEvent.setup();
    const stage = vi.fn<(file: string, hunk: number) => void>();
    render(
      <DiffView
        diff={sessionDiff}
        hunkActions={(file, hunk) => (
          <button type="button" onClick={() => {
              stage(file.file, hunk);
            }}>
            Stage
          </button>
        )}
      />,
    );
    const hunks = within(fileEl("src/auth.ts")).getAllByTestId("diff-hunk");
    expect(hunks).toHaveLength(1);
    await user.click(within(hunks[0]!).getByRole("button", { name: "Stage" }));
    expect(stage).toHaveBeenCalledWith("src/auth.ts", 0);
    expect(hunks[0]).toHaveTextContent("@@ -1,7 +1,9 @@");
  });
});
