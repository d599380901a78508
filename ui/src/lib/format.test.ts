import { describe, expect, it } from "vitest";
import {
  describeDecision,
  describeSandbox,
  formatBytes,
  formatCostFine,
  isMcpTool,
  mcpToolName,
  relativeTime,
  toolTarget,
} from "./format";

describe("describeDecision", () => {
  it("says who decided and how", () => {
    expect(describeDecision({ decision: "allow", by: "user", reason: "", reply: "once" })).toBe("allowed once by you");
    expect(describeDecision({ decision: "allow", by: "user", reason: "", reply: "session" })).toBe(
      "allowed for this session by you",
    );
    expect(describeDecision({ decision: "deny", by: "rule", reason: "deny edit (plan)" })).toBe(
      "denied by rule: deny edit (plan)",
    );
    expect(describeDecision({ decision: "deny", by: "user", reason: "use tabs", reply: "reject_with_feedback" })).toBe(
      "denied by you: use tabs",
    );
  });
});

describe("format helpers", () => {
  it("relative time and tool targets", () => {
    expect(relativeTime(1_000_000, 1_000_000 + 5 * 60_000)).toBe("5 min ago");
    expect(toolTarget({ path: "src/a.ts", content: "x" })).toBe("src/a.ts");
    expect(toolTarget({ command: "ls -la" })).toBe("ls -la");
    expect(toolTarget(null)).toBe("");
  });
});

describe("formatBytes", () => {
  it("uses binary units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(300 * 1024 * 1024)).toBe("300 MB");
    expect(formatBytes(5 * 1024 ** 3)).toBe("5.0 GB");
  });
});

describe("formatCostFine", () => {
  it("keeps four decimals below a dollar", () => {
    expect(formatCostFine(0)).toBe("$0");
    expect(formatCostFine(0.0123)).toBe("$0.0123");
    expect(formatCostFine(0.5)).toBe("$0.5000");
    expect(formatCostFine(12.345)).toBe("$12.35");
  });
});

describe("describeSandbox", () => {
  it("says how a command was confined, and when it was not", () => {
    const ws = describeSandbox({ mode: "workspace-write", network: "allow", mechanism: "bubblewrap", full: true });
    expect(ws).toMatchObject({ label: "sandboxed · workspace-write · network", unconfined: false });
    expect(ws.title).toContain("bubblewrap");
    const asks = describeSandbox({
      mode: "workspace-write",
      network: "ask",
      mechanism: "bubblewrap",
      full: true,
      hosts: [
        { host: "github.com", port: 443, allowed: true, reason: "rule or answer", program: "git" },
        { host: "evil.example", port: 443, allowed: false, reason: "you denied evil.example:443" },
      ],
    });
    expect(asks.label).toBe("sandboxed · workspace-write · network asks");
    expect(asks.title).toContain("github.com:443 reached by git");
    expect(asks.title).toContain("evil.example:443 refused (you denied evil.example:443)");
    const fb = describeSandbox({
      mode: "workspace-write",
      network: "deny",
      mechanism: "landlock+seccomp",
      full: false,
      limits: ["other processes of your account are visible in /proc"],
    });
    expect(fb.label).toBe("sandboxed · workspace-write · no network · fallback");
    expect(fb.title).toContain("could not hold: other processes");
    const ro = describeSandbox({ mode: "read-only", network: "deny", blocked: "write" });
    expect(ro.label).toBe("sandboxed · read-only · no network · blocked write");
    expect(ro.title).toContain("refused a write");
    expect(describeSandbox({ mode: "off", unconfined: "escalated" })).toMatchObject({ label: "unsandboxed", unconfined: true });
    expect(describeSandbox({ mode: "off", unconfined: "unavailable" }).title).toContain("no OS sandbox");
    expect(describeSandbox({ mode: "off", unconfined: "config" }).title).toContain("sandbox.mode is off");
  });
});

describe("mcpToolName", () => {
  it("splits mcp__SERVER__TOOL into the server and the tool's own name", () => {
    expect(mcpToolName("mcp__fixture__echo")).toEqual({ server: "fixture", tool: "echo" });
    expect(mcpToolName("mcp__fixture__danger_delete")).toEqual({ server: "fixture", tool: "danger_delete" });
    expect(mcpToolName("mcp__web-search__find__all")).toEqual({ server: "web-search", tool: "find__all" });
    expect(isMcpTool("mcp__fixture__echo")).toBe(true);
  });

  it("is null for other tools and for names cut before the tool part", () => {
    expect(mcpToolName("bash")).toBeNull();
    expect(isMcpTool("bash")).toBe(false);
    expect(mcpToolName("mcp__fixture")).toBeNull();
    expect(mcpToolName("mcp__fixture__")).toBeNull();
    expect(mcpToolName("mcp____echo")).toBeNull();
  });
});
