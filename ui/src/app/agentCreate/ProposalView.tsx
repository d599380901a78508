import type { AgentProposal } from "../../protocol/generated";
import type { Field } from "./fields";

/** A proposed definition as it would be saved (the fields the last refinement changed marked). */
export function ProposalView({ p, changed }: { p: AgentProposal; changed: Field[] }) {
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
