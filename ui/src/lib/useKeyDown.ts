import { useEffect, useEffectEvent, type RefObject } from "react";

/**
 * A container's own keys (a dialog's answer keys, Escape to cancel a panel), heard wherever the
 * focus is inside it. A native listener on the element, so the container itself stays a plain,
 * non-interactive landmark; `stopPropagation` in the handler keeps the key from window-level
 * shortcuts.
 */
export function useKeyDown(ref: RefObject<HTMLElement | null>, handler: (e: KeyboardEvent) => void): void {
  const onKey = useEffectEvent((e: KeyboardEvent) => handler(e));
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const listener = (e: KeyboardEvent) => onKey(e);
    el.addEventListener("keydown", listener);
    return () => el.removeEventListener("keydown", listener);
  }, [ref]);
}
