import type { AgentInfo } from "../../protocol/generated";
import { Plus } from "lucide-react";

export function Agents({ agents, onCreate }: { agents: AgentInfo[]; onCreate?: () => void }) {
  return (
    <section>
      <h3>Agents</h3>
      {/* Focusable so the keyboard can scroll it (axe: scrollable-region-focusable). */}
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Agents">
        <table className="table" data-testid="settings-agents">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Mode</th>
              <th>Description</th>
              <th>Model</th>
              <th>Timeout</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.name} data-testid="settings-agent" data-agent={a.name}>
                <td className="mono">{a.name}</td>
                <td>{a.mode}</td>
                <td className="small">{a.description}</td>
                <td className="mono small">{a.model ?? <span className="muted">default</span>}</td>
                <td className="small">{a.timeout_secs ? `${a.timeout_secs} s` : ""}</td>
                <td className="mono small">{a.source ?? (a.builtin ? "built-in" : "")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {onCreate && (
        <div className="row-end">
          <button type="button" className="btn" data-testid="settings-create-agent" title="Also: /agent create" onClick={onCreate}>
            <Plus size={13} aria-hidden />
            Create an agent…
          </button>
        </div>
      )}
    </section>
  );
}
