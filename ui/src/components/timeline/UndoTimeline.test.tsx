import { act, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { FileDiff, HistoryAction, RevertPreview, RevertSummary } from "../../protocol/generated";
import { UndoTimeline } from "./UndoTimeline";
import type { UndoTimelineProps } from "./UndoTimeline";
import {
  MSG_1,
  forcedSummary,
  refusedSummary,
  revertToMsg1Preview,
  steps,
  undoStep2Preview,
  undoStep2Summary,
} from "./fixtures";

type PreviewFn = (action: HistoryAction) => Promise<RevertPreview>;
type ApplyFn = (action: HistoryAction, force: boolean) => Promise<RevertSummary>;

function setup(props: Partial<UndoTimelineProps> = {}) {
  const onPreview = vi.fn<PreviewFn>((action) =>
    Promise.resolve(action.action === "revert" ? revertToMsg1Preview : undoStep2Preview),
  );
  const onApply = vi.fn<ApplyFn>(() => Promise.resolve(undoStep2Summary));
  const user = userEvent.setup();
  const utils = render(<UndoTimeline steps={steps} onPreview={onPreview} onApply={onApply} {...props} />);
  return { user, onPreview, onApply, ...utils };
}

const stepEl = (id: string) =>
  screen.getAllByTestId("timeline-step").find((el) => el.getAttribute("data-step-id") === id)!;

describe("UndoTimeline", () => {
  it("says so when there is nothing to undo", () => {
    render(<UndoTimeline steps={[]} onPreview={vi.fn()} onApply={vi.fn()} />);
    expect(screen.getByTestId("timeline")).toHaveTextContent("No file changes in this session yet");
    expect(screen.queryAllByTestId("timeline-step")).toHaveLength(0);
  });

  it("lists steps oldest first, newest last, with tool, time, files and counts", () => {
    setup();
    const entries = screen.getAllByTestId("timeline-step");
    expect(entries.map((e) => e.getAttribute("data-step-id"))).toEqual(["step-1", "step-2", "step-3", "step-4"]);

    const s2 = stepEl("step-2");
    expect(s2).toHaveTextContent("#2");
    expect(s2).toHaveTextContent("write");
    expect(s2).toHaveTextContent("10:12:45");
    const files = within(s2).getAllByRole("listitem");
    expect(files[0]).toHaveTextContent("Asrc/types.ts+22 −0");
    expect(files[1]).toHaveTextContent("Msrc/utils.ts+4 −1");

    expect(stepEl("step-1")).toHaveTextContent("edit");
    expect(stepEl("step-3")).toHaveTextContent("bash");
    expect(within(stepEl("step-3")).getByText("D")).toHaveClass("mia-tl-badge-deleted");
    expect(stepEl("step-4")).toHaveTextContent("undo");
  });

  it("greys undone steps and offers actions only on live tool steps", () => {
    setup();
    const undone = stepEl("step-3");
    expect(undone).toHaveClass("mia-tl-undone");
    expect(within(undone).getByText("Undone")).toBeInTheDocument();
    expect(within(undone).queryByTestId("timeline-undo-step")).toBeNull();
    expect(within(stepEl("step-4")).queryByTestId("timeline-undo-step")).toBeNull();
    expect(within(stepEl("step-4")).queryByTestId("timeline-revert-here")).toBeNull();
    expect(within(stepEl("step-2")).getByTestId("timeline-undo-step")).toBeEnabled();
    expect(within(stepEl("step-1")).getByTestId("timeline-revert-here")).toBeEnabled();
    expect(within(undone).getByText(/Not restorable/)).toHaveTextContent("assets/logo.bin");
  });

  it("Undo this step previews exactly which files change, then applies without force", async () => {
    const renderDiff = vi.fn((files: FileDiff[]) => <div data-testid="fake-diff">{files.map((f) => f.file).join(",")}</div>);
    const { user, onPreview, onApply } = setup({ renderDiff });
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    expect(onPreview).toHaveBeenCalledWith({ action: "undo", step: "step-2" });

    const panel = await screen.findByTestId("timeline-preview");
    expect(within(stepEl("step-2")).getByTestId("timeline-preview")).toBe(panel);
    const files = await within(panel).findAllByTestId("timeline-preview-file");
    expect(files.map((f) => f.textContent)).toEqual([
      "remove src/types.ts (was created)",
      "restore src/utils.ts (was modified)",
    ]);
    // The counts are said once: by the drawn diff's file headers, not again above it.
    expect(panel).not.toHaveTextContent("+1 −23 lines");
    expect(renderDiff).toHaveBeenCalledWith(undoStep2Preview.diff);
    expect(within(panel).getByTestId("fake-diff")).toHaveTextContent("src/types.ts");
    expect(within(panel).queryByTestId("timeline-conflicts")).toBeNull();
    expect(within(panel).queryByTestId("timeline-force")).toBeNull();
    expect(onApply).not.toHaveBeenCalled();

    await user.click(within(panel).getByTestId("timeline-apply"));
    expect(onApply).toHaveBeenCalledTimes(1);
    expect(onApply).toHaveBeenCalledWith({ action: "undo", step: "step-2" }, false);
    const result = await screen.findByTestId("timeline-result");
    // In plain words; the runtime's own text (snapshots, message ids) only under Details.
    expect(within(result).getByText("Undone: restored src/utils.ts; removed src/types.ts.")).toBeVisible();
    const details = within(result).getByText("Details").closest("details")!;
    expect(details).not.toHaveAttribute("open");
    expect(details).toHaveTextContent("src/types.ts: removed (was created)");
    expect(screen.queryByTestId("timeline-preview")).toBeNull();
  });

  it("expands a step's own diff, and keeps ids under Details", async () => {
    const renderStepDiff = vi.fn((st: { id: string }) => <div data-testid="fake-step-diff">{st.id}</div>);
    const { user } = setup({ renderStepDiff });
    const s2 = stepEl("step-2");
    expect(within(s2).queryByTestId("fake-step-diff")).toBeNull();
    const toggle = within(s2).getByTestId("timeline-step-diff-toggle");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    await user.click(toggle);
    expect(within(s2).getByTestId("fake-step-diff")).toHaveTextContent("step-2");
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(within(s2).getByText("Details").closest("details")).not.toHaveAttribute("open");
    expect(within(s2).getByTestId("timeline-undo-step")).toHaveTextContent("Undo");
    expect(within(s2).getByTestId("timeline-revert-here")).toHaveTextContent("Restore to here");
  });

  it("the preview names the files it leaves alone and why", async () => {
    const onPreview = vi.fn<PreviewFn>(() =>
      Promise.resolve({
        ...undoStep2Preview,
        left_alone: [
          { path: "notes.md", reason: "changed while the command ran, but not by it (a person or another program)" },
        ],
      }),
    );
    const { user } = setup({ onPreview });
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    const left = await screen.findByTestId("timeline-left-alone");
    expect(left).toHaveTextContent("notes.md: changed while the command ran, but not by it");
    const files = screen.getAllByTestId("timeline-preview-file").map((f) => f.textContent);
    expect(files.some((f) => f?.includes("notes.md"))).toBe(false);
  });

  it("Restore to here shows conflicts and overwrites only after the explicit button", async () => {
    const { user, onPreview, onApply } = setup();
    onApply.mockResolvedValueOnce(forcedSummary);
    await user.click(within(stepEl("step-1")).getByTestId("timeline-revert-here"));
    expect(onPreview).toHaveBeenCalledWith({ action: "revert", message_id: MSG_1 });

    const conflicts = await screen.findByTestId("timeline-conflicts");
    expect(conflicts).toHaveTextContent("1 file was changed outside Mia Code");
    expect(conflicts).toHaveTextContent("src/auth.ts: modified outside mia-code at 10:40:12");
    const panel = screen.getByTestId("timeline-preview");
    expect(within(panel).getAllByTestId("timeline-preview-file")).toHaveLength(3);
    expect(panel).toHaveTextContent("Cannot be restored (never captured):assets/logo.bin");
    expect(within(panel).queryByTestId("timeline-apply")).toBeNull();
    expect(within(panel).getByTestId("timeline-cancel")).toBeInTheDocument();
    expect(onApply).not.toHaveBeenCalled();

    await user.click(within(panel).getByTestId("timeline-force"));
    expect(onApply).toHaveBeenCalledTimes(1);
    expect(onApply).toHaveBeenCalledWith({ action: "revert", message_id: MSG_1 }, true);
    const result = await screen.findByTestId("timeline-result");
    expect(result).toHaveTextContent("Reverted 3 files to snapshot 4b825dc");
    expect(result).toHaveTextContent(".mia-code/backups/20261129-104500/src/auth.ts");
  });

  it("a refused apply (409) shows the conflicts, never success, and offers the overwrite", async () => {
    const { user, onApply } = setup();
    onApply.mockResolvedValueOnce(refusedSummary).mockResolvedValueOnce(undoStep2Summary);
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    await user.click(await screen.findByTestId("timeline-apply"));

    const conflicts = await screen.findByTestId("timeline-conflicts");
    expect(conflicts).toHaveTextContent("Nothing was changed");
    expect(conflicts).toHaveTextContent("src/utils.ts: changed outside mia-code since step #2");
    expect(screen.queryByTestId("timeline-result")).toBeNull();
    expect(screen.queryByTestId("timeline-apply")).toBeNull();

    await user.click(screen.getByTestId("timeline-force"));
    expect(onApply).toHaveBeenNthCalledWith(1, { action: "undo", step: "step-2" }, false);
    expect(onApply).toHaveBeenNthCalledWith(2, { action: "undo", step: "step-2" }, true);
    expect(await screen.findByTestId("timeline-result")).toBeInTheDocument();
  });

  it("shows a failed preview in the panel and cannot apply it", async () => {
    const { user, onPreview, onApply } = setup();
    onPreview.mockRejectedValueOnce(new Error("snapshot a1b2c3d is missing"));
    await user.click(within(stepEl("step-1")).getByTestId("timeline-undo-step"));
    const panel = await screen.findByTestId("timeline-preview");
    expect(await within(panel).findByRole("alert")).toHaveTextContent("snapshot a1b2c3d is missing");
    expect(within(panel).getByTestId("timeline-apply")).toBeDisabled();
    expect(onApply).not.toHaveBeenCalled();
  });

  it("shows a failed apply in the panel and lets the person retry", async () => {
    const { user, onApply } = setup();
    onApply.mockRejectedValueOnce(new Error("a turn is running (409)"));
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    await user.click(await screen.findByTestId("timeline-apply"));
    const panel = screen.getByTestId("timeline-preview");
    expect(await within(panel).findByRole("alert")).toHaveTextContent("a turn is running (409)");
    expect(screen.queryByTestId("timeline-result")).toBeNull();
    await user.click(within(panel).getByTestId("timeline-apply"));
    expect(onApply).toHaveBeenCalledTimes(2);
    expect(await screen.findByTestId("timeline-result")).toBeInTheDocument();
  });

  it("Cancel closes the preview without applying", async () => {
    const { user, onApply } = setup();
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    await user.click(await screen.findByTestId("timeline-cancel"));
    expect(screen.queryByTestId("timeline-preview")).toBeNull();
    expect(onApply).not.toHaveBeenCalled();
  });

  it("keeps only the latest preview when buttons are clicked quickly", async () => {
    let late: (p: RevertPreview) => void = () => {};
    const { user, onPreview } = setup();
    onPreview.mockImplementationOnce(() => new Promise<RevertPreview>((r) => (late = r)));
    await user.click(within(stepEl("step-2")).getByTestId("timeline-undo-step"));
    await user.click(within(stepEl("step-1")).getByTestId("timeline-revert-here"));
    await screen.findByTestId("timeline-conflicts");
    // The earlier answer arrives last: it must not replace the newer preview.
    await act(async () => {
      late(undoStep2Preview);
      await Promise.resolve();
    });
    expect(screen.getByTestId("timeline-conflicts")).toBeInTheDocument();
    expect(screen.getAllByTestId("timeline-preview")).toHaveLength(1);
    expect(within(stepEl("step-1")).getByTestId("timeline-preview")).toBeInTheDocument();
  });

  it("disables history actions while a turn runs and says why", () => {
    setup({ busy: true });
    const undo = within(stepEl("step-2")).getByTestId("timeline-undo-step");
    expect(undo).toBeDisabled();
    expect(undo).toHaveAttribute("title", expect.stringMatching(/turn is running/));
    expect(within(stepEl("step-1")).getByTestId("timeline-revert-here")).toBeDisabled();
    expect(screen.getByTestId("timeline")).toHaveTextContent("A turn is running");
  });

  it("redo previews {action: redo} and applies through onRedo", async () => {
    const onRedo = vi.fn<(force: boolean) => Promise<RevertSummary>>(() => Promise.resolve(undoStep2Summary));
    const { user, onPreview, onApply } = setup({ onRedo });
    await user.click(screen.getByRole("button", { name: "Redo…" }));
    expect(onPreview).toHaveBeenCalledWith({ action: "redo" });
    await user.click(await screen.findByTestId("timeline-apply"));
    expect(onRedo).toHaveBeenCalledWith(false);
    expect(onApply).not.toHaveBeenCalled();
  });

  it("has no Redo button without onRedo", () => {
    setup();
    expect(screen.queryByRole("button", { name: "Redo…" })).toBeNull();
  });

  it("has no Redo button when nothing is undone", () => {
    setup({ onRedo: vi.fn(), steps: steps.map((s) => ({ ...s, undone: false })) });
    expect(screen.queryByRole("button", { name: "Redo…" })).toBeNull();
  });

  it("previews again when the session's steps change under an open preview", async () => {
    const { user, onPreview, onApply, rerender } = setup();
    await user.click(within(stepEl("step-2")).getByTestId("timeline-revert-here"));
    await screen.findByTestId("timeline-preview");
    expect(onPreview).toHaveBeenCalledTimes(1);
    // A turn finished meanwhile and added a step: the open preview is computed again.
    const more = [...steps, { ...steps[steps.length - 1]!, id: "step-new", index: steps.length + 1 }];
    rerender(<UndoTimeline steps={more} onPreview={onPreview} onApply={onApply} />);
    await vi.waitFor(() => expect(onPreview).toHaveBeenCalledTimes(2));
    expect(onPreview).toHaveBeenLastCalledWith(onPreview.mock.calls[0]![0]);
    // The same steps again (a refetch) do not re-run it.
    rerender(<UndoTimeline steps={[...more]} onPreview={onPreview} onApply={onApply} />);
    await screen.findByTestId("timeline-preview");
    expect(onPreview).toHaveBeenCalledTimes(2);
  });
});
