import type { PlacedNode, TreeLayout } from "../forkTreeModel";
import { NODE_H, NODE_W } from "../forkTreeModel";

/** Pan and zoom: a world point (x, y) is drawn at (view.x + x·k, view.y + y·k). */
export interface View {
  x: number;
  y: number;
  k: number;
}
export interface Size {
  w: number;
  h: number;
}
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export const MIN_ZOOM = 0.2;
export const MAX_ZOOM = 2;
/** One step of the zoom buttons and keys. */
export const ZOOM_STEP = 1.25;
/** Opening a big tree zooms out to fit, but not below this (titles stay readable). */
export const OPEN_MIN_ZOOM = 0.6;
const PAD = 24;

export const clampZoom = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

/** The zoom at which the whole tree fits in the viewport (at most 1: a small tree is not blown up). */
export function fitZoom(content: Size, viewport: Size): number {
  if (content.w <= 0 || content.h <= 0 || viewport.w <= 0 || viewport.h <= 0) return 1;
  return clampZoom(Math.min(1, (viewport.w - 2 * PAD) / content.w, (viewport.h - 2 * PAD) / content.h));
}

/** The whole tree in view, centred (or at `k`, centred as far as it goes). */
export function fitView(content: Size, viewport: Size, k = fitZoom(content, viewport)): View {
  return {
    k,
    x: centre(viewport.w, content.w * k),
    y: centre(viewport.h, content.h * k),
  };
}

// A tree smaller than the viewport is centred; a bigger one starts at its top left corner.
const centre = (room: number, size: number) => (size <= room ? (room - size) / 2 : 0);

/** Zoom by `factor` keeping the world point under (px, py) (viewport coordinates) in place. */
export function zoomAt(view: View, factor: number, px: number, py: number): View {
  const k = clampZoom(view.k * factor);
  const f = k / view.k;
  return { k, x: px - (px - view.x) * f, y: py - (py - view.y) * f };
}

/** The part of the world the viewport shows. */
export function worldRect(view: View, viewport: Size): Rect {
  return { x: -view.x / view.k, y: -view.y / view.k, w: viewport.w / view.k, h: viewport.h / view.k };
}

/** The view moved as little as needed for a node to be wholly in sight (with a margin). */
export function revealNode(view: View, viewport: Size, n: PlacedNode): View {
  const m = 16;
  const left = view.x + n.x * view.k;
  const top = view.y + n.y * view.k;
  const right = left + NODE_W * view.k;
  const bottom = top + NODE_H * view.k;
  let { x, y } = view;
  if (right > viewport.w - m) x -= right - (viewport.w - m);
  if (left + (x - view.x) < m) x += m - (left + (x - view.x));
  if (bottom > viewport.h - m) y -= bottom - (viewport.h - m);
  if (top + (y - view.y) < m) y += m - (top + (y - view.y));
  return x === view.x && y === view.y ? view : { ...view, x, y };
}

/** The view with the world point (wx, wy) in the middle of the viewport. */
export function centreOn(view: View, viewport: Size, wx: number, wy: number): View {
  return { ...view, x: viewport.w / 2 - wx * view.k, y: viewport.h / 2 - wy * view.k };
}

/**
 * The drawn sessions in or near the view (a margin of half a viewport around
 * it, so a pan shows no empty border), plus `keep` (the selected one, which
 * the tree's aria-activedescendant points at). An unknown viewport size
 * (not laid out yet) culls nothing.
 */
export function cullNodes(ids: string[], layout: TreeLayout, view: View, viewport: Size, keep: string | null): string[] {
  if (viewport.w <= 0 || viewport.h <= 0) return ids;
  const r = worldRect(view, viewport);
  const mx = r.w / 2;
  const my = r.h / 2;
  return ids.filter((id) => {
    if (id === keep) return true;
    const n = layout.nodes.get(id);
    if (!n) return false;
    return n.x + NODE_W >= r.x - mx && n.x <= r.x + r.w + mx && n.y + NODE_H >= r.y - my && n.y <= r.y + r.h + my;
  });
}

/** Whether the tree is bigger than the viewport at this zoom. */
export function overflows(layout: TreeLayout, view: View, viewport: Size): boolean {
  return layout.width * view.k > viewport.w + 1 || layout.height * view.k > viewport.h + 1;
}
