import type { McpServerView } from "../../protocol/generated";
import { useServices } from "../context";
import { errorClass, NameList, ProjectListSection, StateBadge } from "./ProjectList";

/** A server's state as a badge colour (the task badges' classes). */
const MCP_BADGE: Record<string, string> = {
  ready: "completed",
  failed: "error",
  exited: "error",
  untrusted: "blocked",
  stopped: "stopped",
  disabled: "stopped",
};

/** Settings → MCP servers of the project (GET /api/mcp starts those that may run: it can take seconds). */
export function McpServers({ directory }: { directory: string }) {
  const { api } = useServices();
  return (
    <ProjectListSection
      what="mcp"
      directory={directory}
      load={api.mcp}
      title="MCP servers"
      sectionTestId="mcp-servers"
      testId="mcp"
      loadingText="Starting servers…"
      empty={
        <>
          No MCP servers. Add them under <code>mcp</code> in your config or in the project's <code>.mcp.json</code>.
        </>
      }
      columns={["Server", "State", "Transport", "Tools", "Source"]}
      rowKey={(m) => m.name}
      row={(m) => <McpRow server={m} />}
    />
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
          <StateBadge state={m.state} badges={MCP_BADGE} testId={`mcp-state-${m.name}`} />
        </td>
        <td className="mono small">{m.transport}</td>
        <NameList names={tools} what="tools" testId={`mcp-tools-${m.name}`} />
        <td className="mono small">{m.source}</td>
      </tr>
      {detail && (
        <tr className="mcp-detail" data-testid={`mcp-detail-${m.name}`}>
          <td colSpan={5}>
            {m.error && <p className={errorClass(broken, m.state)}>{m.error}</p>}
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
