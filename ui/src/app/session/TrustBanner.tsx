import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ShieldAlert } from "lucide-react";
import type { TrustView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices } from "../context";

/** Folders whose prompt "Not now" hid: for the rest of the window's life (never stored). */
const notNow = new Set<string>();

/** An answer that is a TrustView (a server without the route answers otherwise). */
function isTrustView(v: unknown): v is TrustView {
  if (!v || typeof v !== "object") return false;
  const t = v as Partial<TrustView>;
  return typeof t.trusted === "boolean" && typeof t.project_hooks === "number" && typeof t.hooks_approved === "boolean";
}

/**
 * The workspace's trust and its project hooks (`GET /api/trust`): read again when a turn of a
 * session ends or a session's notice says its hooks do not run (state/queries.ts); null while it
 * loads or when it cannot be read.
 */
export function useTrust(directory: string): TrustView | null {
  const { api } = useServices();
  const query = useQuery({
    queryKey: keys.trust(directory),
    queryFn: async () => {
      const v: unknown = await api.trust(directory);
      return isTrustView(v) ? v : null;
    },
    enabled: directory !== "",
  });
  return query.data ?? null;
}

/**
 * The desktop's trust prompt, above the composer: the project's own hooks (its `.mia-code.json`)
 * do not run until the workspace is trusted, and again after they changed until they are approved.
 * Trusting approves them as they are now; "Not now" hides the prompt for this folder until the
 * window closes. Nothing is blocked: the session works without the hooks. Keyed by the folder
 * (its busy and error state are the folder's).
 */
export function TrustBanner({ directory }: { directory: string }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const trust = useTrust(directory);
  const [hidden, setHidden] = useState(() => notNow.has(directory));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  if (hidden || !trust || trust.project_hooks <= 0 || trust.hooks_approved) return null;
  const changed = trust.trusted;
  const n = trust.project_hooks;

  const approve = async () => {
    setBusy(true);
    setError(null);
    try {
      const view = await api.setTrust(directory, true);
      // The answer says how it stands now (the prompt goes once the hooks are approved).
      if (isTrustView(view)) queryClient.setQueryData(keys.trust(directory), view);
      // Another folder of the project (a worktree, the main checkout) shares its trust.
      void queryClient.invalidateQueries({
        queryKey: ["trust"],
        predicate: (q) => !isTrustView(view) || q.queryKey[1] !== directory,
      });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const dismiss = () => {
    notNow.add(directory);
    setHidden(true);
  };

  return (
    <div className="trust-banner" role="region" aria-label="Workspace trust" data-testid="trust-banner" aria-busy={busy}>
      <ShieldAlert size={16} className="trust-banner-icon" aria-hidden />
      <div className="trust-banner-body">
        <span data-testid="trust-text">
          {changed
            ? "This project's hooks changed since you trusted it; they do not run until you approve them again."
            : `This project defines ${n} ${n === 1 ? "hook" : "hooks"} (commands mia-code runs at points of a session). They do not run until you trust this workspace.`}
        </span>
        {error && (
          <span className="trust-banner-error" role="alert" data-testid="trust-error">
            {changed ? "Could not approve the hooks" : "Could not trust this workspace"}: {error}
          </span>
        )}
      </div>
      <button type="button" className="btn small primary" disabled={busy} onClick={() => void approve()}>
        {changed ? "Approve hooks" : "Trust and run hooks"}
      </button>
      <button type="button" className="btn small" disabled={busy} onClick={dismiss}>
        Not now
      </button>
    </div>
  );
}
