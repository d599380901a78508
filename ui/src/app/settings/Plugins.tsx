import type { PluginView } from "../../protocol/generated";
import { useServices } from "../context";
import { errorClass, NameList, ProjectListSection, StateBadge } from "./ProjectList";

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
export function Plugins({ directory }: { directory: string }) {
  const { api } = useServices();
  return (
    <ProjectListSection
      what="plugins"
      directory={directory}
      load={api.plugins}
      title="Plugins"
      sectionTestId="plugins"
      testId="plugins"
      loadingText="Loading plugins…"
      empty={
        <>
          No plugins. List them under <code>plugin</code> in your config (npm packages like <code>name@^1.0.0</code>, or
          local paths).
        </>
      }
      columns={["Plugin", "State", "Tools", "Hooks", "Source"]}
      rowKey={(p) => `${p.source}\n${p.entry}`}
      row={(p) => <PluginRow plugin={p} />}
    />
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
          <StateBadge state={p.state} badges={PLUGIN_BADGE} testId={`plugin-state-${p.name}`} />
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
            <p className={errorClass(broken, p.state)}>{p.error}</p>
          </td>
        </tr>
      )}
    </>
  );
}
