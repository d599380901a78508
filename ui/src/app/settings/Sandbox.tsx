import type { SandboxView } from "../../protocol/generated";

/** Settings → Sandbox: how shell commands are confined on this machine
 * (`sandbox.*`, docs/security.md), which mechanism runs, and what the
 * fallback cannot hold. */
export function SandboxSection({ sandbox }: { sandbox: SandboxView }) {
  const sandboxed = sandbox.effect === "sandboxed";
  const fallback = sandboxed && sandbox.full === false;
  const text = sandboxed
    ? `Shell commands run in the OS sandbox (${sandbox.mechanism ?? "sandbox"}, ${sandbox.mode}): they write only the project, a private /tmp and package caches — never .git/hooks, .git/config, .mcp.json or Mia Code's own files — cannot read Mia Code's data or your credential stores, and reach the network only through Mia Code's proxy (network: ${sandbox.network || "ask"}). Plan and explore run read-only.`
    : sandbox.effect === "ask"
      ? `No OS sandbox on this machine (${sandbox.detail}). The permission engine alone judges commands, and every shell command asks before it runs unconfined. Set "sandbox": {"mode": "off"} in your global config to stop those asks.`
      : `The OS sandbox is off (sandbox.mode). Shell commands run unconfined; the permission engine alone decides.`;
  return (
    <section data-testid="settings-sandbox" data-effect={sandbox.effect} data-full={String(sandbox.full)}>
      <h3>Sandbox</h3>
      <p className={sandboxed && !fallback ? "" : "warn-text"}>{text}</p>
      {fallback && (
        <div data-testid="settings-sandbox-limits">
          <p className="warn-text">
            This is the fallback (user namespaces are off here). It cannot hold everything, so commands that run code
            the permission engine cannot read ask again:
          </p>
          <ul className="small">
            {(sandbox.limits ?? []).map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
        </div>
      )}
      {sandboxed && <p className="muted small">{sandbox.detail}</p>}
      {sandboxed && sandbox.env && <p className="muted small">Environment: {sandbox.env}.</p>}
    </section>
  );
}
