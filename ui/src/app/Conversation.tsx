import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, type MouseEvent } from "react";
import { useVirtualizer, type Virtualizer, type VirtualItem } from "@tanstack/react-virtual";
import type { Message } from "../protocol/generated";
import { Lru } from "../lib/lru";
import type { HookNote, SessionState } from "../state/session";
import { HookNotes } from "./HookRuns";
import { MessageView, messageText, type MessageActions } from "./MessageView";

const BOTTOM_SLACK = 48;

const NO_NOTES: HookNote[] = [];

/**
 * The hook runs of no tool call by the row they follow ("" for those before the first row); one
 * whose row is gone (compacted) follows the last.
 */
function notesByRow(notes: HookNote[], rows: Message[]): Map<string, HookNote[]> {
  const out = new Map<string, HookNote[]>();
  if (notes.length === 0 || rows.length === 0) return out;
  const ids = new Set(rows.map((m) => m.id));
  const lastId = rows[rows.length - 1]!.id;
  for (const n of notes) {
    const at = n.after === null ? "" : ids.has(n.after) ? n.after : lastId;
    const list = out.get(at);
    if (list) list.push(n);
    else out.set(at, [n]);
  }
  return out;
}

/**
 * Where the reader was in each session they scrolled up in: the first
 * message in view. Switching away and back returns there instead of to the
 * bottom. Absent: the session follows its bottom.
 */
const readingAt = new Map<string, string>();

/**
 * The rows each recently shown session had measured: handed back to the
 * virtualiser when the session is shown again, so its rows are placed where
 * they were at once (no estimate, no layout read per row, no re-render as
 * each is measured). The last few sessions only.
 */
const measured = new Lru<string, VirtualItem[]>(Number.POSITIVE_INFINITY, 8);
/** The conversation's size when it was last shown: the first rows are chosen for it. */
let lastRect = { width: 0, height: 0 };

/**
 * The transcript, virtualised (only visible rows are in the DOM, measured as
 * they render). Follows the bottom while content grows unless the user
 * scrolled up.
 */
export function Conversation({
  state,
  hideCommentary,
  actions,
  highlight,
}: {
  state: SessionState;
  hideCommentary: boolean;
  actions: MessageActions;
  /** A message to scroll to and mark (a fork point opened from the fork tree). */
  highlight?: string | null;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // Following the bottom, unless the reader had scrolled up in this session (then back there).
  const stick = useRef(!readingAt.has(state.id));
  const liveIds = useMemo(() => new Set(state.live.map((m) => m.id)), [state.live]);
  const rows: Message[] = useMemo(
    () => (state.live.length ? [...state.messages, ...state.live] : state.messages),
    [state.messages, state.live],
  );
  const sessionId = state.id;
  const hookNotes = useMemo(() => notesByRow(state.hookNotes, rows), [state.hookNotes, rows]);
  // Following the bottom while rows change size (a streamed answer grows, code gets highlighted):
  // the virtualiser re-measures rows without a React render (direct DOM updates), so the scroll
  // is kept at the bottom from its change callback, when the total size changed (never on a
  // scroll of the reader's own, which would pull them back down).
  const lastTotal = useRef(-1);
  const onVirtualChange = useCallback((v: Virtualizer<HTMLDivElement, Element>) => {
    const total = v.getTotalSize();
    if (total === lastTotal.current) return;
    lastTotal.current = total;
    const el = scrollRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, []);
  const self = useRef<Virtualizer<HTMLDivElement, Element> | null>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- a notice for React Compiler, which this app does not use (nothing here memoises the virtualizer's results)
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 96,
    overscan: 6,
    getItemKey: (i) => rows[i]?.id ?? i,
    // Rows' positions and the list's height are written to the DOM by the virtualiser; React
    // renders only when the range of rows in view changes.
    directDomUpdates: true,
    initialMeasurementsCache: measured.get(sessionId) ?? [],
    // The first render draws the rows that will be in view (the bottom, or where the reader
    // was), not the top ones to be replaced once the scroll position is set.
    initialRect: lastRect,
    initialOffset: () => {
      const v = self.current;
      if (!v) return 0;
      const at = readingAt.get(sessionId);
      const index = at ? rows.findIndex((m) => m.id === at) : -1;
      // From the measurements alone (asking for an index's offset would ask for this again).
      const total = v.getTotalSize();
      if (index >= 0) return v.measurementsCache[index]?.start ?? 0;
      return Math.max(0, total - lastRect.height);
    },
    onChange: onVirtualChange,
  });
  self.current = virtualizer;
  // Kept for the next time this session is shown (the conversation is mounted per session).
  useEffect(
    () => () => {
      const snapshot = virtualizer.takeSnapshot();
      if (snapshot.length) measured.set(sessionId, snapshot, 0);
      if (virtualizer.scrollRect && virtualizer.scrollRect.height > 0) lastRect = virtualizer.scrollRect;
    },
    [sessionId, virtualizer],
  );

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < BOTTOM_SLACK;
    if (stick.current) readingAt.delete(sessionId);
    else {
      const first = virtualizer.getVirtualItems().find((i) => i.end > el.scrollTop);
      const id = first ? rows[first.index]?.id : undefined;
      if (id) readingAt.set(sessionId, id);
    }
  }, [sessionId, virtualizer, rows]);

  // Another session: back where the reader was in it, else at the bottom.
  const restore = useRef<string | null>(null);
  useLayoutEffect(() => {
    restore.current = readingAt.get(sessionId) ?? null;
    stick.current = restore.current === null;
  }, [sessionId]);
  useLayoutEffect(() => {
    const want = restore.current;
    if (!want) return;
    const index = rows.findIndex((m) => m.id === want);
    if (index < 0) return;
    restore.current = null;
    virtualizer.scrollToIndex(index, { align: "start" });
  }, [rows, virtualizer]);

  // Scrolled to the highlighted message once it has loaded (instead of the bottom).
  const highlighted = useRef<string | null>(null);
  const highlightIndex = highlight ? rows.findIndex((m) => m.id === highlight) : -1;
  useLayoutEffect(() => {
    if (!highlight || highlightIndex < 0 || highlighted.current === highlight) return;
    highlighted.current = highlight;
    stick.current = false;
    virtualizer.scrollToIndex(highlightIndex, { align: "center" });
  }, [highlight, highlightIndex, virtualizer]);

  useLayoutEffect(() => {
    if (!stick.current || rows.length === 0) return;
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [rows]);

  // Keep following while the last row grows (streaming) and gets re-measured.
  useEffect(() => {
    if (stick.current && rows.length) virtualizer.scrollToIndex(rows.length - 1, { align: "end" });
  }, [state.id, rows.length, virtualizer]);

  // Opening a compaction marker's summary or archive grows its row: stay where the reader is
  // (following the bottom would scroll the opened text's start away). Scrolling back down follows again.
  const onClick = useCallback((e: MouseEvent<HTMLDivElement>) => {
    if (e.target instanceof Element && e.target.closest("[data-keep-scroll]")) stick.current = false;
  }, []);

  const lastIndex = rows.length - 1;
  return (
    <div
      className="conversation"
      ref={scrollRef}
      onScroll={onScroll}
      onClickCapture={onClick}
      data-testid="conversation"
      role="log"
      aria-live="off"
      aria-label="Conversation"
      // Scrolled with the keyboard too (PageUp/PageDown, arrows) once focused.
      tabIndex={0}
    >
      {rows.length === 0 &&
        (state.session === null ? (
          !state.error && (
            <div className="empty muted" role="status" data-testid="conversation-loading">
              Loading the conversation…
            </div>
          )
        ) : (
          <div className="empty muted">Ask for something to start. Type @ to mention a file, / for commands.</div>
        ))}
      <div ref={virtualizer.containerRef} style={{ position: "relative", width: "100%" }}>
        {virtualizer.getVirtualItems().map((item) => {
          const m = rows[item.index]!;
          const prev = m.type === "fork" ? rows[item.index - 1] : undefined;
          const marked = m.id === highlight;
          return (
            <div
              key={item.key}
              data-index={item.index}
              ref={virtualizer.measureElement}
              className={marked ? "row row-highlight" : "row"}
              data-highlighted={marked ? "true" : undefined}
              style={{ position: "absolute", top: 0, left: 0, width: "100%" }}
            >
              {item.index === 0 && <HookNotes notes={hookNotes.get("") ?? NO_NOTES} />}
              <MessageView
                message={m}
                tools={state.tools}
                subagents={state.subagents}
                permissions={state.permissions}
                streaming={liveIds.has(m.id)}
                running={state.running}
                hideCommentary={hideCommentary}
                isLast={item.index === lastIndex}
                actions={actions}
                forkPoint={prev ? messageText(prev) : undefined}
              />
              <HookNotes notes={hookNotes.get(m.id) ?? NO_NOTES} />
            </div>
          );
        })}
      </div>
    </div>
  );
}
