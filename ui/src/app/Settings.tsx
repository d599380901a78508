import { useCallback, useEffect, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import { Label, Radio, RadioGroup } from "react-aria-components";
import type {
  AgentInfo,
  ApprovalView,
  McpServerView,
  PermissionsView,
  PluginView,
  ProviderInfo,
  SettingsView,
  ShareRecord,
} from "../protocol/generated";
import type { UpdateStatus, Updates as Updater } from "../transport";
import { errorMessage } from "../lib/api";
import { formatDate, relativeTime } from "../lib/format";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";
import { OpenLink } from "./ShareDialog";
import { SandboxSection } from "./SettingsSandbox";
import { setTheme, THEME_CHOICES, useTheme, type ThemeChoice } from "./theme";

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
          <section>
            <h3>Providers</h3>
            <table className="table">
              <thead>
                <tr>
                  <th>Provider</th>
                  <th>Kind</th>
                  <th>Base URL</th>
                  <th>Key</th>
                  <th>Set key</th>
                </tr>
              </thead>
              <tbody>
                {view.providers.map((p) => (
                  <ProviderRow key={p.id} provider={p} onChanged={reload} />
                ))}
              </tbody>
            </table>
            <p className="muted small">
              Keys go to the OS keychain (or mia-code's 0600 credentials file); the UI never keeps them.
            </p>
          </section>
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

const THEME_LABELS: Record<ThemeChoice, string> = { system: "Follow the system", light: "Light", dark: "Dark" };

/** The window's theme (remembered by this window's storage; app/theme.ts). */
function Appearance() {
  const theme = useTheme();
  return (
    <section className="settings-appearance">
      <RadioGroup
        className="segmented"
        orientation="horizontal"
        value={theme}
        onChange={(v) => setTheme(v as ThemeChoice)}
        data-testid="theme-choice"
      >
        <Label className="segmented-label">Theme</Label>
        <div className="segmented-options">
          {THEME_CHOICES.map((c) => (
            <Radio key={c} value={c} className="segmented-option" data-testid={`theme-${c}`}>
              {THEME_LABELS[c]}
            </Radio>
          ))}
        </div>
      </RadioGroup>
    </section>
  );
}

/** Settings → Updates: the check at start (`updates.check`) and, in the
 * desktop app, the update channel's state with "Check now" and an install
 * button that is the only way anything gets installed. */
function Updates({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const { api, platform } = useServices();
  const toast = useToast();
  const updater = platform.updates;
  const [status, setStatus] = useState<UpdateStatus | null>(null);
  useEffect(() => {
    if (!updater) return;
    let live = true;
    updater.status().then(
      (s) => {
        if (live) setStatus(s);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [updater]);
  const toggle = async (check: boolean) => {
    try {
      onSaved(await api.updateSettings({ updates_check: check, agent_models: {} }));
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <section data-testid="settings-updates">
      <h3>Updates</h3>
      <label className="check">
        <input
          type="checkbox"
          checked={view.updates_check ?? true}
          onChange={(e) => void toggle(e.target.checked)}
          data-testid="updates-check"
        />{" "}
        Check for a new version when Mia Code starts
      </label>
      {updater ? (
        status && <UpdateState updater={updater} status={status} onStatus={setStatus} />
      ) : (
        <p className="muted small">
          This is the browser UI of <span className="mono">mia-code serve</span>: update the mia-code command line
          where you installed it.
        </p>
      )}
    </section>
  );
}

function UpdateState({
  updater,
  status,
  onStatus,
}: {
  updater: Updater;
  status: UpdateStatus;
  onStatus: (s: UpdateStatus) => void;
}) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const check = async () => {
    setBusy(true);
    try {
      onStatus(await updater.check());
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const install = async () => {
    setBusy(true);
    onStatus({ ...status, state: "installing" });
    try {
      await updater.install();
    } catch (e) {
      toast(errorMessage(e));
      onStatus(await updater.status().catch(() => status));
    } finally {
      setBusy(false);
    }
  };
  if (!status.channel)
    return (
      <p className="muted small" data-testid="update-state" data-state="no-channel">
        Mia Code {status.current}. This build has no update channel (built from source, or without the release key), so
        it never looks for updates: install a release to get them.
      </p>
    );
  const line =
    status.state === "checking"
      ? "Checking…"
      : status.state === "up-to-date"
        ? "You have the latest version."
        : status.state === "installing"
          ? "Installing… Mia Code restarts when it is done."
          : status.state === "failed"
            ? (status.error ?? "The last check failed.")
            : status.state === "available" && status.available
              ? `Mia Code ${status.available.version} is available.`
              : "Not checked yet.";
  return (
    <div data-testid="update-state" data-state={status.state}>
      <p className={status.state === "failed" ? "warn-text" : ""}>
        Mia Code {status.current}. {line}
      </p>
      {status.state === "available" && status.available?.notes && (
        <pre className="update-notes">{status.available.notes}</pre>
      )}
      <div className="row-end">
        <button type="button" className="btn" disabled={busy} onClick={() => void check()} data-testid="update-check-now">
          Check now
        </button>
        {status.state === "available" &&
          (status.installer === "self-update" ? (
            <button
              type="button"
              className="btn primary"
              disabled={busy}
              onClick={() => void install()}
              data-testid="update-install"
            >
              Install and restart
            </button>
          ) : (
            <span className="muted small">
              {status.installer === "package-manager"
                ? "Installed with your package manager: update Mia Code there (apt, dnf)."
                : "This copy was not installed from a bundle; install the new release."}
            </span>
          ))}
      </div>
    </div>
  );
}

function ProviderRow({ provider, onChanged }: { provider: ProviderInfo; onChanged: () => void }) {
  const { api } = useServices();
  const toast = useToast();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      await api.setKey(provider.id, key);
      setKey("");
      toast(`Key saved for ${provider.id}`, "info");
      onChanged();
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    try {
      await api.removeKey(provider.id);
      toast(`Key removed for ${provider.id}`, "info");
      onChanged();
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <tr data-testid="provider-row" data-provider={provider.id}>
      <td className="mono">{provider.id}</td>
      <td>{provider.kind}</td>
      <td className="mono small">{provider.base_url ?? "default"}</td>
      <td className="small">{provider.key_source ?? <span className="muted">none</span>}</td>
      <td>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (key) void save();
          }}
        >
          <input
            className="input"
            type="password"
            autoComplete="off"
            aria-label={`API key for ${provider.id}`}
            data-testid="provider-key"
            value={key}
            onChange={(e) => setKey(e.target.value)}
          />
          <button type="submit" className="btn small" disabled={!key || busy}>
            Save
          </button>
          {provider.key_source && /keychain|file/i.test(provider.key_source) && !/config|env/i.test(provider.key_source) && (
            <button type="button" className="btn small" onClick={() => void remove()}>
              Remove
            </button>
          )}
        </form>
      </td>
    </tr>
  );
}

function Agents({ agents, onCreate }: { agents: AgentInfo[]; onCreate?: () => void }) {
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
          <button type="button" className="btn" data-testid="settings-create-agent" onClick={onCreate}>
            + Create an agent… (/agent create)
          </button>
        </div>
      )}
    </section>
  );
}

function Defaults({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const { api } = useServices();
  const toast = useToast();
  const [agent, setAgent] = useState(view.default_agent);
  const [model, setModel] = useState(view.model ?? "");
  const [perAgent, setPerAgent] = useState<Record<string, string>>(() =>
    Object.fromEntries(view.agents.map((a) => [a.name, a.model ?? ""])),
  );
  const models = view.providers.flatMap((p) => (p.models ?? []).map((m) => `${p.id}/${m}`));
  const save = async () => {
    try {
      const agent_models: Record<string, string> = {};
      for (const a of view.agents)
        if ((a.model ?? "") !== (perAgent[a.name] ?? "")) agent_models[a.name] = perAgent[a.name] ?? "";
      const next = await api.updateSettings({ default_agent: agent, model, agent_models });
      onSaved(next);
      toast("Settings saved", "info");
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <section>
      <h3>Defaults</h3>
      <datalist id="model-options">
        {models.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      <div className="grid2">
        <label>
          Default agent
          <select className="input" value={agent} onChange={(e) => setAgent(e.target.value)} data-testid="default-agent">
            {view.agents
              .filter((a) => a.mode !== "subagent")
              .map((a) => (
                <option key={a.name} value={a.name}>
                  {a.name}
                </option>
              ))}
          </select>
        </label>
        <label>
          Default model
          <input
            className="input mono"
            list="model-options"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            placeholder="provider/model"
            data-testid="default-model"
          />
        </label>
        {view.agents.map((a) => (
          <label key={a.name}>
            Model for {a.name}
            <input
              className="input mono"
              list="model-options"
              value={perAgent[a.name] ?? ""}
              placeholder="(default)"
              onChange={(e) => setPerAgent({ ...perAgent, [a.name]: e.target.value })}
            />
          </label>
        ))}
      </div>
      <div className="row-end">
        <button type="button" className="btn primary" onClick={() => void save()} data-testid="save-settings">
          Save defaults
        </button>
      </div>
    </section>
  );
}

function Rules({ directory, agents, defaultAgent }: { directory: string; agents: string[]; defaultAgent: string }) {
  const { api } = useServices();
  const [agent, setAgent] = useState(defaultAgent);
  // The rules shown are those of the directory and agent picked (none while they load).
  const query = useQuery({ queryKey: keys.permissions(directory, agent), queryFn: () => api.permissions(directory, agent) });
  const view: PermissionsView | null = query.data ?? null;
  const error = query.error ? errorMessage(query.error) : null;
  return (
    <section>
      <h3>
        Permission rules for{" "}
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
              ⚠ {w}
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
                    <td>{r.layer}</td>
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

function Approvals({ directory }: { directory: string }) {
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

/** A server's state as a badge colour (the task badges' classes). */
const MCP_BADGE: Record<string, string> = {
  ready: "completed",
  failed: "error",
  exited: "error",
  untrusted: "blocked",
  stopped: "stopped",
  disabled: "stopped",
};
/** Tools listed inline up to this many; more fold into a count. */
const MCP_TOOLS_INLINE = 4;

/**
 * A project's list that loads on open and again on Refresh (`refresh`). While a refresh runs the
 * last list stays (of this project only); `loading` says one is on its way.
 */
function useProjectList<T>(what: string, directory: string, load: (directory: string) => Promise<T[]>) {
  const query = useQuery({
    queryKey: keys.projectList(what, directory),
    queryFn: async () => {
      const list = await load(directory);
      return Array.isArray(list) ? list : [];
    },
    // Read on open and on Refresh only (reading MCP servers starts them), never retried by itself.
    staleTime: 0,
    refetchOnWindowFocus: false,
    retry: false,
  });
  const { refetch } = query;
  const refresh = useCallback(() => void refetch(), [refetch]);
  // A failed refresh shows its error, not the list from before it.
  const failed = query.error && query.errorUpdatedAt >= query.dataUpdatedAt;
  return {
    loading: query.isFetching,
    list: failed ? null : (query.data ?? null),
    error: failed ? errorMessage(query.error) : null,
    refresh,
  };
}

/** Names (tools, hooks) inline when few, folded into a count when many, "none" without. */
function NameList({ names, what, testId }: { names: string[]; what: string; testId: string }) {
  return (
    <td className="small" data-testid={testId}>
      {names.length === 0 ? (
        <span className="muted">none</span>
      ) : names.length <= MCP_TOOLS_INLINE ? (
        <span className="mono">{names.join(", ")}</span>
      ) : (
        <details>
          <summary>
            {names.length} {what}
          </summary>
          <span className="mono">{names.join(", ")}</span>
        </details>
      )}
    </td>
  );
}

/** Settings → MCP servers of the project (GET /api/mcp starts those that may run: it can take seconds). */
function McpServers({ directory }: { directory: string }) {
  const { api } = useServices();
  const { loading, list, error, refresh } = useProjectList("mcp", directory, api.mcp);
  return (
    <section data-testid="mcp-servers" aria-busy={loading}>
      <h3>MCP servers</h3>
      {loading && (
        <p className="muted small" role="status" data-testid="mcp-loading">
          Starting servers…
        </p>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {list?.length === 0 && (
        <p className="muted small" data-testid="mcp-empty">
          No MCP servers. Add them under <code>mcp</code> in your config or in the project's <code>.mcp.json</code>.
        </p>
      )}
      {list && list.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="MCP servers">
          <table className="table" data-testid="mcp-table">
            <thead>
              <tr>
                <th>Server</th>
                <th>State</th>
                <th>Transport</th>
                <th>Tools</th>
                <th>Source</th>
              </tr>
            </thead>
            <tbody>
              {list.map((m) => (
                <McpRow key={m.name} server={m} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row-end">
        <button type="button" className="btn small" disabled={loading} onClick={refresh} data-testid="mcp-refresh">
          Refresh
        </button>
      </div>
    </section>
  );
}

function McpRow({ server: m }: { server: McpServerView }) {
  const tools = m.tools ?? [];
  const stderr = m.stderr ?? [];
  const broken = m.state === "failed" || m.state === "exited";
  const detail = !!m.error || stderr.length > 0;
  return (
    <>
      <tr data-testid="mcp-server" data-server={m.name}>
        <td>
          <span className="mono">{m.name}</span>
          {m.server && <div className="muted small">{m.server}</div>}
        </td>
        <td>
          <span className={`task-badge badge-${MCP_BADGE[m.state] ?? "queued"}`} data-testid={`mcp-state-${m.name}`}>
            {m.state}
          </span>
        </td>
        <td className="mono small">{m.transport}</td>
        <NameList names={tools} what="tools" testId={`mcp-tools-${m.name}`} />
        <td className="mono small">{m.source}</td>
      </tr>
      {detail && (
        <tr className="mcp-detail" data-testid={`mcp-detail-${m.name}`}>
          <td colSpan={5}>
            {m.error && (
              <p className={broken ? "error-text small" : m.state === "untrusted" ? "warning small" : "muted small"}>
                {m.error}
              </p>
            )}
            {stderr.length > 0 &&
              (broken ? (
                <pre className="mcp-stderr small" aria-label={`stderr of ${m.name}`}>
                  {stderr.join("\n")}
                </pre>
              ) : (
                <details>
                  <summary className="small">stderr ({stderr.length} lines)</summary>
                  <pre className="mcp-stderr small">{stderr.join("\n")}</pre>
                </details>
              ))}
          </td>
        </tr>
      )}
    </>
  );
}

/** A plugin's state as a badge colour (the task badges' classes). */
const PLUGIN_BADGE: Record<string, string> = {
  loaded: "completed",
  installing: "running",
  failed: "error",
  refused: "error",
  untrusted: "blocked",
  skipped: "stopped",
};

/**
 * Settings → Plugins of the project (GET /api/plugins installs and starts those listed first: it
 * can take seconds).
 */
function Plugins({ directory }: { directory: string }) {
  const { api } = useServices();
  const { loading, list, error, refresh } = useProjectList("plugins", directory, api.plugins);
  return (
    <section data-testid="plugins" aria-busy={loading}>
      <h3>Plugins</h3>
      {loading && (
        <p className="muted small" role="status" data-testid="plugins-loading">
          Loading plugins…
        </p>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {list?.length === 0 && (
        <p className="muted small" data-testid="plugins-empty">
          No plugins. List them under <code>plugin</code> in your config (npm packages like <code>name@^1.0.0</code>, or
          local paths).
        </p>
      )}
      {list && list.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="Plugins">
          <table className="table" data-testid="plugins-table">
            <thead>
              <tr>
                <th>Plugin</th>
                <th>State</th>
                <th>Tools</th>
                <th>Hooks</th>
                <th>Source</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <PluginRow key={`${p.source}\n${p.entry}`} plugin={p} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row-end">
        <button type="button" className="btn small" disabled={loading} onClick={refresh} data-testid="plugins-refresh">
          Refresh
        </button>
      </div>
    </section>
  );
}

function PluginRow({ plugin: p }: { plugin: PluginView }) {
  const broken = p.state === "failed" || p.state === "refused";
  return (
    <>
      <tr data-testid="plugin" data-plugin={p.name}>
        <td>
          <span className="mono">{p.name}</span>
          {p.version && <span className="muted small"> {p.version}</span>}
        </td>
        <td>
          <span className={`task-badge badge-${PLUGIN_BADGE[p.state] ?? "queued"}`} data-testid={`plugin-state-${p.name}`}>
            {p.state}
          </span>
        </td>
        <NameList names={p.tools ?? []} what="tools" testId={`plugin-tools-${p.name}`} />
        <NameList names={p.hooks ?? []} what="hooks" testId={`plugin-hooks-${p.name}`} />
        <td className="small">
          <span className="mono">{p.entry}</span>
          <div className="muted mono">{p.source}</div>
        </td>
      </tr>
      {p.error && (
        <tr className="mcp-detail" data-testid={`plugin-detail-${p.name}`}>
          <td colSpan={5}>
            <p className={broken ? "error-text small" : p.state === "untrusted" ? "warning small" : "muted small"}>
              {p.error}
            </p>
          </td>
        </tr>
      )}
    </>
  );
}

/** Settings → My shares: every share this machine created (GET /api/shares), each revocable. */
function MyShares({ onOpenSession }: { onOpenSession?: (id: string) => void }) {
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
