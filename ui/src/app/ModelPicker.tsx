import { useEffect, useMemo, useRef, useState } from "react";
import { Autocomplete, Input, ListBox, ListBoxItem, TextField } from "react-aria-components";
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

type Option = { key: string; id: string | null; model?: ModelChoice };

/**
 * The composer's model picker: a filter field over the models of the configured providers with
 * their context window and prices, and "Default" (back to the configuration). On
 * react-aria-components' Autocomplete (the field keeps the focus; the arrows, Home/End move a
 * virtual focus through the list; typing makes the best match current). Choosing calls
 * `onPick`; a refused model leaves the picker open with the server's text. Escape, or the focus
 * leaving the picker, closes it.
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
  const rootRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let alive = true;
    load().then(
      (m) => alive && setModels(m),
      (e: unknown) => alive && setLoadError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [load]);

  const options: Option[] = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = (models ?? []).filter((m) => !q || m.id.toLowerCase().includes(q));
    const all: Option[] = list.map((m) => ({ key: m.id, id: m.id, model: m }));
    // A typed reference the list does not have can still be tried (the server says if it is bad).
    if (q.includes("/") && !list.some((m) => m.id.toLowerCase() === q)) all.push({ key: query.trim(), id: query.trim() });
    if (!q || "default".startsWith(q)) all.unshift({ key: DEFAULT_KEY, id: null });
    return all;
  }, [models, query]);

  const choose = async (key: string) => {
    const o = options.find((x) => x.key === key);
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

  return (
    <div
      ref={rootRef}
      className="popup model-picker"
      data-testid="model-picker"
      onBlur={(e) => {
        if (!rootRef.current?.contains(e.relatedTarget)) onClose();
      }}
    >
      <Autocomplete
        inputValue={query}
        onInputChange={(q) => {
          setQuery(q);
          setError(null);
        }}
      >
        <TextField aria-label="Model" className="model-field">
          <Input
            className="input model-filter"
            placeholder="Filter, or type provider/model"
            data-testid="model-filter"
            autoFocus
            onKeyDown={(e) => {
              if (e.key !== "Escape") return;
              e.preventDefault();
              e.stopPropagation();
              onClose();
            }}
          />
        </TextField>
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
        <ListBox
          className="model-list"
          aria-label="Models"
          aria-busy={busy}
          items={options}
          onAction={(key) => void choose(String(key))}
        >
          {(o) => (
            <ListBoxItem
              id={o.key}
              textValue={o.id ?? "Default"}
              className={`model-option${o.id === current ? " current" : ""}`}
              data-testid="model-option"
              data-model={o.id ?? ""}
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
            </ListBoxItem>
          )}
        </ListBox>
      </Autocomplete>
    </div>
  );
}

/** The list's key of "Default" (no model id can be empty). */
const DEFAULT_KEY = "";
