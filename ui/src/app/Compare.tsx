import { useCallback, useEffect, useMemo, useState } from "react";
import { TipButton } from "./TipButton";
import { ListBox, ListBoxItem } from "react-aria-components";
import type { AttemptView, BetweenView, ComparisonView, PromotedView, WorktreeFileDiff } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices, useToast } from "./context";
import { filesToDiff, LazyDiffView } from "./DiffSlot";
import { AttemptCard } from "./AttemptCard";
import { PromoteDialog, PromoteResult } from "./Promote";
import { useForced } from "./useForced";
import { useWorktreeLog } from "./useWorktreeLog";
import { shortSha } from "./Worktrees";

type Side = "a" | "b";

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
  const forced = useForced((m) => toast(m));

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
    await forced.attempt(`Take ${path} into ${into}?`, "Take", async (force) => {
      const r = await api.take(directory, fromName, path, into, force);
      const kept = r.trash ? `; ${into}'s own version is in the trash (${r.trash.id})` : "";
      toast(`Copied ${path} from ${from.toUpperCase()} (${fromName}) into ${into}${kept}`, "info");
      setReloadKey((k) => k + 1);
      setRev((r) => r + 1);
    });
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
      {forced.dialog}
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
  const [state, setState] = useState<{ key: string; diff?: WorktreeFileDiff; error?: string } | null>(null);
  const key = `${attempt.name}\n${base}\n${path}\n${rev}`;
  const hasChange = changed !== undefined;
  useEffect(() => {
    if (!hasChange) return;
    let alive = true;
    api.attemptDiff(directory, attempt.name, base, path).then(
      (r) => alive && setState({ key, diff: r }),
      (e: unknown) => alive && setState({ key, error: errorMessage(e) }),
    );
    return () => {
      // Another file, attempt or revision (or the file is unchanged now): this answer is not shown.
      alive = false;
      setState(null);
    };
  }, [api, directory, attempt.name, base, path, key, hasChange]);
  const diff = useMemo(() => {
    if (state?.key !== key || state.diff === undefined) return null;
    // The server sends files and hunks: nothing is parsed here.
    const d = filesToDiff(state.diff.files);
    return { ...d, patch: state.diff.diff };
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
