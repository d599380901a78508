/**
 * What went wrong in the page: CSP violations, uncaught errors, unhandled
 * rejections and console.error calls, the last 50, in
 * `window.__miaDiagnostics`. Installed first thing (main.tsx) so problems
 * while loading are caught too. The desktop smoke test fails when it is not
 * empty; a bug report can include it.
 */
const MAX = 50;

declare global {
  interface Window {
    __miaDiagnostics?: string[];
  }
}

export function installDiagnostics(w: Window = window): string[] {
  if (w.__miaDiagnostics) return w.__miaDiagnostics;
  const list: string[] = [];
  w.__miaDiagnostics = list;
  const push = (what: string) => {
    list.push(what.slice(0, 500));
    if (list.length > MAX) list.shift();
  };
  w.document.addEventListener("securitypolicyviolation", (e) => {
    push(`CSP: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}${e.sourceFile ? ` (${e.sourceFile}:${e.lineNumber})` : ""}`);
  });
  w.addEventListener("error", (e) => push(`error: ${e.message}`));
  w.addEventListener("unhandledrejection", (e) => {
    const r: unknown = e.reason;
    push(`unhandled rejection: ${r instanceof Error ? r.message : String(r)}`);
  });
  const original = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    push(`console.error: ${args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : safeJson(a))).join(" ")}`);
    original(...args);
  };
  return list;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
