import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { ShareRecord } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { formatDate, relativeTime } from "../../lib/format";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";
import { OpenLink } from "../share/ShareLink";

/** Settings → My shares: every share this machine created (GET /api/shares), each revocable. */
export function MyShares({ onOpenSession }: { onOpenSession?: (id: string) => void }) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: keys.shares(),
    queryFn: async () => {
      const l = await api.shares();
      return Array.isArray(l) ? l : [];
    },
  });
  const list: ShareRecord[] | null = query.data ?? null;
  /** When the list was read (what "expired" is judged against). */
  const now = query.dataUpdatedAt;
  const error = query.error ? errorMessage(query.error) : null;
  /** The share whose Revoke was pressed: asked before anything is deleted. */
  const [confirm, setConfirm] = useState<string | null>(null);
  const reload = () => void queryClient.invalidateQueries({ queryKey: keys.shares() });
  const revoke = async (r: ShareRecord) => {
    setConfirm(null);
    try {
      await api.revokeShare(r.id);
      toast(`Share of “${r.session_title}” revoked: its link no longer works`, "info");
    } catch (e) {
      toast(errorMessage(e));
    }
    reload();
  };
  return (
    <section data-testid="my-shares">
      <h3>My shares</h3>
      {error && <p className="error-text">{error}</p>}
      {list?.length === 0 && <p className="muted small">You have not shared any session.</p>}
      {list && list.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="My shares">
          <table className="table shares-table">
            <thead>
              <tr>
                <th>Session</th>
                <th>Link</th>
                <th>Created</th>
                <th>Last update</th>
                <th>Expires</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((r) => {
                const local = r.session_id && !r.session_deleted ? r.session_id : null;
                return (
                  <tr key={r.id} data-testid="my-share" data-share={r.id}>
                    <td>
                      {local && onOpenSession ? (
                        <button
                          type="button"
                          className="link-btn"
                          data-testid="my-share-open"
                          title="Open this session"
                          onClick={() => onOpenSession(local)}
                        >
                          {r.session_title}
                        </button>
                      ) : (
                        <span>{r.session_title}</span>
                      )}
                      {!local && <span className="muted small"> (deleted locally)</span>}
                    </td>
                    <td className="share-url-cell">
                      <OpenLink url={r.url} className="mono small">
                        {r.url}
                      </OpenLink>
                    </td>
                    <td className="small" title={formatDate(r.created_at)}>
                      {relativeTime(r.created_at, now)}
                    </td>
                    <td className="small" title={formatDate(r.updated_at)}>
                      {relativeTime(r.updated_at, now)}
                    </td>
                    <td className="small">
                      {r.expires_at ? `${r.expires_at <= now ? "expired " : ""}${formatDate(r.expires_at)}` : "never"}
                    </td>
                    <td className="shares-actions">
                      {confirm === r.id ? (
                        <span className="row share-confirm-inline" role="group" aria-label={`Revoke the share of ${r.session_title}?`}>
                          <span className="small">Revoke? The link stops working.</span>
                          <button type="button" className="btn small" onClick={() => setConfirm(null)}>
                            Cancel
                          </button>
                          <button
                            type="button"
                            className="btn small danger"
                            data-testid="confirm-revoke-share"
                            onClick={() => void revoke(r)}
                          >
                            Revoke
                          </button>
                        </span>
                      ) : (
                        <button
                          type="button"
                          className="btn small"
                          data-testid="revoke-share"
                          aria-label={`Revoke the share of ${r.session_title}`}
                          onClick={() => setConfirm(r.id)}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
