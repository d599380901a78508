import { memo } from "react";
import type { Flat, TreeLayout } from "../forkTreeModel";
import { LABEL_H, LABEL_W } from "../forkTreeModel";

/**
 * Each fork's edge label: the message it was forked at (a click opens the parent there). The
 * text is cut with an ellipsis to fit the edge; hovering the label, or selecting the fork,
 * unfolds it to the whole text.
 */
export const EdgeLabels = memo(function EdgeLabels({
  layout,
  flat,
  drawn,
  activeId,
  onOpenSession,
}: {
  layout: TreeLayout;
  flat: Flat;
  /** The sessions in the DOM (near the view): a label shows when one of its ends does. */
  drawn?: ReadonlySet<string>;
  activeId?: string | null;
  onOpenSession: (id: string, messageId?: string) => void;
}) {
  return (
    <>
      {layout.edges.map((e) => {
        if (drawn && !drawn.has(e.from) && !drawn.has(e.to)) return null;
        const child = flat.byId.get(e.to)?.node;
        if (!child) return null;
        const parentTitle = flat.byId.get(e.from)?.node.title ?? "the parent";
        const messageId = child.fork?.source_message_id;
        const text = (child.fork_excerpt ?? "").replace(/\s+/g, " ").trim() || "fork point";
        return (
          <button
            key={`${e.from}>${e.to}`}
            type="button"
            tabIndex={-1}
            className={`ft-edge-label${e.to === activeId ? " active" : ""}`}
            data-testid="fork-edge"
            data-from={e.from}
            data-to={e.to}
            style={{ left: e.label.x - LABEL_W / 2, top: e.label.y - LABEL_H / 2, height: LABEL_H }}
            title={`Forked at: ${child.fork_excerpt ?? "?"}\nOpens “${parentTitle}” at this message`}
            onClick={() => onOpenSession(e.from, messageId ?? undefined)}
          >
            <span className="ft-edge-text">{text}</span>
          </button>
        );
      })}
    </>
  );
});
