import { useCallback, useEffect, useMemo, useState } from "react";
import { TipButton } from "./TipButton";
import type { ComparisonView, HunkView, PromotedView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices, useToast } from "./context";
import { AttemptCard } from "./AttemptCard";
import { BetweenList, CompareHeader } from "./compare/BetweenList";
import { BetweenDiff } from "./compare/BetweenDiff";
import { DiffColumn } from "./compare/DiffColumn";
import { letter, MoreAttempts, useExtraAttempts, type Labeled } from "./compare/MoreAttempts";
import { PromoteDialog, PromoteResult } from "./Promote";
import { useForced } from "./useForced";
import { useWorktreeLog } from "./useWorktreeLog";
import { shortSha } from "./Worktrees";
import { ArrowLeftRight, Loader2, Play } from "lucide-react";

type Side = "a" | "b";

export { BETWEEN_LABEL, BetweenList } from "./compare/BetweenList";

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
  const [promoting, setPromoting] = useState<Labeled | null>(null);
  /** A file both changed: each against the base, or A against B directly. */
  const [view, setView] = useState<"base" | "between">("base");
  /** Attempts shown beside A and B (each compared with A for its numbers). */
  const [extras, setExtras] = useState<string[]>([]);
  const extraQueries = useExtraAttempts(directory, a, extras, reloadKey);
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
    api.compare(directory, a, b, false, true).then(
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
      setCmp(await api.compare(directory, a, b, true, true));
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

  const takeHunk = async (from: Side, hunk: HunkView) => {
    if (!cmp || !row) return;
    const fromName = from === "a" ? cmp.a.name : cmp.b.name;
    const into = from === "a" ? cmp.b.name : cmp.a.name;
    try {
      const r = await api.takeHunk(directory, fromName, row.path, into, hunk.id);
      const kept = r.trash ? `; ${into}'s own version is in the trash (${r.trash.id})` : "";
      toast(`Took one hunk of ${row.path} from ${fromName} into ${into}${kept}`, "info");
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setReloadKey((k) => k + 1);
      setRev((r) => r + 1);
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
          <ArrowLeftRight size={14} aria-hidden />
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
          {checking ? <Loader2 size={12} className="spin" aria-hidden /> : <Play size={12} aria-hidden />}
          {checking ? "Checking…" : "Run check"}
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
            <AttemptCard side="A" attempt={cmp.a} testId="attempt-a" onPromote={() => setPromoting({ label: "A", attempt: cmp.a })} />
            <AttemptCard side="B" attempt={cmp.b} testId="attempt-b" onPromote={() => setPromoting({ label: "B", attempt: cmp.b })} />
          </div>
          <MoreAttempts
            attempts={[
              { label: "A", attempt: cmp.a },
              { label: "B", attempt: cmp.b },
              ...extras.map((name, i) => {
                const data = extraQueries[i]?.data;
                return data ? { label: letter(i + 2), attempt: data } : { label: letter(i + 2), name, loading: true as const };
              }),
            ]}
            extraErrors={extraQueries.flatMap((q, i) => (q.error ? [`${extras[i]}: ${errorMessage(q.error)}`] : []))}
            addable={options.filter((n) => n !== a && n !== b && !extras.includes(n))}
            onAdd={(n) => setExtras((x) => [...x, n])}
            onRemove={(n) => setExtras((x) => x.filter((e) => e !== n))}
            onPromote={setPromoting}
          />
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
          {row?.status === "differ" && (
            <div className="cmp-view-toggle" role="group" aria-label={`How to show ${row.path}`}>
              <button
                type="button"
                className="btn small"
                data-testid="cmp-view-base"
                aria-pressed={view === "base"}
                onClick={() => setView("base")}
                title="Each attempt's change against the common base"
              >
                Base
              </button>
              <button
                type="button"
                className="btn small"
                data-testid="cmp-view-between"
                aria-pressed={view === "between"}
                onClick={() => setView("between")}
                title="A's version against B's, directly"
              >
                A ↔ B
              </button>
            </div>
          )}
          {row?.status === "differ" && view === "between" ? (
            <BetweenDiff directory={directory} a={cmp.a.name} b={cmp.b.name} path={row.path} rev={rev} />
          ) : row ? (
            <div className="cmp-cols">
              <DiffColumn
                side="A"
                directory={directory}
                attempt={cmp.a}
                base={cmp.base}
                path={row.path}
                rev={rev}
                testId="diff-a"
                onTakeHunk={(h) => void takeHunk("a", h)}
              />
              <DiffColumn
                side="B"
                directory={directory}
                attempt={cmp.b}
                base={cmp.base}
                path={row.path}
                rev={rev}
                testId="diff-b"
                onTakeHunk={(h) => void takeHunk("b", h)}
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
          side={promoting.label}
          attempt={promoting.attempt}
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

