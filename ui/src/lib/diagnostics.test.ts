import { describe, expect, it, vi } from "vitest";
import { installDiagnostics } from "./diagnostics";

describe("diagnostics", () => {
  it("records console errors, uncaught errors and CSP violations, the last 50", () => {
    const silent = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const list = installDiagnostics();
    expect(installDiagnostics()).toBe(list);
    console.error("boom", new Error("bad"));
    window.dispatchEvent(new ErrorEvent("error", { message: "uncaught thing" }));
    const csp = new Event("securitypolicyviolation") as Event & { violatedDirective: string; blockedURI: string };
    Object.assign(csp, { violatedDirective: "script-src", blockedURI: "https://evil.test/x.js" });
    document.dispatchEvent(csp);
    expect(list).toEqual([
      "console.error: boom bad",
      "error: uncaught thing",
      "CSP: script-src blocked https://evil.test/x.js",
    ]);
    for (let i = 0; i < 60; i++) console.error(`n${i}`);
    expect(list).toHaveLength(50);
    expect(list.at(-1)).toBe("console.error: n59");
    silent.mockRestore();
  });
});
