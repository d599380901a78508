/**
 * Marks every occurrence of `query` (case-insensitive) in the text under
 * `root` with the CSS Custom Highlight API (`::highlight(mia-search)`), so the
 * DOM is not changed. Returns how many were marked; 0 and nothing done where
 * the API is missing.
 */
export const SEARCH_HIGHLIGHT = "mia-search";

interface HighlightRegistry {
  set(name: string, h: unknown): void;
  delete(name: string): void;
}

function registry(): { highlights: HighlightRegistry; Highlight: new (...r: Range[]) => unknown } | null {
  const css = (globalThis as { CSS?: { highlights?: HighlightRegistry } }).CSS;
  const Highlight = (globalThis as { Highlight?: new (...r: Range[]) => unknown }).Highlight;
  return css?.highlights && Highlight ? { highlights: css.highlights, Highlight } : null;
}

export function highlightText(root: Element | null, query: string): number {
  const reg = registry();
  if (!reg) return 0;
  const q = query.trim().toLowerCase();
  if (!root || !q) {
    reg.highlights.delete(SEARCH_HIGHLIGHT);
    return 0;
  }
  const ranges: Range[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = (n.textContent ?? "").toLowerCase();
    for (let i = text.indexOf(q); i >= 0; i = text.indexOf(q, i + q.length)) {
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + q.length);
      ranges.push(r);
    }
  }
  if (ranges.length) reg.highlights.set(SEARCH_HIGHLIGHT, new reg.Highlight(...ranges));
  else reg.highlights.delete(SEARCH_HIGHLIGHT);
  return ranges.length;
}

export function clearHighlight(): void {
  registry()?.highlights.delete(SEARCH_HIGHLIGHT);
}
