import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { DiffView, resetDiffFolding } from "./DiffView";
import { authDiff, bigFile, sessionDiff } from "./fixtures";

// Folding is remembered per scope for the window's life; each test starts fresh.
beforeEach(() => resetDiffFolding());

const fileEl = (path: string) =>
  screen.getAllByTestId("diff-file").find((el) => el.getAttribute("data-path") === path)!;

describe("DiffView", () => {
  it("shows the summary line and the file list with status and counts", () => {
    render(<DiffView diff={sessionDiff} />);
    expect(screen.getByTestId("diff-summary")).toHaveTextContent("4 files changed, 6 insertions(+), 3 deletions(-)");
    const items = within(screen.getByTestId("diff-file-list")).getAllByRole("listitem");
    expect(items.map((li) => li.textContent)).toEqual([
      "Msrc/auth.ts+3 −1",
      "Asrc/audit.ts+3 −0",
      "Dscripts/old.py+0 −2",
      "Massets/logo.pngbinary",
    ]);
    expect(within(items[1]!).getByTitle("added")).toHaveClass("mia-diff-badge-added");
    expect(within(items[2]!).getByTitle("deleted")).toHaveClass("mia-diff-badge-deleted");
  });

  it("shows each file with its header, hunk header and line numbers", () => {
    render(<DiffView diff={sessionDiff} />);
    const auth = fileEl("src/auth.ts");
    expect(within(auth).getByRole("heading")).toHaveTextContent("src/auth.ts [modified]");
    expect(auth).toHaveTextContent("@@ -1,7 +1,9 @@");
    expect(within(fileEl("scripts/old.py")).getByRole("heading")).toHaveTextContent("scripts/old.py [deleted]");
    expect(fileEl("scripts/old.py")).toHaveTextContent("@@ -1,2 +0,0 @@");
    // The changed TTL line: old number 3 on the left, new number 4 on the right.
    const del = within(auth).getByTestId("diff-line-del");
    const row = del.closest("tr")!;
    const cells = within(row).getAllByRole("cell");
    expect(cells.map((c) => c.textContent)).toEqual(["3", "-export const TTL = 60;", "4", "+export const TTL = 3600;"]);
  });

  it("marks added and deleted lines side by side", () => {
    render(<DiffView diff={sessionDiff} />);
    expect(screen.getByTestId("diff-mode-split")).toHaveAttribute("aria-pressed", "true");
    const adds = screen.getAllByTestId("diff-line-add");
    const dels = screen.getAllByTestId("diff-line-del");
    expect(adds).toHaveLength(6);
    expect(dels).toHaveLength(3);
    expect(adds[0]).toHaveTextContent('import { audit } from "./audit";');
    expect(adds[0]).toHaveClass("mia-diff-add");
    expect(dels[0]).toHaveClass("mia-diff-delete");
    expect(within(fileEl("scripts/old.py")).getAllByTestId("diff-line-del").map((d) => d.textContent)).toEqual([
      "-def main():",
      "-    print('bye')",
    ]);
  });

  it("switches to unified: one line per row with both line numbers", async () => {
    const user = userEvent.setup();
    render(<DiffView diff={sessionDiff} />);
    await user.click(screen.getByTestId("diff-mode-unified"));
    expect(screen.getByTestId("diff-mode-unified")).toHaveAttribute("aria-pressed", "true");
    expect(screen.getByTestId("diff-mode-split")).toHaveAttribute("aria-pressed", "false");
    expect(screen.getAllByTestId("diff-line-add")).toHaveLength(6);
    expect(screen.getAllByTestId("diff-line-del")).toHaveLength(3);

    const auth = fileEl("src/auth.ts");
    const delRow = within(auth).getByTestId("diff-line-del").closest("tr")!;
    expect(within(delRow).getAllByRole("cell").map((c) => c.textContent)).toEqual(["3", "", "-export const TTL = 60;"]);
    const ctxRow = within(auth)
      .getAllByRole("row")
      .find((r) => r.textContent?.includes("return hash(user + password);"))!;
    expect(within(ctxRow).getAllByRole("cell").map((c) => c.textContent)).toEqual([
      "6",
      "8",
      "   return hash(user + password);",
    ]);

    await user.click(screen.getByTestId("diff-mode-split"));
    expect(within(auth).getByTestId("diff-line-del").closest("tr")!.querySelectorAll("td")).toHaveLength(4);
  });

  it("starts in the given mode", () => {
    render(<DiffView diff={sessionDiff} defaultMode="unified" />);
    expect(screen.getByTestId("diff-mode-unified")).toHaveAttribute("aria-pressed", "true");
  });

  it("highlights syntax by file extension", () => {
    render(<DiffView diff={sessionDiff} />);
    const ttl = within(fileEl("src/auth.ts")).getAllByTestId("diff-line-add")[1]!;
    expect(ttl).toHaveTextContent("export const TTL = 3600;");
    expect(within(ttl).getByText("export")).toHaveClass("hljs-keyword");
    expect(within(ttl).getByText("3600")).toHaveClass("hljs-number");
    const py = within(fileEl("scripts/old.py")).getAllByTestId("diff-line-del")[0]!;
    expect(within(py).getByText("def")).toHaveClass("hljs-keyword");
  });

  it("shows binary files as not diffed and the missing final newline", () => {
    render(<DiffView diff={sessionDiff} />);
    expect(fileEl("assets/logo.png")).toHaveTextContent("binary file, not diffed");
    expect(within(fileEl("src/audit.ts")).getAllByTestId("diff-line-add")[2]).toHaveTextContent(
      "no newline at end of file",
    );
  });

  it("copy as patch hands diff.patch to the callback", async () => {
    const user = userEvent.setup();
    const onCopyPatch = vi.fn();
    render(<DiffView diff={sessionDiff} onCopyPatch={onCopyPatch} />);
    await user.click(screen.getByTestId("diff-copy-patch"));
    expect(onCopyPatch).toHaveBeenCalledTimes(1);
    expect(onCopyPatch).toHaveBeenCalledWith(sessionDiff.patch);
    expect(await screen.findByText("Copied")).toBeInTheDocument();
  });

  it("copy as patch uses the clipboard by default", async () => {
    const user = userEvent.setup(); // installs a clipboard stub
    render(<DiffView diff={sessionDiff} />);
    await user.click(screen.getByTestId("diff-copy-patch"));
    expect(await screen.findByText("Copied")).toBeInTheDocument();
    await expect(navigator.clipboard.readText()).resolves.toBe(sessionDiff.patch);
  });

  it("shows a failed copy", async () => {
    const user = userEvent.setup();
    render(<DiffView diff={sessionDiff} onCopyPatch={() => Promise.reject(new Error("permission denied"))} />);
    await user.click(screen.getByTestId("diff-copy-patch"));
    expect(await screen.findByText("Copy failed: permission denied")).toBeInTheDocument();
  });

  it("clicking a file in the list scrolls to it", async () => {
    const user = userEvent.setup();
    const scrolled: Element[] = [];
    // jsdom has no layout, hence no scrollIntoView.
    const original = Object.getOwnPropertyDescriptor(Element.prototype, "scrollIntoView");
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    try {
      render(<DiffView diff={sessionDiff} />);
      await user.click(within(screen.getByTestId("diff-file-list")).getByText("scripts/old.py"));
      expect(scrolled).toEqual([fileEl("scripts/old.py")]);
      expect(within(fileEl("scripts/old.py")).getByRole("heading")).toHaveFocus();
    } finally {
      if (original) Object.defineProperty(Element.prototype, "scrollIntoView", original);
      else delete (Element.prototype as Partial<Element>).scrollIntoView;
    }
  });

  it("renders a 5,000-line file virtualised: only the visible rows are in the page", () => {
    const big = bigFile(5000);
    render(<DiffView diff={{ ...sessionDiff, files: [sessionDiff.files[0]!, big] }} />);
    const section = fileEl(big.file);
    expect(within(section).getByRole("region", { name: "5,001 diff rows" })).toBeInTheDocument();
    const rendered = within(section).getAllByTestId("diff-line-add");
    expect(rendered.length).toBeGreaterThan(10);
    expect(rendered.length).toBeLessThan(200);
    expect(rendered[0]).toHaveTextContent("export const value0 = 0;");
    // The small file next to it is rendered in full.
    expect(within(fileEl("src/auth.ts")).getAllByTestId("diff-line-add")).toHaveLength(3);
  });

  it("collapses the files past the rendering budget behind a show button", async () => {
    const user = userEvent.setup();
    const files = Array.from({ length: 10 }, (_, i) => ({ ...bigFile(250), file: `src/gen/part${i}.ts` }));
    render(<DiffView diff={{ ...sessionDiff, files }} defaultMode="unified" />);
    const first = fileEl("src/gen/part0.ts");
    expect(within(first).getAllByTestId("diff-line-add")).toHaveLength(250);
    const last = fileEl("src/gen/part9.ts");
    expect(last).toHaveTextContent("250 lines hidden");
    expect(within(last).queryAllByTestId("diff-line-add")).toHaveLength(0);
    expect(within(last).getByRole("button", { name: "Expand src/gen/part9.ts" })).toHaveAttribute(
      "aria-expanded",
      "false",
    );
    await user.click(within(last).getByRole("button", { name: "Show 250 lines" }));
    expect(within(last).getAllByTestId("diff-line-add")).toHaveLength(250);
    expect(within(last).getByRole("button", { name: "Collapse src/gen/part9.ts" })).toHaveAttribute(
      "aria-expanded",
      "true",
    );
  });

  it("says when there are no changes", () => {
    render(<DiffView diff={{ ...sessionDiff, files: [], patch: "", summary: "0 files changed" }} />);
    expect(screen.getByTestId("diff-view")).toHaveTextContent("No changes");
    expect(screen.getByTestId("diff-copy-patch")).toBeDisabled();
  });
});

describe("DiffView folding", () => {
  it("keeps a shown file open when the parent rebuilds the diff object around the same files", async () => {
    const user = userEvent.setup();
    const files = Array.from({ length: 10 }, (_, i) => ({ ...bigFile(250), file: `src/gen/part${i}.ts` }));
    const { rerender } = render(<DiffView diff={{ ...sessionDiff, files }} defaultMode="unified" />);
    const last = () => fileEl("src/gen/part9.ts");
    await user.click(within(last()).getByRole("button", { name: "Show 250 lines" }));
    rerender(<DiffView diff={{ ...sessionDiff, files }} defaultMode="unified" />);
    expect(within(last()).getAllByTestId("diff-line-add")).toHaveLength(250);
    // A new turn (a new list of files, same scope): the person's choice still holds.
    rerender(<DiffView diff={{ ...sessionDiff, files: [...files] }} defaultMode="unified" />);
    expect(within(last()).getAllByTestId("diff-line-add")).toHaveLength(250);
    // Another scope: folding starts over.
    rerender(<DiffView diff={{ ...sessionDiff, scope: { scope: "message", message_id: "other" } as never, files: [...files] }} defaultMode="unified" />);
    expect(last()).toHaveTextContent("250 lines hidden");
  });

  it("says when only the line endings changed", () => {
    render(<DiffView diff={{ ...sessionDiff, files: [{ ...authDiff, lineEndings: "LF → CRLF" }] }} />);
    expect(within(fileEl("src/auth.ts")).getByText("line endings LF → CRLF")).toBeInTheDocument();
    render(<DiffView diff={{ ...sessionDiff, files: [{ ...authDiff, file: "b.ts" }] }} />);
    expect(within(fileEl("b.ts")).queryByText(/line endings/)).toBeNull();
  });

  it("offers Open for files that still exist, at the first changed line", async () => {
    const open = vi.fn();
    render(<DiffView diff={sessionDiff} onOpenFile={open} />);
    await userEvent.click(within(fileEl("src/auth.ts")).getByTestId("diff-open-file"));
    expect(open).toHaveBeenCalledWith("src/auth.ts", authDiff.hunks[0]!.startAfter);
    expect(within(fileEl("scripts/old.py")).queryByTestId("diff-open-file")).toBeNull();
  });

  it("has no Open button without a handler", () => {
    render(<DiffView diff={sessionDiff} />);
    expect(screen.queryAllByTestId("diff-open-file")).toHaveLength(0);
  });

  it("keeps a person's folding when the same scope is drawn again", async () => {
    const fold = () => within(fileEl("src/auth.ts")).getByRole("button", { name: /src\/auth\.ts/ });
    const first = render(<DiffView diff={{ ...sessionDiff, scope: { scope: "message", message_id: "fold-1" } as never }} />);
    const was = fold().getAttribute("aria-expanded");
    await userEvent.click(fold());
    expect(fold().getAttribute("aria-expanded")).not.toBe(was);
    first.unmount();
    const again = render(<DiffView diff={{ ...sessionDiff, scope: { scope: "message", message_id: "fold-1" } as never }} />);
    expect(fold().getAttribute("aria-expanded")).not.toBe(was);
    again.unmount();
    // Another scope starts as the defaults say.
    render(<DiffView diff={{ ...sessionDiff, scope: { scope: "message", message_id: "fold-2" } as never }} />);
    expect(fold().getAttribute("aria-expanded")).toBe(was);
  });
});

describe("compact", () => {
  it("leaves out the summary line and the file list: each file's header says what changes", () => {
    render(<DiffView diff={sessionDiff} compact />);
    expect(screen.queryByTestId("diff-summary")).toBeNull();
    expect(screen.queryByTestId("diff-file-list")).toBeNull();
    expect(screen.getAllByTestId("diff-file").length).toBe(sessionDiff.files.length);
    expect(screen.getByTestId("diff-mode-unified")).toBeInTheDocument();
  });
});
