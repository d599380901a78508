import { useEffect, useEffectEvent, useMemo, useRef, useState, type KeyboardEvent, memo } from "react";
import fuzzysort from "fuzzysort";
import { Autocomplete } from "react-aria-components";
import type { CommandInfo } from "../protocol/generated";
import { COMMANDS } from "./commands";
import { usePlatform } from "./context";
import { dropMentions, mentionText, type Dropped } from "../lib/dropMentions";
import { PromptField } from "./prompt/PromptField";
import { CommandSuggestions, focusedOption, MentionSuggestions, mentionKey, type Mention } from "./prompt/Suggestions";
import { commandMenuOptions, isBroken, type MenuCommand } from "./prompt/commandMenu";

export interface PromptInputProps {
  /** Project files for @ mentions (cached by the caller). */
  loadFiles: () => Promise<string[]>;
  /** This session's previous user messages, oldest first. */
  history: string[];
  /** Resolves false when sending failed: the text stays in the input. */
  onSend: (text: string) => Promise<boolean>;
  /** A slash command; `args` is the rest of the line for commands that take some (`/model x`). */
  onCommand: (name: string, args?: string) => void;
  /** Tab on an empty input (or with the caret at the start) switches the mode. */
  onToggleMode: () => void;
  running: boolean;
  placeholder?: string;
  /** Unsent text is kept under this key (per session) when the input goes away and comes back. */
  draftKey?: string;
  /** Commands that do not apply here, with why: listed greyed with the reason (running one explains it). */
  disabledCommands?: Partial<Record<string, string>>;
  /**
   * The project's custom slash commands: listed after the built-ins; picking one puts `/name ` in
   * the input for its arguments (the message is expanded when sent). Those with an `error` are
   * listed greyed with it and cannot be picked.
   */
  customCommands?: readonly CommandInfo[];
  /** Agents `@name` delegates to (listed above the files in the @ popup). */
  mentionAgents?: { name: string; description: string }[];
  /** Esc while a turn runs stops it (a second Esc within a second when a draft is being written). */
  onStop?: () => void;
  /** The project's folder: dropped files inside it are mentioned by their relative path. */
  projectDir?: string;
  /** Says why a dropped or pasted file was not mentioned. */
  onNotice?: (message: string) => void;
}

/** A second Esc within this long stops a turn while a draft is in the input. */
export const ESC_AGAIN_MS = 1000;

const drafts = new Map<string, string>();

/** Puts text back as the unsent draft of `key` (an input mounted afterwards shows it). */
export function restoreDraft(key: string, text: string): void {
  if (text) drafts.set(key, text);
}

type Popup = { kind: "mention"; start: number; query: string } | { kind: "command"; query: string } | null;

const MAX_OPTIONS = 12;

function findPopup(text: string, caret: number): Popup {
  const before = text.slice(0, caret);
  const mention = /(^|\s)@([^\s@]*)$/.exec(before);
  if (mention) return { kind: "mention", start: caret - mention[2]!.length - 1, query: mention[2]! };
  // (custom commands' names have colons: `/git:commit`)
  if (/^\/[\w:.-]*$/.test(text) && caret === text.length) return { kind: "command", query: text.slice(1) };
  return null;
}

export const PromptInput = memo(function PromptInput({
  loadFiles,
  history,
  onSend,
  onCommand,
  onToggleMode,
  running,
  placeholder,
  draftKey,
  disabledCommands,
  customCommands,
  mentionAgents,
  onStop,
  projectDir,
  onNotice,
}: PromptInputProps) {
  /** When Esc was pressed over a draft while a turn runs (a second one within ESC_AGAIN_MS stops it). */
  const [escAt, setEscAt] = useState<number | null>(null);
  useEffect(() => {
    if (escAt === null) return;
    const t = setTimeout(() => setEscAt(null), ESC_AGAIN_MS);
    return () => clearTimeout(t);
  }, [escAt]);
  const [text, setTextState] = useState(() => (draftKey ? (drafts.get(draftKey) ?? "") : ""));
  const setText = (value: string) => {
    setTextState(value);
    if (!draftKey) return;
    if (value) drafts.set(draftKey, value);
    else drafts.delete(draftKey);
  };
  const [caret, setCaret] = useState(0);
  const [files, setFiles] = useState<string[] | null>(null);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  /** Position in history while walking with arrows: history.length = the draft. */
  const [histPos, setHistPos] = useState<number | null>(null);
  const draft = useRef("");
  const ref = useRef<HTMLTextAreaElement>(null);
  /** The open suggestion list (react-aria's virtual focus in it is the option Enter and Tab pick). */
  const listRef = useRef<HTMLDivElement>(null);

  const popup = useMemo(() => {
    const p = findPopup(text, caret);
    return p && dismissed !== `${p.kind}:${text}` ? p : null;
  }, [text, caret, dismissed]);

  useEffect(() => {
    if (popup?.kind === "mention" && files === null) {
      let alive = true;
      loadFiles().then(
        (f) => alive && setFiles(f),
        () => alive && setFiles([]),
      );
      return () => {
        alive = false;
      };
    }
  }, [popup?.kind, files, loadFiles]);

  const mentionOptions: Mention[] = useMemo(() => {
    if (popup?.kind !== "mention") return [];
    const q = popup.query.toLowerCase();
    const agents: Mention[] = (mentionAgents ?? [])
      .filter((a) => !q || a.name.toLowerCase().startsWith(q))
      .map((a) => ({ kind: "agent", value: a.name, description: a.description }));
    if (!files) return agents;
    const found = popup.query ? fuzzysort.go(popup.query, files, { limit: MAX_OPTIONS }).map((r) => r.target) : files;
    return [...agents, ...found.slice(0, MAX_OPTIONS).map((f): Mention => ({ kind: "file", value: f }))];
  }, [popup, files, mentionAgents]);

  const commandOptions: MenuCommand[] = useMemo(
    () => (popup?.kind === "command" ? commandMenuOptions(popup.query, customCommands) : []),
    [popup, customCommands],
  );

  const optionCount = popup?.kind === "mention" ? mentionOptions.length : commandOptions.length;
  const popupOpen = popup !== null && (optionCount > 0 || (popup.kind === "mention" && files === null));

  // The suggestions open again (the first option current) whenever the popup changes (another kind or query).
  const popupKey = popup ? `${popup.kind}:${popup.query}` : "";

  const setValue = (value: string, caretAt: number) => {
    setText(value);
    setCaret(caretAt);
    requestAnimationFrame(() => {
      const el = ref.current;
      if (el) {
        el.focus();
        el.setSelectionRange(caretAt, caretAt);
      }
    });
  };

  // Files dropped or pasted: `@` mentions of the project's files, at the caret.
  const mentionDropped = async (dropped: Dropped[]) => {
    if (dropped.length === 0) return;
    const all = dropped.some((d) => !d.path) ? await loadFiles().catch(() => [] as string[]) : [];
    const { mentions, skipped } = dropMentions(dropped, all, projectDir ?? null);
    if (skipped.length) onNotice?.(`Not mentioned: ${skipped.join("; ")}`);
    if (!mentions.length) return;
    const el = ref.current;
    const at = el ? el.selectionStart : text.length;
    const current = el ? el.value : text;
    const before = current.slice(0, at);
    const insert = (before && !/\s$/.test(before) ? " " : "") + mentionText(mentions);
    setValue(before + insert + current.slice(at), at + insert.length);
  };
  const onDesktopDrop = useEffectEvent((paths: string[]) => {
    void mentionDropped(paths.map((p) => ({ name: p.split(/[\\/]/).pop() ?? p, path: p })));
  });
  // The desktop app hands over dropped files with their paths (the webview never sees them).
  const platform = usePlatform();
  useEffect(() => {
    const listen = platform?.onFileDrop;
    if (!listen) return;
    return listen((paths) => onDesktopDrop(paths));
  }, [platform]);

  const pickMention = (m: Mention) => {
    if (popup?.kind !== "mention") return;
    const insert = `@${m.value} `;
    const next = text.slice(0, popup.start) + insert + text.slice(caret);
    setValue(next, popup.start + insert.length);
  };

  // A custom command goes into the input for its arguments (sent as a message, expanded by the
  // backend); a built-in runs.
  const pickCommand = (c: MenuCommand) => {
    if (isBroken(c)) return;
    if (c.kind === "builtin") {
      runCommand(c.name);
      return;
    }
    const insert = `/${c.name} `;
    setValue(insert, insert.length);
  };

  const runCommand = (name: string, args?: string) => {
    // Cleared without taking the focus back: a command may open something that takes it (the
    // model picker closes when it loses the focus).
    setText("");
    setCaret(0);
    if (args) onCommand(name, args);
    else onCommand(name);
  };

  const send = async () => {
    const value = text.trim();
    if (!value || sending) return;
    const cmd = /^\/([\w-]+)(?:\s+([\s\S]*))?$/.exec(value);
    const known = cmd && COMMANDS.find((c) => c.name === cmd[1]);
    // `/undo` alone, or a command that takes arguments with them (`/model anthropic/x`).
    if (known && (!cmd[2] || known.args)) {
      runCommand(known.name, cmd[2]?.trim());
      return;
    }
    setSending(true);
    const ok = await onSend(value).catch(() => false);
    setSending(false);
    if (ok) {
      setValue("", 0);
      setHistPos(null);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    const el = e.currentTarget;
    // The arrows move through the suggestions in PromptField (react-aria's Autocomplete).
    if (popupOpen && optionCount > 0) {
      if ((e.key === "Enter" && !e.shiftKey) || (e.key === "Tab" && !e.shiftKey)) {
        e.preventDefault();
        // The option react-aria's virtual focus is on, else the first.
        const key = focusedOption(listRef.current);
        if (popup?.kind === "mention") pickMention(mentionOptions.find((m) => mentionKey(m) === key) ?? mentionOptions[0]!);
        else if (popup?.kind === "command") {
          // Never one that cannot be picked (with none to pick, Enter does nothing: Esc closes the menu).
          const picked = commandOptions.find((c) => c.key === key) ?? commandOptions.find((c) => !isBroken(c));
          if (picked) pickCommand(picked);
        }
        return;
      }
    }
    if (popupOpen && e.key === "Escape") {
      e.preventDefault();
      setDismissed(`${popup.kind}:${text}`);
      return;
    }
    if (e.key === "Escape" && running && onStop) {
      e.preventDefault();
      const now = e.timeStamp;
      if (!text.trim() || (escAt !== null && now - escAt <= ESC_AGAIN_MS)) {
        setEscAt(null);
        onStop();
      } else {
        setEscAt(now);
      }
      return;
    }
    if (e.key === "Tab" && !e.shiftKey && !popupOpen && (text === "" || (el.selectionStart === 0 && el.selectionEnd === 0))) {
      e.preventDefault();
      onToggleMode();
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
      return;
    }
    if (e.key === "ArrowUp" && history.length && !el.value.slice(0, el.selectionStart).includes("\n")) {
      const pos = histPos ?? history.length;
      if (pos === 0) return;
      // From the first line: the text being written is kept and comes back with Down.
      if (histPos === null) draft.current = text;
      e.preventDefault();
      const v = history[pos - 1]!;
      setHistPos(pos - 1);
      setValue(v, v.length);
      return;
    }
    if (e.key === "ArrowDown" && histPos !== null && !el.value.slice(el.selectionEnd).includes("\n")) {
      e.preventDefault();
      const pos = histPos + 1;
      if (pos >= history.length) {
        setHistPos(null);
        setValue(draft.current, draft.current.length);
      } else {
        setHistPos(pos);
        setValue(history[pos]!, history[pos]!.length);
      }
    }
  };

  return (
    <div className="prompt">
      <Autocomplete inputValue={text}>
        {popupOpen && popup?.kind === "mention" && (
          <MentionSuggestions
            key={popupKey}
            listRef={listRef}
            options={mentionOptions}
            loading={files === null}
            onPick={pickMention}
          />
        )}
        {popupOpen && popup?.kind === "command" && (
          <CommandSuggestions
            key={popupKey}
            listRef={listRef}
            options={commandOptions}
            disabled={disabledCommands}
            onPick={pickCommand}
          />
        )}
        {escAt !== null && running && (
          <span className="esc-hint muted small" data-testid="esc-hint" role="status">
            Press Esc again to stop the turn
          </span>
        )}
        <PromptField
          ref={ref}
          navigate={popupOpen && optionCount > 0}
          className="prompt-input"
          data-testid="prompt-input"
          aria-label="Message"
          placeholder={
            placeholder ??
            (running
              ? "A turn is running… Esc stops it; Enter queues a follow-up"
              : "Ask Mia Code… (@ file, / command, Tab: plan/build)")
          }
          rows={Math.min(10, Math.max(2, text.split("\n").length))}
          value={text}
          role="combobox"
          aria-expanded={popupOpen}
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes("Files")) e.preventDefault();
          }}
          onDrop={(e) => {
            const files = Array.from(e.dataTransfer.files);
            if (files.length === 0) return;
            e.preventDefault();
            void mentionDropped(files.map((f) => ({ name: f.name })));
          }}
          onPaste={(e) => {
            const files = Array.from(e.clipboardData.files);
            if (files.length === 0) return;
            e.preventDefault();
            void mentionDropped(files.map((f) => ({ name: f.name })));
          }}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart);
            setDismissed(null);
            setHistPos(null);
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
          onKeyDown={onKeyDown}
        />
      </Autocomplete>
      <button
        type="button"
        className="btn primary"
        data-testid="send"
        onClick={() => void send()}
        disabled={!text.trim() || sending}
      >
        {running ? "Queue" : "Send"}
      </button>
    </div>
  );
});
