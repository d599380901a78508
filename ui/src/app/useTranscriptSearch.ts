import { useEffect, useMemo, type Dispatch, type SetStateAction } from "react";
import type { SessionState } from "../state/session";
import { clearHighlight, highlightText } from "../lib/highlightText";
import { transcriptMatches } from "../lib/transcriptSearch";

export type SearchState = { query: string; at: number } | null;

/**
 * Transcript search: Ctrl/Cmd+F (or the palette's "Search in this session") opens it; the
 * matching messages, the current one, and its words marked once it is drawn.
 */
export function useTranscriptSearch(search: SearchState, setSearch: Dispatch<SetStateAction<SearchState>>, state: SessionState) {
  useEffect(() => {
    const open = () => setSearch((s) => s ?? { query: "", at: 0 });
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "f") {
        if (document.querySelector("[role='dialog']")) return;
        e.preventDefault();
        open();
        // Already open: back to its field.
        document.querySelector<HTMLInputElement>("[data-testid='transcript-search-input']")?.focus();
      }
    };
    document.addEventListener("keydown", onKey);
    window.addEventListener("mia-transcript-search", open);
    return () => {
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("mia-transcript-search", open);
    };
  }, [setSearch]);
  const matches = useMemo(
    () => (search ? transcriptMatches(state.live.length ? [...state.messages, ...state.live] : state.messages, state.tools, search.query) : []),
    [search, state.messages, state.live, state.tools],
  );
  const currentMatch = search && matches.length ? matches[Math.min(search.at, matches.length - 1)]! : null;
  // The words themselves, marked in the current match once it is drawn (it may be scrolled in
  // first), and marked again whenever the conversation's DOM changes under them: a mark is a
  // Range over text nodes, and a block drawn again (a streamed block finishing, code highlighted
  // once its grammar has loaded, the row scrolled out and back) replaces those nodes.
  const searchQuery = search?.query ?? "";
  useEffect(() => {
    if (!currentMatch) {
      clearHighlight();
      return;
    }
    let frames = 0;
    let raf = 0;
    let observer: MutationObserver | null = null;
    const row = () => document.querySelector('[data-testid="conversation"] [data-highlighted="true"]');
    const mark = () => {
      const r = row();
      if (!r && frames++ <= 30) {
        raf = requestAnimationFrame(mark);
        return;
      }
      highlightText(r, searchQuery);
      const conversation = document.querySelector('[data-testid="conversation"]');
      if (conversation && typeof MutationObserver !== "undefined") {
        // Marking changes nothing in the DOM (CSS Custom Highlight API), so this cannot loop.
        observer = new MutationObserver(() => highlightText(row(), searchQuery));
        observer.observe(conversation, { childList: true, subtree: true, characterData: true });
      }
    };
    raf = requestAnimationFrame(mark);
    return () => {
      cancelAnimationFrame(raf);
      observer?.disconnect();
    };
  }, [currentMatch, searchQuery, state.messages]);
  useEffect(() => () => clearHighlight(), []);

  return { matches, currentMatch };
}
