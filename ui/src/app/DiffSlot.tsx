import { lazy, Suspense, useState } from "react";
import { useQuery, type QueryKey } from "@tanstack/react-query";
import type { DiffView as DiffViewData, FileDiff } from "../protocol/generated";
import type { DiffViewProps } from "../components";
import { Maximize2 } from "lucide-react";

// The diff view (with its grammars) is loaded the first time a diff is shown.
const DiffView = lazy(() => import("../components/diff/DiffView").then((m) => ({ default: m.DiffView })));

export function LazyDiffView(props: DiffViewProps) {
  return (
    <Suspense fallback={<div className="muted">Loading diff view…</div>}>
      <DiffView {...props} />
    </Suspense>
  );
}
import { errorMessage } from "../lib/api";
import { Modal } from "./Modal";
import { useOpenFile } from "./openFile";

/**
 * Shows a diff with the shared DiffView component (components/diff). The side
 * panel is narrow, so "Open wide" shows the same diff side by side in a
 * window-wide dialog.
 */
export function DiffSlot({ diff, mode = "split" }: { diff: DiffViewData; mode?: "split" | "unified" }) {
  const [wide, setWide] = useState(false);
  const openFile = useOpenFile() ?? undefined;
  return (
    <>
      <div className="diff-slot-tools">
        <button type="button" className="link-btn small" data-testid="diff-open-wide" onClick={() => setWide(true)}>
          <Maximize2 size={12} aria-hidden /> Open wide
        </button>
      </div>
      <LazyDiffView diff={diff} defaultMode={mode} onOpenFile={openFile} />
      {wide && (
        <Modal title={diff.summary} onClose={() => setWide(false)} wide testId="diff-wide">
          <LazyDiffView diff={diff} defaultMode="split" onOpenFile={openFile} />
        </Modal>
      )}
    </>
  );
}

/** DiffView data for a bare file list (a revert preview): statistics computed here, no patch. */
export function filesToDiff(files: FileDiff[]): DiffViewData {
  const totalAdditions = files.reduce((n, f) => n + f.additions, 0);
  const totalDeletions = files.reduce((n, f) => n + f.deletions, 0);
  const count = (s: FileDiff["status"]) => files.filter((f) => f.status === s).length;
  const n = files.length;
  return {
    files,
    patch: "",
    scope: { scope: "session" },
    stats: {
      filesChanged: n,
      filesAdded: count("added"),
      filesDeleted: count("deleted"),
      filesModified: count("modified"),
      totalAdditions,
      totalDeletions,
      estimatedLOCImpact: totalAdditions - totalDeletions,
    },
    summary: `${n} file${n === 1 ? "" : "s"} changed, ${totalAdditions} insertion${totalAdditions === 1 ? "" : "s"}(+), ${totalDeletions} deletion${totalDeletions === 1 ? "" : "s"}(-)`,
  };
}

export function FilesDiff({ files }: { files: FileDiff[] }) {
  // Inside a preview or a step that already says what changes: compact (no summary, no file list).
  return <LazyDiffView diff={filesToDiff(files)} defaultMode="unified" compact />;
}

/**
 * Loads a diff and shows it (with loading and error states), cached under `queryKey` (TanStack
 * Query; keys.diff): the Events that change files make it stale (state/queries.ts), and the one
 * on screen is read again then, keeping what is shown until the new one is there.
 */
export function LoadedDiff({
  queryKey,
  load,
  mode,
}: {
  queryKey: QueryKey;
  load: () => Promise<DiffViewData>;
  mode?: "split" | "unified";
}) {
  const query = useQuery({ queryKey, queryFn: load });
  if (query.error && !query.data)
    return (
      <div className="error-text" role="alert">
        {errorMessage(query.error)}
      </div>
    );
  if (!query.data)
    return (
      <div className="muted" role="status">
        Loading diff…
      </div>
    );
  return <DiffSlot diff={query.data} mode={mode} />;
}
