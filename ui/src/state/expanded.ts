import { useCallback, useSyncExternalStore } from "react";

/**
 * Which tool cards are expanded, by call id (and whose long output shows in full: `<id>#all`), outside React: a card scrolled
 * out of the virtualised transcript, a new message or a switch to another
 * session and back does not fold it again. Kept for the window's life.
 */
const expanded = new Set<string>();
const listeners = new Set<() => void>();

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function isExpanded(callId: string): boolean {
  return expanded.has(callId);
}

export function setExpanded(callId: string, open: boolean): void {
  if (open === expanded.has(callId)) return;
  if (open) expanded.add(callId);
  else expanded.delete(callId);
  for (const l of listeners) l();
}

/** `[expanded, toggle]` for one tool card. */
export function useExpanded(callId: string): [boolean, () => void] {
  const open = useSyncExternalStore(
    subscribe,
    () => expanded.has(callId),
    () => false,
  );
  const toggle = useCallback(() => setExpanded(callId, !expanded.has(callId)), [callId]);
  return [open, toggle];
}
