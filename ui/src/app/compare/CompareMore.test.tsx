import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AttemptFile, AttemptView, ComparisonView, FileDiff, HunkView, ScriptView, WorktreeView } from "../../protocol/generated";
import { Compare } from "../Compare";
import { fakeTransport, Providers, type Handler } from "../testing";
import { matchHunk } from "./DiffColumn";
import { suggestedPromotion } from "./MoreAttempts";

const BASE = "abcdef0123456789abcdef0123456789abcdef01";

const hunkOf = (id: string, path: string, plus: string): HunkView => ({
  id,
  file: path,
  staged: false,
  lines: [" keep", "-old line", `+${plus}`],
  old_start: 1,
  old_lines: 2,
  new_start: 1,
  new_lines: 2,
});

const file = (path: string, hunks?: HunkView[]): AttemptFile => ({ path, status: "modified", additions: 1, deletions: 1, binary: false, hunks });

const ok: ScriptView = { command: "npm test", exit_code: 0, cancelled: false, duration_ms: 1000, output: "ok" };
const failed: ScriptView = { ...ok, exit_code: 1, output: "1 failing" };

function attempt(name: string, files: AttemptFile[], over: Partial<AttemptView> = {}): AttemptView {
  return {
    name,
    path: `/proj/.mia/worktrees/${name}`,
    files,
    stats: { files: files.length, additions: files.length, deletions: files.length },
    usage: { sessions: 1, input_tokens: 1000, output_tokens: 100, cost: 0.02, duration_ms: 60_000, steps: 3 },
    ...over,
  };
}

const comparison: ComparisonView = {
  base: BASE,
  a: attempt("alpha", [file("src/shared.ts", [hunkOf("ha1", "src/shared.ts", "alpha's line")]), file("only-a.ts")]),
  b: attempt("beta", [file("src/shared.ts", [hunkOf("hb1", "src/shared.ts", "beta's line")])], { check: ok }),
  between: [
    { path: "only-a.ts", status: "only_a" },
    { path: "src/shared.ts", status: "differ" },
  ],
};

const gamma = attempt("gamma", [], {
  usage: { sessions: 0, input_tokens: 0, output_tokens: 0, cost: null, duration_ms: 0, steps: 0 },
  stats: { files: 0, additions: 0, deletions: 0 },
  check: failed,
});

const fileDiff = (path: string, minus: string, plus: string): FileDiff => ({
  file: path,
  status: "modified",
  before: "",
  after: "",
  additions: 1,
  deletions: 1,
  hunks: [
    {
      startBefore: 1,
      linesBefore: 2,
      startAfter: 1,
      linesAfter: 2,
      lines: [
        { type: "context", content: "keep", lineNumber: 1, oldLine: 1, newLine: 1 },
        { type: "delete", content: minus, lineNumber: 2, oldLine: 2 },
        { type: "add", content: plus, lineNumber: 2, newLine: 2 },
      ],
    },
  ],
});

function setup(extra?: Handler) {
  const handler: Handler = (m, p, body) => {
    const r = extra?.(m, p, body);
    if (r !== undefined) return r;
    if (m === "GET" && p.startsWith("/api/worktrees?")) return ["alpha", "beta", "gamma"].map((name) => ({ name }) as WorktreeView);
    if (m === "GET" && p.startsWith("/api/worktrees/compare")) {
      const b = new URL(p, "http://x").searchParams.get("b");
      return b === "gamma" ? { ...comparison, b: gamma } : comparison;
    }
    if (m === "GET" && p.startsWith("/api/worktrees/between"))
      return { diff: "", files: [fileDiff("src/shared.ts", "alpha's line", "beta's line")] };
    if (m === "GET" && p.includes("/diff?")) {
      const name = new URL(p, "http://x").pathname.split("/")[3]!;
      return { diff: "", files: [fileDiff("src/shared.ts", "old line", `${name}'s line`)] };
    }
    if (m === "POST" && p.endsWith("/take")) return { trash: null };
    return undefined;
  };
  const fake = fakeTransport(handler);
  render(
    <Providers transport={fake.transport}>
      <Compare directory="/proj" initialA="alpha" initialB="beta" onBack={vi.fn()} />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

const rowFor = (path: string) => screen.getAllByTestId("between-row").find((r) => r.getAttribute("data-path") === path)!;

describe("A↔B", () => {
  it("offers Base | A ↔ B for a file both changed; A ↔ B shows the direct diff", async () => {
    const { requests, user } = setup();
    await screen.findAllByTestId("between-row");
    await user.click(rowFor("only-a.ts"));
    expect(screen.queryByTestId("cmp-view-between")).toBeNull();
    await user.click(rowFor("src/shared.ts"));
    expect(screen.getByTestId("cmp-view-base")).toHaveAttribute("aria-pressed", "true");
    await user.click(screen.getByTestId("cmp-view-between"));
    expect(requests).toContainEqual({
      method: "GET",
      path: "/api/worktrees/between?directory=%2Fproj&a=alpha&b=beta&path=src%2Fshared.ts",
      body: undefined,
    });
    const between = await screen.findByTestId("between-diff");
    await waitFor(() => expect(within(between).getByTestId("diff-line-del")).toHaveTextContent("alpha's line"));
    expect(within(between).getAllByTestId("diff-line-add").map((c) => c.textContent)).toContain("+beta's line");
    expect(screen.queryByTestId("diff-a")).toBeNull();
    await user.click(screen.getByTestId("cmp-view-base"));
    expect(await screen.findByTestId("diff-a")).toBeInTheDocument();
  });
});

describe("taking one hunk", () => {
  it("matches the shown hunks to the comparison's ids", () => {
    const f = fileDiff("src/shared.ts", "old line", "x");
    expect(matchHunk(f, 0, [hunkOf("h9", "src/shared.ts", "x")])?.id).toBe("h9");
    expect(matchHunk(f, 0, undefined)).toBeUndefined();
  });

  it("Take → B sends that hunk of A into B, Take → A the reverse; the comparison is read again", async () => {
    const { requests, user } = setup();
    await screen.findAllByTestId("between-row");
    await user.click(rowFor("src/shared.ts"));
    const colA = screen.getByTestId("diff-a");
    const takeB = await within(colA).findByTestId("take-hunk");
    expect(takeB).toHaveTextContent("Take → B");
    expect(takeB).toHaveAttribute("data-hunk", "ha1");
    const compares = () => requests.filter((r) => r.path.startsWith("/api/worktrees/compare")).length;
    const before = compares();
    await user.click(takeB);
    expect(requests).toContainEqual({
      method: "POST",
      path: "/api/worktrees/alpha/take",
      body: { directory: "/proj", path: "src/shared.ts", into: "beta", hunk: "ha1" },
    });
    await waitFor(() => expect(compares()).toBeGreaterThan(before));
    const takeA = await within(screen.getByTestId("diff-b")).findByTestId("take-hunk");
    expect(takeA).toHaveTextContent("Take → A");
    await user.click(takeA);
    expect(requests).toContainEqual({
      method: "POST",
      path: "/api/worktrees/beta/take",
      body: { directory: "/proj", path: "src/shared.ts", into: "alpha", hunk: "hb1" },
    });
  });
});

describe("more than two attempts", () => {
  it("adds a column per attempt (compared with A), hiding numbers that are zero", async () => {
    const { requests, user } = setup();
    await screen.findAllByTestId("between-row");
    expect(screen.queryByTestId("attempt-columns")).toBeNull();
    await user.selectOptions(screen.getByTestId("compare-add"), "gamma");
    expect(requests.map((r) => r.path)).toContain("/api/worktrees/compare?directory=%2Fproj&a=alpha&b=gamma&check=false");
    const columns = await screen.findByTestId("attempt-columns");
    await waitFor(() => expect(within(columns).getAllByTestId("attempt-column").map((c) => c.getAttribute("data-name"))).toEqual(["alpha", "beta", "gamma"]));
    const col = (name: string) => within(columns).getAllByTestId("attempt-column").find((c) => c.getAttribute("data-name") === name)!;
    await waitFor(() => expect(within(col("gamma")).getByTestId("column-status")).toHaveTextContent("no changes"));
    expect(within(col("gamma")).getByTestId("column-check")).toHaveTextContent("Check ✗ failed (exit 1)");
    expect(within(col("gamma")).queryByTestId("column-cost")).toBeNull();
    expect(within(col("gamma")).queryByTestId("column-time")).toBeNull();
    expect(within(col("gamma")).queryByTestId("column-files")).toBeNull();
    expect(within(col("alpha")).getByTestId("column-cost")).toHaveTextContent("$0.02");
    expect(within(col("alpha")).getByTestId("column-time")).toHaveTextContent("1 min");
    expect(within(col("alpha")).getByTestId("column-files")).toHaveTextContent("src/shared.ts");
    await user.click(within(col("gamma")).getByRole("button", { name: "Remove gamma from the comparison" }));
    expect(screen.queryByTestId("attempt-columns")).toBeNull();
  });

  it("suggests promoting the one attempt whose check passed", async () => {
    const { user } = setup();
    await screen.findAllByTestId("between-row");
    await user.selectOptions(screen.getByTestId("compare-add"), "gamma");
    const suggestion = await screen.findByTestId("promote-suggestion");
    expect(suggestion).toHaveTextContent("Only B (beta) passed its check.");
    await user.click(within(suggestion).getByTestId("promote-suggested"));
    expect(await screen.findByTestId("promote-dialog")).toHaveTextContent("Promote B (beta)?");
  });

  it("suggests nothing when no check or several passed", () => {
    const x = (label: string, check?: ScriptView) => ({ label, attempt: attempt(label.toLowerCase(), [], { check }) });
    expect(suggestedPromotion([x("A"), x("B")])).toBeNull();
    expect(suggestedPromotion([x("A", ok), x("B", ok)])).toBeNull();
    expect(suggestedPromotion([x("A", failed), x("B", ok)])?.label).toBe("B");
  });
});
