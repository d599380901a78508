import { memo } from "react";
import { NODE_H, NODE_W, type Flat, type TreeLayout } from "../forkTreeModel";

/**
 * Beside each collapsed session, where its forks would be: how many sessions
 * its subtree hides ("+12"); a click shows them again.
 */
export const HiddenCounts = memo(function HiddenCounts({
  layout,
  flat,
  drawn,
  collapsed,
  onToggle,
}: {
  layout: TreeLayout;
  flat: Flat;
  drawn: ReadonlySet<string>;
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
}) {
  return (
    <>
      {[...collapsed].map((id) => {
        const f = flat.byId.get(id);
        const at = layout.nodes.get(id);
        if (!f || !at || !drawn.has(id) || f.descendants === 0) return null;
        const tb = layout.dir === "TB";
        const n = f.descendants;
        const label = `${n} hidden session${n === 1 ? "" : "s"} below “${f.node.title || f.node.slug}”: show them`;
        return (
          <button
            key={id}
            type="button"
            tabIndex={-1}
            className={`ft-hidden ${tb ? "tb" : "lr"}`}
            data-testid="fork-node-hidden"
            data-for={id}
            aria-label={label}
            title={label}
            style={tb ? { left: at.x + NODE_W / 2, top: at.y + NODE_H + 6 } : { left: at.x + NODE_W + 6, top: at.y + NODE_H / 2 }}
            onClick={() => onToggle(id)}
          >
            +{n}
          </button>
        );
      })}
    </>
  );
});
