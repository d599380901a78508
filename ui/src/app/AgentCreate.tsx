import { useEffect, useId, useRef, useState } from "react";
import type { AgentProposal, ModelChoice, ProposedRule } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { lineDiff } from "../lib/lineDiff";
import { useServices } from "./context";
import { Modal } from "./Modal";

/** The fields of a definition, in the order they are shown (and diffed). */
const FIELDS = ["key", "name", "description", "mode", "model", "model_reason", "permissions", "prompt"] as const;
type Field = (typeof FIELDS)[number];

const FIELD_LABEL: Record<Field, string> = {
  key: "Key",
  name: "Name",
  description: "Description",
  mode: "Mode",
  model: "Model",
  model_reason: "Why this model",
  permissions: "Permissions",
  prompt: "Prompt",
};

const MODES: { value: string; label: string }[] = [
  { value: "subagent", label: "subagent — called by other agents (task, @mention)" },
  { value: "primary", label: "primary — a session's agent (Tab)" },
  { value: "all", label: "all — both" },
];

function ruleText(r: ProposedRule): string {
  return `${r.action} ${r.permission}${r.pattern ? ` ${r.pattern}` : ""}${r.reason ? ` — ${r.reason}` : ""}`;
}

/** A field as text (what the refinement diff compares). */
export function fieldText(p: AgentProposal, f: Field): string {
  switch (f) {
    case "model":
      return p.model ?? "(the session's model)";
    case "model_reason":
      return p.model_reason ?? "";
    case "permissions":
      return p.permissions.map(ruleText).join("\n");
    default:
      return p[f];
  }
}

function isField(s: string): s is Field {
  return (FIELDS as readonly string[]).includes(s);
}

/** The fields a refinement changed: as the server says, else those whose text differs. */
function changedFields(before: AgentProposal, after: AgentProposal): Field[] {
  const said = (after.changed ?? []).filter(isField);
  if (said.length) return FIELDS.filter((f) => said.includes(f));
  return FIELDS.filter((f) => fieldText(before, f) !== fieldText(after, f));
}

function Changes({ before, after, fields }: { before: AgentProposal; after: AgentProposal; fields: Field[] }) {
  return (
    <section className="agent-changes" data-testid="agent-changes" aria-label="What the refinement changed">
      <h3>What changed</h3>
      {fields.map((f) => {
        const a = fieldText(before, f);
        const b = fieldText(after, f);
        return (
          <div key={f} className="agent-change" data-testid="agent-change" data-field={f}>
            <div className="agent-change-field">{FIELD_LABEL[f]}</div>
            {a === b ? (
              <div className="muted small">(the same value as before)</div>
            ) : (
              <pre className="agent-diff" aria-label={`${FIELD_LABEL[f]}: before and after`}>
                {lineDiff(a, b).map((r, i) => (
                  <div key={i} className={`agent-diff-${r.type}`} data-diff={r.type}>
                    <span aria-hidden className="agent-diff-sign">
                      {r.type === "add" ? "+" : r.type === "del" ? "−" : " "}
                    </span>
                    <span className="sr-only">{r.type === "add" ? "after: " : r.type === "del" ? "before: " : ""}</span>
                    {r.text || " "}
                  </div>
                ))}
              </pre>
            )}
          </div>
        );
      })}
    </section>
  );
}

function ProposalView({ p, changed }: { p: AgentProposal; changed: Field[] }) {
  const mark = (f: Field) => (changed.includes(f) ? " agent-field-changed" : "");
  return (
    <div className="agent-preview" data-testid="agent-preview">
      <dl className="agent-fields">
        <dt>Key</dt>
        <dd className={`mono${mark("key")}`} data-testid="agent-key">
          {p.key}
        </dd>
        <dt>Name</dt>
        <dd className={mark("name")} data-testid="agent-name">
          {p.name}
        </dd>
        <dt>Description</dt>
        <dd className={mark("description")} data-testid="agent-field-description">
          {p.description}
        </dd>
        <dt>Mode</dt>
        <dd className={mark("mode")} data-testid="agent-mode">
          {p.mode}
        </dd>
        <dt>Model</dt>
        <dd className={mark("model") + mark("model_reason")} data-testid="agent-model">
          <span className="mono">{p.model ?? "the session's model"}</span>
          {p.model_reason && <div className="muted small">{p.model_reason}</div>}
        </dd>
      </dl>
      <h3 className={mark("permissions")}>Permissions</h3>
      {p.permissions.length === 0 ? (
        <p className="muted small">No rules of its own: the defaults (and the creating agent's limits) apply.</p>
      ) : (
        <table className="table agent-rules" data-testid="agent-rules">
          <thead>
            <tr>
              <th>Permission</th>
              <th>Pattern</th>
              <th>Action</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {p.permissions.map((r, i) => (
              <tr key={i} data-testid="agent-rule">
                <td className="mono">{r.permission}</td>
                <td className="mono">{r.pattern ?? "*"}</td>
                <td className={`action-${r.action}`}>{r.action}</td>
                <td className="small">{r.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3 className={mark("prompt")}>Prompt</h3>
      <pre className="agent-prompt" data-testid="agent-prompt">
        {p.prompt}
      </pre>
    </div>
  );
}

function ProposalEditor({
  draft,
  onChange,
  models,
}: {
  draft: AgentProposal;
  onChange: (p: AgentProposal) => void;
  models: ModelChoice[];
}) {
  const listId = useId();
  const set = (patch: Partial<AgentProposal>) => onChange({ ...draft, ...patch });
  const setRule = (i: number, patch: Partial<ProposedRule>) =>
    set({ permissions: draft.permissions.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  return (
    <div className="agent-editor" data-testid="agent-editor">
      <div className="grid2">
        <label>
          Description
          <input
            className="input"
            value={draft.description}
            data-testid="agent-edit-description"
            onChange={(e) => set({ description: e.target.value })}
          />
        </label>
        <label>
          Mode
          <select className="input" value={draft.mode} data-testid="agent-edit-mode" onChange={(e) => set({ mode: e.target.value })}>
            {MODES.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model (empty: the session's)
          <input
            className="input mono"
            list={listId}
            value={draft.model ?? ""}
            placeholder="provider/model"
            data-testid="agent-edit-model"
            onChange={(e) => set({ model: e.target.value.trim() ? e.target.value : null })}
          />
          <datalist id={listId}>
            {models.map((m) => (
              <option key={m.id} value={m.id} />
            ))}
          </datalist>
        </label>
        <label>
          Why this model
          <input
            className="input"
            value={draft.model_reason ?? ""}
            onChange={(e) => set({ model_reason: e.target.value })}
          />
        </label>
      </div>
      <h3>Permissions</h3>
      <table className="table agent-rules">
        <thead>
          <tr>
            <th>Permission</th>
            <th>Pattern</th>
            <th>Action</th>
            <th>Why</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {draft.permissions.map((r, i) => (
            <tr key={i} data-testid="agent-edit-rule">
              <td>
                <input
                  className="input mono"
                  aria-label={`Rule ${i + 1}: permission`}
                  value={r.permission}
                  onChange={(e) => setRule(i, { permission: e.target.value })}
                />
              </td>
              <td>
                <input
                  className="input mono"
                  aria-label={`Rule ${i + 1}: pattern`}
                  value={r.pattern ?? ""}
                  placeholder="*"
                  onChange={(e) => setRule(i, { pattern: e.target.value || null })}
                />
              </td>
              <td>
                <select
                  className="input"
                  aria-label={`Rule ${i + 1}: action`}
                  value={r.action}
                  onChange={(e) => setRule(i, { action: e.target.value })}
                >
                  <option value="allow">allow</option>
                  <option value="ask">ask</option>
                  <option value="deny">deny</option>
                </select>
              </td>
              <td>
                <input
                  className="input"
                  aria-label={`Rule ${i + 1}: why`}
                  value={r.reason ?? ""}
                  onChange={(e) => setRule(i, { reason: e.target.value })}
                />
              </td>
              <td>
                <button
                  type="button"
                  className="icon-btn"
                  aria-label={`Remove rule ${i + 1}`}
                  onClick={() => set({ permissions: draft.permissions.filter((_, j) => j !== i) })}
                >
                  ×
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button
        type="button"
        className="btn small"
        data-testid="agent-add-rule"
        onClick={() => set({ permissions: [...draft.permissions, { permission: "read", action: "allow", reason: "" }] })}
      >
        + Rule
      </button>
      <label className="agent-edit-prompt">
        Prompt
        <textarea
          className="input mono"
          rows={12}
          value={draft.prompt}
          data-testid="agent-edit-prompt"
          onChange={(e) => set({ prompt: e.target.value })}
        />
      </label>
    </div>
  );
}

type Phase = "describe" | "generating" | "preview" | "saved";

/**
 * `/agent create`: a description → Generate (the model proposes a definition, validated by the
 * server) → the preview (key, name, description, mode, model and why, each rule and why, the full
 * prompt, notes) → Save (project or global), Edit (inline), Refine (what changed shown as a
 * before/after diff of the changed fields) or Cancel. Errors show the server's text.
 */
export function AgentCreate({
  directory,
  agent,
  initialDescription,
  onClose,
  onSaved,
}: {
  directory: string;
  /** The agent creating it (its limits bound the new one); default: the project's default agent. */
  agent?: string;
  initialDescription?: string;
  onClose: () => void;
  /** The agent is saved: refresh the agent lists. */
  onSaved: (proposal: AgentProposal, path: string) => void;
}) {
  const { api } = useServices();
  const [phase, setPhase] = useState<Phase>("describe");
  const [description, setDescription] = useState(initialDescription ?? "");
  const [proposal, setProposal] = useState<AgentProposal | null>(null);
  const [before, setBefore] = useState<AgentProposal | null>(null);
  const [draft, setDraft] = useState<AgentProposal | null>(null);
  const [refineOpen, setRefineOpen] = useState(false);
  const [refineText, setRefineText] = useState("");
  const [busy, setBusy] = useState<null | "refine" | "save">(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<{ path: string; proposal: AgentProposal } | null>(null);
  const [models, setModels] = useState<ModelChoice[]>([]);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  // The models (for the editor's suggestions) load the first time the editor opens.
  const editing = draft !== null;
  useEffect(() => {
    if (!editing || models.length) return;
    api.models(directory).then(
      (m) => alive.current && setModels(m),
      () => undefined,
    );
  }, [api, directory, editing, models.length]);

  const generate = async () => {
    const d = description.trim();
    if (!d) return;
    setError(null);
    setPhase("generating");
    try {
      const p = await api.proposeAgent(directory, d, agent);
      if (!alive.current) return;
      setProposal(p);
      setBefore(null);
      setPhase("preview");
    } catch (e) {
      if (!alive.current) return;
      setError(errorMessage(e));
      setPhase("describe");
    }
  };

  const current = draft ?? proposal;

  const refine = async () => {
    const r = refineText.trim();
    if (!r || !current) return;
    setError(null);
    setBusy("refine");
    try {
      const next = await api.refineAgent(directory, current, r, agent);
      if (!alive.current) return;
      setBefore(current);
      setProposal(next);
      setDraft(null);
      setRefineText("");
      setRefineOpen(false);
    } catch (e) {
      if (alive.current) setError(errorMessage(e));
    } finally {
      if (alive.current) setBusy(null);
    }
  };

  const save = async (to: "project" | "global") => {
    if (!current) return;
    setError(null);
    setBusy("save");
    try {
      const r = await api.saveAgent(directory, { ...current, changed: [] }, to, agent);
      if (!alive.current) return;
      setSaved(r);
      setPhase("saved");
      onSaved(r.proposal, r.path);
    } catch (e) {
      if (alive.current) setError(errorMessage(e));
    } finally {
      if (alive.current) setBusy(null);
    }
  };

  const changed = proposal && before ? changedFields(before, proposal) : [];

  return (
    <Modal title="Create an agent" onClose={onClose} className="modal-agent" testId="agent-create">
      <div className="agent-create">
        {error && (
          <div className="error-banner agent-error" role="alert" data-testid="agent-error">
            <span>{error}</span>
            <button type="button" className="icon-btn" aria-label="Dismiss the error" onClick={() => setError(null)}>
              ×
            </button>
          </div>
        )}
        {phase === "describe" && (
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              void generate();
            }}
          >
            <label className="stack">
              <span>What should the agent do?</span>
              <textarea
                className="input"
                rows={4}
                autoFocus
                value={description}
                placeholder="e.g. reviews changes for security problems and reports them; never edits files"
                data-testid="agent-description"
                onChange={(e) => setDescription(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                    e.preventDefault();
                    void generate();
                  }
                }}
              />
            </label>
            <p className="muted small">
              The model proposes a definition: a name, a mode, a model and why, permission rules each with a reason, and
              the prompt. It is checked (never broader than {agent ? <strong>{agent}</strong> : "the agent creating it"})
              and shown to you; nothing is saved until you choose Save.
            </p>
            <div className="row-end">
              <button type="button" className="btn" onClick={onClose}>
                Cancel
              </button>
              <button type="submit" className="btn primary" data-testid="agent-generate" disabled={!description.trim()}>
                Generate
              </button>
            </div>
          </form>
        )}
        {phase === "generating" && (
          <div className="stack">
            <div className="agent-progress" role="status" data-testid="agent-progress">
              <span className="compaction-dot" aria-hidden>
                ⋯
              </span>{" "}
              Generating the agent… the model writes a definition, then it is checked against your rules.
            </div>
            <p className="muted small">“{description.trim()}”</p>
            <div className="row-end">
              <button type="button" className="btn" onClick={onClose} data-testid="agent-cancel">
                Cancel
              </button>
            </div>
          </div>
        )}
        {phase === "preview" && current && (
          <div className="stack">
            {(current.notes ?? []).length > 0 && (
              <ul className="agent-notes" data-testid="agent-notes" aria-label="Notes from the checks">
                {(current.notes ?? []).map((n, i) => (
                  <li key={i} className="warning small">
                    ⚠ {n}
                  </li>
                ))}
              </ul>
            )}
            {before && proposal && changed.length > 0 && <Changes before={before} after={proposal} fields={changed} />}
            {before && proposal && changed.length === 0 && (
              <p className="muted small" data-testid="agent-changes-none">
                The refinement changed nothing.
              </p>
            )}
            {draft ? (
              <ProposalEditor draft={draft} onChange={setDraft} models={models} />
            ) : (
              <ProposalView p={current} changed={changed} />
            )}
            {refineOpen && (
              <form
                className="agent-refine"
                onSubmit={(e) => {
                  e.preventDefault();
                  void refine();
                }}
              >
                <label className="stack">
                  <span>What should change?</span>
                  <textarea
                    className="input"
                    rows={2}
                    autoFocus
                    value={refineText}
                    placeholder="e.g. also allow running the tests"
                    data-testid="agent-refine-input"
                    onChange={(e) => setRefineText(e.target.value)}
                  />
                </label>
                <div className="row-end">
                  <button type="button" className="btn" onClick={() => setRefineOpen(false)}>
                    Back
                  </button>
                  <button
                    type="submit"
                    className="btn primary"
                    data-testid="agent-refine-send"
                    disabled={!refineText.trim() || busy !== null}
                  >
                    {busy === "refine" ? "Refining…" : "Refine"}
                  </button>
                </div>
                {busy === "refine" && (
                  <div className="muted small" role="status">
                    Asking the model to change the definition…
                  </div>
                )}
              </form>
            )}
            <div className="row-end agent-actions">
              <button type="button" className="btn" onClick={onClose} data-testid="agent-cancel">
                Cancel
              </button>
              {!refineOpen && (
                <button
                  type="button"
                  className="btn"
                  data-testid="agent-refine"
                  disabled={busy !== null}
                  onClick={() => setRefineOpen(true)}
                >
                  Refine…
                </button>
              )}
              <button
                type="button"
                className={`btn${draft ? " toggle on" : ""}`}
                data-testid="agent-edit"
                aria-pressed={draft !== null}
                disabled={busy !== null}
                onClick={() => {
                  if (draft) {
                    setProposal(draft);
                    setBefore(null);
                    setDraft(null);
                  } else setDraft(proposal);
                }}
              >
                {draft ? "Done editing" : "Edit"}
              </button>
              <button
                type="button"
                className="btn"
                data-testid="agent-save-global"
                disabled={busy !== null}
                title="~/.config/mia-code/agents/<key>.md: every project"
                onClick={() => void save("global")}
              >
                Save globally
              </button>
              <button
                type="button"
                className="btn primary"
                data-testid="agent-save-project"
                disabled={busy !== null}
                title=".mia-code/agents/<key>.md in this project"
                onClick={() => void save("project")}
              >
                {busy === "save" ? "Saving…" : "Save to project"}
              </button>
            </div>
          </div>
        )}
        {phase === "saved" && saved && (
          <div className="stack" data-testid="agent-saved">
            <p role="status">
              Saved <strong>{saved.proposal.name || saved.proposal.key}</strong> to <span className="mono">{saved.path}</span>.
            </p>
            <p className="muted small">
              {saved.proposal.mode === "primary"
                ? "It is a primary agent: pick it with Tab in the input."
                : saved.proposal.mode === "all"
                  ? `Pick it with Tab, or delegate to it with @${saved.proposal.key}.`
                  : `Delegate to it with @${saved.proposal.key} in a message (or let an agent call it).`}
            </p>
            <div className="row-end">
              <button type="button" className="btn primary" onClick={onClose} autoFocus>
                Close
              </button>
            </div>
          </div>
        )}
      </div>
    </Modal>
  );
}
