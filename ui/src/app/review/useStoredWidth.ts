import { useCallback, useState, type KeyboardEvent, type PointerEvent } from "react";

const clamp = (w: number, min: number, max: number) => Math.round(Math.min(max, Math.max(min, w)));

function read(key: string, fallback: number): number {
  try {
    const v = Number(localStorage.getItem(key));
    return Number.isFinite(v) && v > 0 ? v : fallback;
  } catch {
    return fallback;
  }
}

/**
 * A pane's width (px) dragged from its left edge and remembered in localStorage (a UI
 * preference). The handle is a focusable separator: arrows move it too.
 */
export function useStoredWidth(key: string, initial: number, min: number, maxOf: () => number) {
  const [width, setWidthState] = useState(() => clamp(read(key, initial), min, Math.max(min, maxOf())));
  const setWidth = useCallback(
    (w: number) => {
      const next = clamp(w, min, Math.max(min, maxOf()));
      setWidthState(next);
      try {
        localStorage.setItem(key, String(next));
      } catch {
        /* storage unavailable: the width lasts for this page */
      }
    },
    [key, min, maxOf],
  );

  const onPointerDown = (e: PointerEvent<HTMLElement>) => {
    e.preventDefault();
    const startX = e.clientX;
    const startW = width;
    const target = e.currentTarget;
    target.setPointerCapture?.(e.pointerId);
    const move = (ev: globalThis.PointerEvent) => setWidth(startW + (startX - ev.clientX));
    const up = () => {
      target.removeEventListener("pointermove", move);
      target.removeEventListener("pointerup", up);
      target.removeEventListener("pointercancel", up);
    };
    target.addEventListener("pointermove", move);
    target.addEventListener("pointerup", up);
    target.addEventListener("pointercancel", up);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    const step = e.shiftKey ? 100 : 20;
    if (e.key === "ArrowLeft") setWidth(width + step);
    else if (e.key === "ArrowRight") setWidth(width - step);
    else if (e.key === "Home") setWidth(maxOf());
    else if (e.key === "End") setWidth(min);
    else return;
    e.preventDefault();
  };

  return { width, setWidth, handle: { onPointerDown, onKeyDown } };
}
