import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { ModelChoice } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { formatTokens } from "../lib/format";

/** "$3 / $15 per M tokens" (input / output). */
export function priceText(m: Pick<ModelChoice, "input_price" | "output_price">): string {
  const p = (x: number) => `$${Number.isInteger(x) ? x : x.toFixed(x < 1 ? 3 : 2).replace(/0+$/, "")}`;
  if (m.input_price === 0 && m.output_price === 0) return "free / unpriced";
  return `${p(m.input_price)} / ${p(m.output_price)} per M tokens`;
}

/**
 * The model button's hint. Order (as the runtime resolves it): the model picked with /model for
 * this agent in this session, the agent's own model, the session's model, the configured default.
 */
export function modelHint(
  picked: string | null | undefined,
  agentModel: string | null | undefined,
  sessionModel: string | null | undefined,
  agent: string,
): string {
  if (picked)
    return `Picked for ${agent} in this session (/model); "Default" goes back to ${
      agentModel ? `${agent}'s own model (${agentModel})` : "the configured default"
    }`;
  if (agentModel) return `${agent}'s own model (${agentModel}); pick another for this session (/model)`;
  if (sessionModel) return `The session's model (${sessionModel}); pick another for ${agent} (/model)`;
  return "The configured default model; pick one for this session (/model)";
}

type Option = { id: string | null; model?: ModelChoice };

/**
 * The composer's model picker: a combobox (type to filter) over the models of the configured
 * providers with their context window and prices, and "Default" (back to the configuration).
 * Choosing calls `onPick`; a refused model leaves the picker open with the server's text.
 */
export function ModelPicker({
  load,
  current,
  onPick,
  onClose,
}: {
  load: () => Promise<ModelChoice[]>;
  current: string | null;
  /** Resolves when set; rejects with the server's error (shown in the picker). */
  onPick: (model: string | null) => Promise<void>;
  onClose: () => void;
}) {
  const [models, setModels] = useState<ModelChoice[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const listId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let alive = true;
    load().then(
      (m) => alive && setModels(m),
      (e: unknown) => alive && setLoadError(errorMessage(e)),
    );
    inputRef.current?.focus();
    return () => {
      alive = false;
    };
  }, [load]);

  const options: Option[] = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = (models ?? []).filter((m) => !q || m.id.toLowerCase().includes(q));
    const all: Option[] = list.map((m) => ({ id: m.id, model: m }));
    // A typed reference the list does not have can still be tried (the server says if it is bad).
    if (q.includes("/") && !list.some((m) => m.id.toLowerCase() === q)) all.push({ id: query.trim() });
    if (!q || "default".startsWith(q)) all.unshift({ id: null });
    return all;
  }, [models, query]);
  const at = Math.min(active, Math.max(0, options.length - 1));

  const choose = async (o: Option | undefined) => {
    if (!o || busy) return;
    setBusy(true);
    setError(null);
    try {
      await onPick(o.id);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const d = e.key === "ArrowDown" ? 1 : -1;
      setActive((at + d + options.length) % Math.max(1, options.length));
    } else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      setActive(e.key === "Home" ? 0 : options.length - 1);
    } else if (e.key === "Enter") {
      e.preventDefault();
      void choose(options[at]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onClose();
    }
  };

  return (
    <div
      ref={rootRef}
      className="popup model-picker"
      data-testid="model-picker"
      onBlur={(e) => {
        if (!rootRef.current?.contains(e.relatedTarget)) onClose();
      }}
    >
      <input
        ref={inputRef}
        className="input model-filter"
        role="combobox"
        aria-label="Model"
        aria-expanded
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={options.length ? `${listId}-${at}` : undefined}
        placeholder="Filter, or type provider/model"
        data-testid="model-filter"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
          setError(null);
        }}
        onKeyDown={onKeyDown}
      />
      {error && (
        <div className="error-text small model-error" role="alert" data-testid="model-error">
          {error}
        </div>
      )}
      {loadError && (
        <div className="error-text small" role="alert">
          Could not list the models: {loadError}
        </div>
      )}
      {!models && !loadError && <div className="muted small">Loading the models…</div>}
      <ul className="model-list" role="listbox" id={listId} aria-label="Models" aria-busy={busy}>
        {options.map((o, i) => (
          <li
            key={o.id ?? "(default)"}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === at}
            className={`${i === at ? "active" : ""}${o.id === current ? " current" : ""}`}
            data-testid="model-option"
            data-model={o.id ?? ""}
            onMouseDown={(e) => {
              e.preventDefault();
              setActive(i);
              void choose(o);
            }}
          >
            {o.id === null ? (
              <>
                <span>Default</span> <span className="muted small">the agent's or the configured model</span>
              </>
            ) : o.model ? (
              <>
                <span className="mono">{o.model.id}</span>
                <span className="muted small model-facts">
                  {formatTokens(o.model.context_window)} context · {priceText(o.model)}
                  {o.model.reasoning ? " · reasoning" : ""}
                </span>
              </>
            ) : (
              <>
                <span className="mono">{o.id}</span> <span className="muted small">(not in the list: try it)</span>
              </>
            )}
            {(o.id ?? null) === current && <span className="muted small"> (current)</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}
