import { useEffect } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { ApprovalView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { relativeTime } from "../../lib/format";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";

export function Approvals({ directory }: { directory: string }) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  const query = useQuery({ queryKey: keys.approvals(directory), queryFn: () => api.approvals(directory) });
  const list: ApprovalView[] | null = query.data ?? null;
  const failed = query.error;
  useEffect(() => {
    if (failed) toast(errorMessage(failed));
  }, [failed, toast]);
  const revoke = async (id: number) => {
    try {
      await api.revokeApproval(directory, id);
    } catch (e) {
      toast(errorMessage(e));
    }
    await queryClient.invalidateQueries({ queryKey: keys.approvals(directory) });
  };
  return (
    <section>
      <h3>Project approvals</h3>
      {list?.length === 0 && <p className="muted small">No "always for this project" approvals.</p>}
      {list && list.length > 0 && (
        <table className="table" data-testid="approvals">
          <thead>
            <tr>
              <th>Permission</th>
              <th>Pattern</th>
              <th>Agent</th>
              <th>Added</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.id}>
                <td className="mono">{a.permission}</td>
                <td className="mono">{a.pattern}</td>
                <td>{a.agent ?? "any"}</td>
                <td className="small">{relativeTime(a.created_at)}</td>
                <td>
                  <button type="button" className="btn small" onClick={() => void revoke(a.id)} data-testid="revoke-approval">
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

