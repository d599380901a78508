import type { ComponentProps, ReactNode, RefObject } from "react";
import { ListBox, ListBoxItem } from "react-aria-components";
import { TriangleAlert } from "lucide-react";
import { isBroken, shortError, type MenuCommand } from "./commandMenu";

/** An @ option: an agent to delegate to, or a project file. */
export type Mention = { kind: "agent" | "file"; value: string; description?: string };

export const mentionKey = (m: Mention) => `${m.kind}:${m.value}`;

/**
 * The option react-aria's virtual focus is on in a suggestion list (what Enter and Tab pick),
 * by its key; null when none is.
 */
export function focusedOption(list: HTMLElement | null): string | null {
  return list?.querySelector<HTMLElement>('[role="option"][data-focused]')?.dataset.key ?? null;
}

/**
 * An option's element as react-aria renders it, with what it does not set without selection: the
 * current option is `aria-selected` (as the WAI-ARIA combobox examples do), and a command that
 * does not apply here `aria-disabled` while it can still be run (to say why).
 */
function optionElement(props: ComponentProps<"div"> | ComponentProps<"a">, current: boolean, disabled?: boolean) {
  // A div: these options have no href (react-aria renders a link for those).
  return <div {...(props as ComponentProps<"div">)} aria-selected={current} aria-disabled={disabled || undefined} />;
}

/**
 * A suggestion list under the Autocomplete that wraps the composer: a react-aria ListBox whose
 * first option is current when it opens (the arrows move, wrapping; the composer's Enter or Tab
 * picks; a click picks). The current option is marked `active` and `aria-selected`, as the
 * WAI-ARIA combobox examples do.
 */
function Suggestions<T extends object>({
  listRef,
  label,
  testId,
  items,
  itemKey,
  onPick,
  note,
  disabledKeys,
  children,
}: {
  listRef: RefObject<HTMLDivElement | null>;
  label: string;
  testId: string;
  items: T[];
  itemKey: (item: T) => string;
  onPick: (item: T) => void;
  /** A line above the options (files still loading). */
  note?: ReactNode;
  /** Options that cannot be picked: the arrows pass over them, a click does nothing. */
  disabledKeys?: string[];
  children: (item: T) => ReactNode;
}) {
  return (
    <div className="popup">
      {note}
      <ListBox
        ref={listRef}
        className="popup-list"
        aria-label={label}
        data-testid={testId}
        items={items.map((item) => ({ id: itemKey(item), item }))}
        autoFocus="first"
        shouldFocusWrap
        disabledKeys={disabledKeys}
        onAction={(key) => {
          const picked = items.find((item) => itemKey(item) === key);
          if (picked) onPick(picked);
        }}
      >
        {({ item }) => children(item)}
      </ListBox>
    </div>
  );
}

/** The @ popup: the agents to delegate to, then the project's files. */
export function MentionSuggestions({
  listRef,
  options,
  loading,
  onPick,
}: {
  listRef: RefObject<HTMLDivElement | null>;
  options: Mention[];
  /** The project's files are still being listed. */
  loading: boolean;
  onPick: (m: Mention) => void;
}) {
  return (
    <Suggestions
      listRef={listRef}
      label="Files"
      testId="mention-popup"
      items={options}
      itemKey={mentionKey}
      onPick={onPick}
      note={loading && <div className="muted small popup-note">Loading files…</div>}
    >
      {(m) => (
        <ListBoxItem
          id={mentionKey(m)}
          textValue={m.value}
          className={({ isFocused }) => (isFocused ? "active" : "")}
          data-testid={m.kind === "agent" ? "mention-agent" : "mention-option"}
          data-kind={m.kind}
          render={(props, { isFocused }) => optionElement(props, isFocused)}
        >
          {m.kind === "agent" ? (
            <>
              <span className="mono">@{m.value}</span> <span className="muted small">agent · {m.description}</span>
            </>
          ) : (
            <span className="mono">{m.value}</span>
          )}
        </ListBoxItem>
      )}
    </Suggestions>
  );
}

/**
 * The / menu: the built-in commands, those that do not apply here greyed with why (running one
 * explains it); then the project's custom commands with their argument hint, description and where
 * they come from, a file that is not used greyed with why (it cannot be picked).
 */
export function CommandSuggestions({
  listRef,
  options,
  disabled,
  onPick,
}: {
  listRef: RefObject<HTMLDivElement | null>;
  options: MenuCommand[];
  disabled?: Partial<Record<string, string>>;
  onPick: (c: MenuCommand) => void;
}) {
  const broken = options.filter(isBroken).map((c) => c.key);
  const firstCustom = options.find((c) => c.kind === "custom");
  return (
    <Suggestions
      listRef={listRef}
      label="Commands"
      testId="command-menu"
      items={options}
      itemKey={(c) => c.key}
      onPick={onPick}
      disabledKeys={broken}
    >
      {(c) => {
        if (c.kind === "custom") return <CustomCommandOption c={c} first={c === firstCustom && c !== options[0]} />;
        const why = disabled?.[c.name];
        return (
          <ListBoxItem
            id={c.key}
            textValue={c.name}
            className={({ isFocused }) => `${isFocused ? "active" : ""}${why ? " disabled" : ""}`}
            data-testid="command-option"
            data-command={c.name}
            render={(props, { isFocused }) => optionElement(props, isFocused, !!why)}
          >
            <span className="mono">/{c.name}</span>
            {c.args && <span className="mono muted"> {c.args}</span>} <span className="muted">{c.description}</span>
            {why && <span className="muted small"> — {why}</span>}
          </ListBoxItem>
        );
      }}
    </Suggestions>
  );
}

/** A custom command's option; `first`: the first one after the built-ins (a line above it). */
function CustomCommandOption({ c, first }: { c: Extract<MenuCommand, { kind: "custom" }>; first: boolean }) {
  const error = c.error;
  const classes = (focused: boolean) =>
    ["command-custom", focused && "active", error && "disabled broken", first && "command-custom-first"].filter(Boolean).join(" ");
  return (
    <ListBoxItem
      id={c.key}
      textValue={c.name}
      className={({ isFocused }) => classes(isFocused)}
      data-testid="command-option"
      data-command={c.name}
      data-source={c.source}
      data-broken={error ? "true" : undefined}
      render={(props, { isFocused }) => (
        <div
          {...(props as ComponentProps<"div">)}
          aria-selected={isFocused}
          title={error ? `${c.path}: not used — ${error}` : c.path}
        />
      )}
    >
      <span className="mono">/{c.name}</span>
      {c.args && <span className="mono muted"> {c.args}</span>}{" "}
      <span className="command-source" data-testid="command-source">
        {c.source}
      </span>{" "}
      {error ? (
        <span className="command-error small" data-testid="command-error">
          <TriangleAlert size={12} aria-hidden /> not used: {shortError(error)}
        </span>
      ) : (
        c.description && <span className="muted">{c.description}</span>
      )}
    </ListBoxItem>
  );
}
