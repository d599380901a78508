import { useEffect, useState, type RefObject } from "react";

/**
 * The element's width as laid out, followed as it changes (ResizeObserver); null before the
 * first measurement and where there is no layout (jsdom, a hidden panel: width 0).
 */
export function useWidth(ref: RefObject<HTMLElement | null>): number | null {
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver((entries) => {
      const w = entries[entries.length - 1]?.contentRect.width ?? 0;
      setWidth(w > 0 ? w : null);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}
