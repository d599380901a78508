import { useCallback } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { SettingsView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { Modal } from "./Modal";
import { Agents } from "./settings/Agents";
import { Appearance } from "./settings/Appearance";
import { Approvals } from "./settings/Approvals";
import { Defaults } from "./settings/Defaults";
import { McpServers } from "./settings/McpServers";
import { MyShares } from "./settings/MyShares";
import { Plugins } from "./settings/Plugins";
import { Providers } from "./settings/Providers";
import { Rules } from "./settings/Rules";
import { SandboxSection } from "./settings/Sandbox";
import { Updates } from "./settings/Updates";

/** Settings: one section per file under settings/ (the window's theme first, then what the server reads). */
export function Settings({
  directory,
  onClose,
  onCreateAgent,
  onOpenSession,
}: {
  directory: string | null;
  onClose: () => void;
  /** "Create an agent…": the agent generator (`/agent create`). */
  onCreateAgent?: () => void;
  /** My shares: opens a shared session that still exists here. */
  onOpenSession?: (id: string) => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const settingsKey = keys.settings(directory ?? "");
  const query = useQuery({ queryKey: settingsKey, queryFn: () => api.settings(directory ?? undefined) });
  const view = query.data ?? null;
  const reload = useCallback(
    () => void queryClient.invalidateQueries({ queryKey: keys.settings(directory ?? "") }),
    [queryClient, directory],
  );
  const setView = (v: SettingsView) => queryClient.setQueryData(settingsKey, v);

  return (
    <Modal title="Settings" onClose={onClose} wide testId="settings">
      <Appearance />
      {!view && !query.error && (
        <p className="muted" role="status" data-testid="settings-loading">
          Loading…
        </p>
      )}
      {!view && query.error && (
        <div role="alert" data-testid="settings-error">
          <p className="error-text">Could not read the settings: {errorMessage(query.error)}</p>
          <button type="button" className="btn small" onClick={reload}>
            Try again
          </button>
        </div>
      )}
      {view && (
        <div className="settings">
          <Providers providers={view.providers} onChanged={reload} />
          {view.sandbox && <SandboxSection sandbox={view.sandbox} />}
          <Updates view={view} onSaved={setView} />
          <Agents agents={view.agents} onCreate={onCreateAgent} />
          <Defaults key={view.agents.map((a) => a.name).join(" ")} view={view} onSaved={setView} />
          {directory && <Rules directory={directory} agents={view.agents.map((a) => a.name)} defaultAgent={view.default_agent} />}
          {directory && <Approvals directory={directory} />}
          {directory && <McpServers directory={directory} />}
          {directory && <Plugins directory={directory} />}
          <MyShares onOpenSession={onOpenSession} />
          <p className="muted small">
            Written to <span className="mono">{view.global_config}</span>. Read:{" "}
            {view.config_files.map((f) => (
              <span key={f} className="mono">
                {f}{" "}
              </span>
            ))}
          </p>
        </div>
      )}
    </Modal>
  );
}
