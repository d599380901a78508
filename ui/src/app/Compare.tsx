import { useCallback, useEffect, useMemo, useState } from "react";
import { TipButton } from "./TipButton";
import { ListBox, ListBoxItem } from "react-aria-components";
import type { AttemptView, BetweenView, ComparisonView, PromotedView, ScriptView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { formatCost, formatDuration, formatTokens } from "../lib/format";
import { parseUnifiedDiff } from "../lib/unifiedDiff";
import { useServices, useToast } from "./context";
import { filesToDiff, LazyDiffView } from "./DiffSlot";
import { Modal } from "./Modal";
import { useRemoveWorktree } from "./useRemoveWorktree";
import { useWorktreeLog } from "./useWorktreeLog";
import { scriptOk, scriptStatus, shortSha } from "./Worktrees";

type Side = "a" | "b";
type PromoteMode = "merge" | "keep_branch";

export const BETWEEN_LABEL: Record<string, string> = {
  same: "same in both",
  only_a: "only in A",
  only_b: "only in B",
  differ: "both differ",
};

/** Two attempts (worktrees or `main`) side by side: numbers, files between them, diffs, take and promote. */
export function Compare({
  directory,
  initialA,
  initialB,
  onBack,
  backLabel,
}: {
  directory: string;
  initialA?: string;
  initialB?: string;
  onBack: () => void;
  /** The back button's text (default "← Worktrees"). */
  backLabel?: string;
}) {
  const { api } = useServices();
  const toast = useToast();
  const [names, setNames] = useState<string[] | null>(null);
  const [a, setA] = useState(initialA ?? "");
  const [b, setB] = useState(initialB ?? "");
  const [cmp, setCmp] = useState<ComparisonView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [checking, setChecking] = useState(false);
  const [selected, setSelected] = useState<string | null>(null);
  /** Bumped after a take so the diff columns fetch again. */
  const [rev, setRev] = useState(0);
  const [mainChoice, setMainChoice] = useState<{ path: string; side: Side } | null>(null);
  const [promoting, setPromoting] = useState<Side | null>(null);
  const [promoted, setPromoted] = useState<PromotedView | null>(null);
  const checkLog = useWorktreeLog(directory);

  const loadNames = useCallback(() => {
    api.worktrees(directory).then(
      (list) => {
        setNames(list.map((w) => w.name));
      },
      (e: unknown) => {
        setNames([]);
        setError(errorMessage(e));
      },
    );
  }, [api, directory]);
  useEffect(loadNames, [loadNames]);
  // Unset sides default to the first worktree, then another attempt (main when there is only one),
  // as soon as the names are known: set while rendering, so React renders again before it commits.
  if (names && !a) setA(names[0] ?? "main");
  else if (names && !b) setB([...names, "main"].find((n) => n !== a) ?? "main");

  const same = a !== "" && a === b;
  // Nothing to compare (a side unset, or both the same): no comparison is shown or kept.
  const comparable = a !== "" && b !== "" && a !== b;
  if (!comparable && cmp) setCmp(null);
  useEffect(() => {
    if (!comparable) return;
    let alive = true;
    api.compare(directory, a, b).then(
      (c) => {
        if (!alive) return;
        setCmp(c);
        setError(null);
      },
      (e: unknown) => {
        if (!alive) return;
        setCmp(null);
        setError(errorMessage(e));
      },
    );
    return () => {
      alive = false;
    };
  }, [api, directory, a, b, comparable, reloadKey]);

  // The selection stays on its path across reloads; else the first row.
  const row = cmp ? (cmp.between.find((r) => r.path === selected) ?? cmp.between[0] ?? null) : null;
  // "Take into main" defaults to the side that has the file's change, until another side is picked for it.
  const mainFrom: Side =
    row && mainChoice?.path === row.path ? mainChoice.side : row?.status === "only_b" ? "b" : "a";

  const runCheck = async () => {
    setChecking(true);
    checkLog.start([a, b]);
    try {
      setCmp(await api.compare(directory, a, b, true));
      setError(null);
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setChecking(false);
      checkLog.stop();
    }
  };

  const take = async (from: Side, into: string) => {
    if (!cmp || !row) return;
    const path = row.path;
    const fromName = from === "a" ? cmp.a.name : cmp.b.name;
    try {
      await api.take(directory, fromName, path, into);
      toast(`Copied ${path} from ${from.toUpperCase()} (${fromName}) into ${into}`, "info");
      setReloadKey((k) => k + 1);
      setRev((r) => r + 1);
    } catch (e) {
      toast(errorMessage(e));
    }
  };

  const swap = () => {
    setA(b);
    setB(a);
  };

  const options = useMemo(() => [...new Set(["main", ...(names ?? []), a, b].filter(Boolean))], [names, a, b]);

  if (promoted) {
    return (
      <div className="cmp-view" data-testid="compare">
        <CompareHeader onBack={onBack} backLabel={backLabel} />
        <PromoteResult
          directory={directory}
          promoted={promoted}
          onBack={onBack}
          onAgain={() => {
            setPromoted(null);
            setA("");
            setB("");
            setCmp(null);
            loadNames();
          }}
        />
      </div>
    );
  }

  return (
    <div className="cmp-view" data-testid="compare">
      <CompareHeader onBack={onBack} backLabel={backLabel}>
        <label className="row">
          A
          <select className="input inline mono" value={a} onChange={(e) => setA(e.target.value)} data-testid="compare-a">
            {a === "" && <option value="">…</option>}
            {options.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <TipButton className="icon-btn" onPress={swap} aria-label="Swap A and B" tip="Swap A and B">
          ⇄
        </TipButton>
        <label className="row">
          B
          <select className="input inline mono" value={b} onChange={(e) => setB(e.target.value)} data-testid="compare-b">
            {b === "" && <option value="">…</option>}
            {options.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="btn small"
          data-testid="run-check"
          disabled={!cmp || checking}
          onClick={() => void runCheck()}
          title="Runs worktree.checkCommand in both attempts"
        >
          {checking ? "Checking…" : "▶ Run check"}
        </button>
      </CompareHeader>
      {same && <p className="muted pad">Pick two different attempts.</p>}
      {error && (
        <p className="error-text pad" role="alert">
          {error}
        </p>
      )}
      {!cmp && !error && !same && <p className="muted pad">Loading…</p>}
      {cmp && (
        <div className="cmp-body">
          <div className="cmp-attempts">
            <AttemptCard side="A" attempt={cmp.a} testId="attempt-a" onPromote={() => setPromoting("a")} />
            <AttemptCard side="B" attempt={cmp.b} testId="attempt-b" onPromote={() => setPromoting("b")} />
          </div>
          {checking && checkLog.lines.length > 0 && (
            <pre className="wt-log cmp-check-live" data-testid="check-log">
              {checkLog.lines.map((l, i) => (
                <div key={i} className={l.stderr ? "wt-log-err" : undefined}>
                  [{l.name}] {l.line}
                </div>
              ))}
            </pre>
          )}
          <p className="small muted cmp-base">
            Both against their common base <span className="mono">{shortSha(cmp.base)}</span> · {cmp.between.length} file
            {cmp.between.length === 1 ? "" : "s"} changed in either
          </p>
          <BetweenList rows={cmp.between} selected={row?.path ?? null} onSelect={setSelected} />
          {row && (
            <div className="cmp-actions" role="group" aria-label={`Actions for ${row.path}`}>
              <span className="mono small cmp-selected" title={row.path}>
                {row.path}
              </span>
              <button
                type="button"
                className="btn small"
                data-testid="take-into-b"
                disabled={row.status === "same"}
                onClick={() => void take("a", cmp.b.name)}
              >
                Take A's version into B
              </button>
              <button
                type="button"
                className="btn small"
                data-testid="take-into-a"
                disabled={row.status === "same"}
                onClick={() => void take("b", cmp.a.name)}
              >
                Take B's version into A
              </button>
              <span className="row cmp-main-take">
                <button
                  type="button"
                  className="btn small"
                  data-testid="take-into-main"
                  disabled={cmp.a.name === "main" || cmp.b.name === "main"}
                  title={
                    cmp.a.name === "main" || cmp.b.name === "main"
                      ? "One side is main: take into A or B instead"
                      : `Copies ${mainFrom.toUpperCase()}'s version into the main working tree`
                  }
                  onClick={() => void take(mainFrom, "main")}
                >
                  Take into main
                </button>
                <label className="small muted row">
                  from
                  <select
                    className="input inline"
                    value={mainFrom}
                    onChange={(e) => setMainChoice({ path: row.path, side: e.target.value as Side })}
                    aria-label="Whose version goes into main"
                    data-testid="take-main-from"
                  >
                    <option value="a">A</option>
                    <option value="b">B</option>
                  </select>
                </label>
              </span>
            </div>
          )}
          {row ? (
            <div className="cmp-cols">
              <DiffColumn
                side="A"
                directory={directory}
                attempt={cmp.a}
                base={cmp.base}
                path={row.path}
                rev={rev}
                testId="diff-a"
              />
              <DiffColumn
                side="B"
                directory={directory}
                attempt={cmp.b}
                base={cmp.base}
                path={row.path}
                rev={rev}
                testId="diff-b"
              />
            </div>
          ) : (
            <p className="muted pad">Neither attempt changed anything yet.</p>
          )}
        </div>
      )}
      {promoting && cmp && (
        <PromoteDialog
          directory={directory}
          side={promoting}
          attempt={promoting === "a" ? cmp.a : cmp.b}
          onClose={() => setPromoting(null)}
          onDone={(p) => {
            setPromoting(null);
            setPromoted(p);
          }}
        />
      )}
    </div>
  );
}

function CompareHeader({
  onBack,
  backLabel,
  children,
}: {
  onBack: () => void;
  backLabel?: string;
  children?: React.ReactNode;
}) {
  return (
    <header className="conv-header cmp-header">
      <button type="button" className="btn small" onClick={onBack} data-testid="compare-back">
        {backLabel ?? "← Worktrees"}
      </button>
      <h1>Compare attempts</h1>
      <div className="row cmp-pickers">{children}</div>
    </header>
  );
}

function AttemptCard({
  side,
  attempt,
  testId,
  onPromote,
}: {
  side: "A" | "B";
  attempt: AttemptView;
  testId: string;
  onPromote: () => void;
}) {
  const u = attempt.usage;
  return (
    <section className="cmp-attempt" data-testid={testId} aria-label={`Attempt ${side}: ${attempt.name}`}>
      <header className="row">
        <h3>
          {side} · <span className="mono">{attempt.name}</span>
        </h3>
        <button
          type="button"
          className="btn small primary"
          data-testid={`promote-${side.toLowerCase()}`}
          disabled={attempt.name === "main"}
          title={attempt.name === "main" ? "main is already the main tree" : `Promote ${attempt.name}`}
          onClick={onPromote}
        >
          Promote {side}
        </button>
      </header>
      <dl className="cmp-stats">
        <div>
          <dt>Files</dt>
          <dd data-testid="stat-files">{attempt.stats.files}</dd>
        </div>
        <div>
          <dt>Lines</dt>
          <dd data-testid="stat-lines">
            <span className="add">+{attempt.stats.additions}</span> <span className="del">−{attempt.stats.deletions}</span>
          </dd>
        </div>
        <div>
          <dt>Steps</dt>
          <dd data-testid="stat-steps">{u.steps}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd data-testid="stat-tokens" title={`${u.input_tokens} in, ${u.output_tokens} out`}>
            {formatTokens(u.input_tokens)} in · {formatTokens(u.output_tokens)} out
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd data-testid="stat-cost">
            {u.sessions === 0 ? "—" : u.cost === null || u.cost === undefined ? "unknown" : formatCost(u.cost)}
          </dd>
        </div>
        <div>
          <dt>Time</dt>
          <dd data-testid="stat-duration">{u.sessions === 0 ? "—" : formatDuration(u.duration_ms)}</dd>
        </div>
        <div>
          <dt>Sessions</dt>
          <dd>{u.sessions}</dd>
        </div>
      </dl>
      <CheckResult check={attempt.check ?? null} />
    </section>
  );
}

function CheckResult({ check }: { check: ScriptView | null }) {
  if (!check)
    return (
      <p className="small muted" data-testid="check-result">
        Check: not run
      </p>
    );
  const ok = scriptOk(check);
  return (
    <details className="cmp-check" data-testid="check-result" data-ok={ok}>
      <summary className={ok ? "add" : "del"}>
        Check {ok ? "✓" : "✗"} {scriptStatus(check)} <span className="mono muted small">{check.command}</span>
      </summary>
      <pre className="wt-log" data-testid="check-output">
        {check.output || "(no output)"}
      </pre>
    </details>
  );
}

/**
 * The files either attempt changed, with how they compare: a react-aria-components listbox (one
 * tab stop; ArrowUp/ArrowDown/Home/End and typing a name move the selection with the focus).
 */
export function BetweenList({
  rows,
  selected,
  onSelect,
}: {
  rows: BetweenView[];
  selected: string | null;
  onSelect: (path: string) => void;
}) {
  if (!rows.length) return null;
  return (
    <ListBox
      className="cmp-between"
      aria-label="Files changed in either attempt"
      data-testid="between"
      items={rows.map((r) => ({ ...r, id: r.path }))}
      selectionMode="single"
      selectionBehavior="replace"
      disallowEmptySelection
      selectedKeys={selected === null ? [] : [selected]}
      onSelectionChange={(keys) => {
        if (keys === "all") return;
        const [path] = [...keys];
        if (path !== undefined) onSelect(String(path));
      }}
    >
      {(r) => (
        <ListBoxItem
          id={r.path}
          textValue={r.path}
          className="cmp-between-row"
          data-testid="between-row"
          data-path={r.path}
          data-status={r.status}
        >
          <span className="mono cmp-path">{r.path}</span>
          <span className={`chip cmp-status cmp-status-${r.status}`}>{BETWEEN_LABEL[r.status] ?? r.status}</span>
        </ListBoxItem>
      )}
    </ListBox>
  );
}

/** One attempt's diff of one file against the base (the diff route's text, parsed for the diff view). */
function DiffColumn({
  side,
  directory,
  attempt,
  base,
  path,
  rev,
  testId,
}: {
  side: "A" | "B";
  directory: string;
  attempt: AttemptView;
  base: string;
  path: string;
  rev: number;
  testId: string;
}) {
  const { api } = useServices();
  const changed = attempt.files.find((f) => f.path === path);
  const [state, setState] = useState<{ key: string; text?: string; error?: string } | null>(null);
  const key = `${attempt.name}\n${base}\n${path}\n${rev}`;
  const hasChange = changed !== undefined;
  useEffect(() => {
    if (!hasChange) return;
    let alive = true;
    api.attemptDiff(directory, attempt.name, base, path).then(
      (r) => alive && setState({ key, text: r.diff }),
      (e: unknown) => alive && setState({ key, error: errorMessage(e) }),
    );
    return () => {
      // Another file, attempt or revision (or the file is unchanged now): this answer is not shown.
      alive = false;
      setState(null);
    };
  }, [api, directory, attempt.name, base, path, key, hasChange]);
  const diff = useMemo(() => {
    if (state?.key !== key || state.text === undefined) return null;
    const d = filesToDiff(parseUnifiedDiff(state.text));
    return { ...d, patch: state.text };
  }, [state, key]);
  return (
    <section className="cmp-col" data-testid={testId} aria-label={`${side}'s diff of ${path}`}>
      <h3 className="cmp-col-title">
        {side} · <span className="mono">{attempt.name}</span>
        {changed && <span className="muted small"> · {changed.status}</span>}
      </h3>
      <div className="cmp-col-body">
        {!changed ? (
          <p className="muted" data-testid="diff-unchanged">
            Unchanged from the base in {side}.
          </p>
        ) : state?.key === key && state.error ? (
          <p className="error-text">{state.error}</p>
        ) : diff ? (
          <LazyDiffView diff={diff} defaultMode="unified" />
        ) : (
          <p className="muted">Loading diff…</p>
        )}
      </div>
    </section>
  );
}

function PromoteDialog({
  directory,
  side,
  attempt,
  onClose,
  onDone,
}: {
  directory: string;
  side: Side;
  attempt: AttemptView;
  onClose: () => void;
  onDone: (p: PromotedView) => void;
}) {
  const { api } = useServices();
  const [mode, setMode] = useState<PromoteMode>("merge");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      onDone(await api.promote(directory, attempt.name, mode));
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <Modal title={`Promote ${side.toUpperCase()} (${attempt.name})?`} onClose={onClose} testId="promote-dialog">
      <p>Its uncommitted changes are committed on its branch first.</p>
      <fieldset className="stack cmp-modes">
        <legend className="sr-only">How to promote</legend>
        <label className="check">
          <input
            type="radio"
            name="promote-mode"
            value="merge"
            checked={mode === "merge"}
            onChange={() => setMode("merge")}
            data-testid="promote-mode-merge"
          />
          Merge into the branch it started from (fast-forward when possible; a conflict changes nothing)
        </label>
        <label className="check">
          <input
            type="radio"
            name="promote-mode"
            value="keep_branch"
            checked={mode === "keep_branch"}
            onChange={() => setMode("keep_branch")}
            data-testid="promote-mode-keep"
          />
          Keep the branch (nothing is merged: push it or open a pull request yourself)
        </label>
      </fieldset>
      {error && (
        <p className="error-text" role="alert" data-testid="promote-error">
          {error}
        </p>
      )}
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="btn primary" disabled={busy} onClick={() => void go()} data-testid="promote-confirm">
          {busy ? "Promoting…" : "Promote"}
        </button>
      </div>
    </Modal>
  );
}

function PromoteResult({
  directory,
  promoted,
  onBack,
  onAgain,
}: {
  directory: string;
  promoted: PromotedView;
  onBack: () => void;
  onAgain: () => void;
}) {
  const [gone, setGone] = useState<string[]>([]);
  const removal = useRemoveWorktree(directory, (w) => setGone((g) => [...g, w.name]));
  const left = promoted.others.filter((o) => !gone.includes(o));
  const removeAll = async () => {
    for (const name of left) {
      // Stops at the first one that would lose work: its confirmation is then open.
      if (!(await removal.remove(name))) break;
    }
  };
  return (
    <div className="cmp-body pad" data-testid="promote-result" role="status">
      <h3>Promoted {promoted.name}</h3>
      {promoted.merged_into ? (
        <p>
          Branch <span className="mono">{promoted.branch}</span> was merged into{" "}
          <strong className="mono">{promoted.merged_into}</strong>{" "}
          {promoted.fast_forward ? "as a fast-forward" : "with a merge commit"}
          {promoted.commit ? (
            <>
              {" "}
              (now at <span className="mono">{shortSha(promoted.commit)}</span>)
            </>
          ) : null}
          . {promoted.removed ? "Its worktree was removed." : "Its worktree is kept."}
        </p>
      ) : (
        <p>
          Its work is committed on branch <strong className="mono">{promoted.branch}</strong> at{" "}
          <span className="mono">{shortSha(promoted.head)}</span>; nothing was merged. The worktree is kept.
        </p>
      )}
      {promoted.others.length > 0 && (
        <section className="wt-card" data-testid="promote-others">
          <p>Other attempts you may remove now:</p>
          <ul className="wt-sessions">
            {promoted.others.map((o) => (
              <li key={o} className="row" data-testid="promote-other" data-name={o}>
                <span className="mono">{o}</span>
                {gone.includes(o) ? (
                  <span className="muted small">removed</span>
                ) : (
                  <button
                    type="button"
                    className="btn small danger"
                    disabled={removal.busy !== null}
                    onClick={() => void removal.remove(o)}
                    data-testid="remove-other"
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
          {left.length > 1 && (
            <button
              type="button"
              className="btn small danger"
              disabled={removal.busy !== null}
              onClick={() => void removeAll()}
              data-testid="remove-others"
            >
              Remove all {left.length}
            </button>
          )}
        </section>
      )}
      <div className="row">
        <button type="button" className="btn" onClick={onBack} data-testid="promote-back">
          Back to worktrees
        </button>
        <button type="button" className="btn" onClick={onAgain}>
          Compare others
        </button>
      </div>
      {removal.dialog}
    </div>
  );
}
