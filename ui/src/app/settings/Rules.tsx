import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import type { PermissionsView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices } from "../context";
import { TriangleAlert } from "lucide-react";

export function Rules({
  directory,
  agents,
  defaultAgent,
  globalConfig,
}: {
  directory: string;
  agents: string[];
  defaultAgent: string;
  /** The global config's path: its rules are marked as yours (edited above). */
  globalConfig?: string;
}) {
  const { api } = useServices();
  const [agent, setAgent] = useState(defaultAgent);
  // The rules shown are those of the directory and agent picked (none while they load).
  const query = useQuery({ queryKey: keys.permissions(directory, agent), queryFn: () => api.permissions(directory, agent) });
  const view: PermissionsView | null = query.data ?? null;
  const error = query.error ? errorMessage(query.error) : null;
  return (
    <section>
      <h3>
        All rules in check order, for{" "}
        <select
          className="input inline"
          value={agent}
          onChange={(e) => setAgent(e.target.value)}
          aria-label="Agent"
          data-testid="rules-agent"
        >
          {agents.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </h3>
      {error && <p className="error-text">{error}</p>}
      {view && (
        <>
          {!view.trusted && <p className="warning small">This project is not trusted: its own config may only restrict (deny or ask), not allow. Trust it with `mia-code permissions trust`.</p>}
          {view.warnings.map((w) => (
            <p key={w} className="warning small" role="note">
              <TriangleAlert size={12} aria-hidden /> {w}
            </p>
          ))}
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Permission rules">
            <table className="table" data-testid="rules-table">
              <thead>
                <tr>
                  <th>#</th>
                  <th>Permission</th>
                  <th>Pattern</th>
                  <th>Action</th>
                  <th>Layer</th>
                  <th>Source</th>
                </tr>
              </thead>
              <tbody>
                {view.rules.map((r, i) => (
                  <tr key={i}>
                    <td className="muted">{i + 1}</td>
                    <td className="mono">{r.permission}</td>
                    <td className="mono">{r.pattern ?? "*"}</td>
                    <td className={`action-${r.action}`}>{r.action}</td>
                    <td>
                      {r.layer}
                      {globalConfig && r.layer === "global" && r.source.startsWith(`${globalConfig} #`) && (
                        <span className="chip rules-yours"> yours</span>
                      )}
                    </td>
                    <td className="mono small">{r.source}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
