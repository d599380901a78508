import { useCallback, useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from "react";
import { fitView, zoomAt, ZOOM_STEP, type Size, type View } from "./viewport";

/**
 * Pan and zoom of the fork tree's viewport: its size (followed with a
 * ResizeObserver), the wheel (pans; with Ctrl/Cmd, or a trackpad pinch, zooms
 * at the pointer) and dragging the background to pan.
 */
export function useViewport() {
  const ref = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const [size, setSize] = useState<Size>({ w: 0, h: 0 });
  const drag = useRef<{ id: number; sx: number; sy: number; x: number; y: number } | null>(null);
  const [dragging, setDragging] = useState(false);
  const viewNow = useRef(view);
  useEffect(() => {
    viewNow.current = view;
  }, [view]);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setSize((s) => (s.w === el.clientWidth && s.h === el.clientHeight ? s : { w: el.clientWidth, h: el.clientHeight }));
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const box = el.getBoundingClientRect();
      if (e.ctrlKey || e.metaKey) {
        // Pixels, lines or pages: about a step per notch of a mouse wheel, smooth on a trackpad.
        const dy = e.deltaMode === 1 ? e.deltaY * 20 : e.deltaMode === 2 ? e.deltaY * 400 : e.deltaY;
        const factor = Math.exp(-Math.max(-100, Math.min(100, dy)) * 0.0022);
        setView((v) => zoomAt(v, factor, e.clientX - box.left, e.clientY - box.top));
      } else {
        const dx = e.shiftKey && !e.deltaX ? e.deltaY : e.deltaX;
        const dy = e.shiftKey && !e.deltaX ? 0 : e.deltaY;
        setView((v) => ({ ...v, x: v.x - dx, y: v.y - dy }));
      }
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => el.removeEventListener("wheel", onWheel);
  }, []);

  const zoomBy = useCallback(
    (factor: number) => setView((v) => zoomAt(v, factor, size.w / 2, size.h / 2)),
    [size.w, size.h],
  );
  const zoomIn = useCallback(() => zoomBy(ZOOM_STEP), [zoomBy]);
  const zoomOut = useCallback(() => zoomBy(1 / ZOOM_STEP), [zoomBy]);
  const fit = useCallback((content: Size) => setView(fitView(content, size)), [size]);

  /** Dragging the background (not a session, a label or a control) pans. */
  const onPointerDown = useCallback((e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.button !== 0 || (e.target as Element).closest?.(".ft-node, button, .ft-minimap, .ft-controls")) return;
    drag.current = { id: e.pointerId, sx: e.clientX, sy: e.clientY, x: viewNow.current.x, y: viewNow.current.y };
    e.currentTarget.setPointerCapture?.(e.pointerId);
    setDragging(true);
  }, []);
  const onPointerMove = useCallback((e: ReactPointerEvent<HTMLDivElement>) => {
    const d = drag.current;
    if (!d || d.id !== e.pointerId) return;
    const x = d.x + e.clientX - d.sx;
    const y = d.y + e.clientY - d.sy;
    setView((v) => (v.x === x && v.y === y ? v : { ...v, x, y }));
  }, []);
  const onPointerUp = useCallback((e: ReactPointerEvent<HTMLDivElement>) => {
    if (drag.current?.id !== e.pointerId) return;
    drag.current = null;
    setDragging(false);
  }, []);

  return {
    ref,
    view,
    setView,
    size,
    dragging,
    zoomIn,
    zoomOut,
    fit,
    pointer: { onPointerDown, onPointerMove, onPointerUp, onPointerCancel: onPointerUp },
  };
}
