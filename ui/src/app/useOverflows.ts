import { useLayoutEffect, useState, type RefObject } from "react";

/**
 * Whether an element's content is taller than the element (it scrolls). A region that scrolls
 * is made reachable by Tab (tabIndex 0) so it can be scrolled without a mouse (WCAG 2.1.1); one
 * that does not is left out of the tab order. Follows size changes (ResizeObserver on the element
 * and its content).
 */
export function useOverflows(ref: RefObject<HTMLElement | null>): boolean {
  const [overflows, setOverflows] = useState(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = () => setOverflows(el.scrollHeight > el.clientHeight + 1);
    check();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(check);
    ro.observe(el);
    for (const child of Array.from(el.children)) ro.observe(child);
    const mo = new MutationObserver(() => {
      for (const child of Array.from(el.children)) ro.observe(child);
      check();
    });
    mo.observe(el, { childList: true });
    return () => {
      ro.disconnect();
      mo.disconnect();
    };
  }, [ref]);
  return overflows;
}
