import type { Flat, TreeLayout } from "../forkTreeModel";
import { LABEL_H, LABEL_W, shortExcerpt } from "../forkTreeModel";

/** Each fork's edge label: the message it was forked at (a click opens the parent there). */
export function EdgeLabels({
  layout,
  flat,
  onOpenSession,
}: {
  layout: TreeLayout;
  flat: Flat;
  onOpenSession: (id: string, messageId?: string) => void;
}) {
  return (
    <>
      {layout.edges.map((e) => {
        const child = flat.byId.get(e.to)?.node;
        if (!child) return null;
        const parentTitle = flat.byId.get(e.from)?.node.title ?? "the parent";
        const messageId = child.fork?.source_message_id;
        return (
          <button
            key={`${e.from}>${e.to}`}
            type="button"
            tabIndex={-1}
            className="ft-edge-label"
            data-testid="fork-edge"
            data-from={e.from}
            data-to={e.to}
            style={{ left: e.label.x - LABEL_W / 2, top: e.label.y - LABEL_H / 2, width: LABEL_W, height: LABEL_H }}
            title={`Forked at: ${child.fork_excerpt ?? "?"}\nOpens “${parentTitle}” at this message`}
            onClick={() => onOpenSession(e.from, messageId ?? undefined)}
          >
            {shortExcerpt(child.fork_excerpt)}
          </button>
        );
      })}
    </>
  );
}
