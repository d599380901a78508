import { memo, useMemo, useRef, type PointerEvent as ReactPointerEvent } from "react";
import { NODE_H, NODE_W, type TreeLayout } from "../forkTreeModel";
import { worldRect, type Size, type View } from "./viewport";

const MAX_W = 200;
const MAX_H = 140;

/** The whole tree in small (memoised: panning redraws only the view's frame). */
const MinimapNodes = memo(function MinimapNodes({
  layout,
  s,
  activeId,
  currentId,
}: {
  layout: TreeLayout;
  s: number;
  activeId: string | null;
  currentId: string | null;
}) {
  const rects = useMemo(
    () =>
      [...layout.nodes.values()].map((n) => (
        <rect key={n.id} x={n.x * s} y={n.y * s} width={Math.max(2, NODE_W * s)} height={Math.max(2, NODE_H * s)} rx={1} />
      )),
    [layout, s],
  );
  const mark = (id: string | null, cls: string) => {
    const n = id ? layout.nodes.get(id) : undefined;
    return n ? <rect className={cls} x={n.x * s} y={n.y * s} width={Math.max(3, NODE_W * s)} height={Math.max(3, NODE_H * s)} rx={1} /> : null;
  };
  return (
    <>
      <g className="ft-mm-nodes">{rects}</g>
      {mark(currentId, "ft-mm-current")}
      {mark(activeId, "ft-mm-active")}
    </>
  );
});

/**
 * The minimap: every drawn session as a dot-sized box and the part in view as
 * a frame; a click or a drag on it moves the view there.
 */
export function Minimap({
  layout,
  view,
  viewport,
  activeId,
  currentId,
  onCentre,
}: {
  layout: TreeLayout;
  view: View;
  viewport: Size;
  activeId: string | null;
  currentId: string | null;
  /** Puts the world point (x, y) in the middle of the view. */
  onCentre: (x: number, y: number) => void;
}) {
  const s = Math.min(MAX_W / Math.max(1, layout.width), MAX_H / Math.max(1, layout.height));
  const w = Math.max(24, Math.ceil(layout.width * s));
  const h = Math.max(24, Math.ceil(layout.height * s));
  const r = worldRect(view, viewport);
  const dragging = useRef<number | null>(null);

  const moveTo = (e: ReactPointerEvent<SVGSVGElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    onCentre((e.clientX - box.left) / s, (e.clientY - box.top) / s);
  };

  return (
    <div className="ft-minimap" data-testid="fork-tree-minimap">
      <svg
        width={w}
        height={h}
        role="img"
        aria-label="Minimap of the fork tree: click or drag to move the view"
        onPointerDown={(e) => {
          if (e.button !== 0) return;
          dragging.current = e.pointerId;
          e.currentTarget.setPointerCapture?.(e.pointerId);
          moveTo(e);
        }}
        onPointerMove={(e) => dragging.current === e.pointerId && moveTo(e)}
        onPointerUp={() => (dragging.current = null)}
        onPointerCancel={() => (dragging.current = null)}
      >
        <MinimapNodes layout={layout} s={s} activeId={activeId} currentId={currentId} />
        <rect
          className="ft-mm-view"
          data-testid="fork-tree-minimap-view"
          x={r.x * s}
          y={r.y * s}
          width={Math.max(2, r.w * s)}
          height={Math.max(2, r.h * s)}
        />
      </svg>
    </div>
  );
}
