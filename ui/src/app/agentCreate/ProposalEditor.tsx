import { useId } from "react";
import type { AgentProposal, ModelChoice, ProposedRule } from "../../protocol/generated";
import { MODES } from "./fields";

/** The proposal edited inline: its description, mode, model and why, each rule, and the prompt. */
export function ProposalEditor({
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
