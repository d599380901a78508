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
import { RulesEditor } from "./settings/RulesEditor";
import { SettingsLayout, type SettingsSection } from "./settings/SettingsLayout";

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

  const sections: SettingsSection[] = [
    { id: "appearance", label: "Appearance", body: <Appearance /> },
    ...(view
      ? [
          { id: "providers", label: "Providers", body: <Providers providers={view.providers} onChanged={reload} /> },
          ...(view.sandbox ? [{ id: "sandbox", label: "Sandbox", body: <SandboxSection sandbox={view.sandbox} /> }] : []),
          { id: "updates", label: "Updates", body: <Updates view={view} onSaved={setView} /> },
          { id: "agents", label: "Agents", body: <Agents agents={view.agents} onCreate={onCreateAgent} /> },
          {
            id: "defaults",
            label: "Defaults",
            body: <Defaults key={view.agents.map((a) => a.name).join(" ")} view={view} onSaved={setView} />,
          },
          {
            id: "permissions",
            label: "Permissions",
            body: (
              <>
                <RulesEditor directory={directory} globalConfig={view.global_config} defaultAgent={view.default_agent} />
                {directory && <Rules directory={directory} agents={view.agents.map((a) => a.name)} defaultAgent={view.default_agent} globalConfig={view.global_config} />}
                {directory && <Approvals directory={directory} />}
              </>
            ),
          },
          ...(directory
            ? [
                { id: "mcp", label: "MCP servers", body: <McpServers directory={directory} /> },
                { id: "plugins", label: "Plugins", body: <Plugins directory={directory} /> },
              ]
            : []),
          { id: "shares", label: "My shares", body: <MyShares onOpenSession={onOpenSession} /> },
          {
            id: "files",
            label: "Config files",
            body: (
              <section>
                <h3>Config files</h3>
                <p className="muted small">
                  Written to <span className="mono">{view.global_config}</span>. Read:{" "}
                  {view.config_files.map((f) => (
                    <span key={f} className="mono">
                      {f}{" "}
                    </span>
                  ))}
                </p>
              </section>
            ),
          },
        ]
      : []),
  ];

  return (
    <Modal title="Settings" onClose={onClose} wide testId="settings" className="modal-settings">
      <SettingsLayout sections={sections}>
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
      </SettingsLayout>
    </Modal>
  );
}
