import { useMemo, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowDown, ArrowUp, Plus, Trash2 } from "lucide-react";
import type { PermissionAction, PermissionRule, RuleView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";

const ACTIONS: PermissionAction[] = ["allow", "ask", "deny"];
const PERMISSIONS = ["*", "read", "edit", "write", "bash", "list", "glob", "grep", "webfetch", "websearch", "task", "mcp"];

interface Row {
  key: number;
  rule: PermissionRule;
}

/** The global config's own rules among the compiled ones, in their written order. */
export function ownRules(rules: RuleView[], globalConfig: string): PermissionRule[] {
  const at = (source: string) => Number(source.slice(source.lastIndexOf("#") + 1)) || 0;
  return rules
    .filter((r) => r.layer === "global" && r.source.startsWith(`${globalConfig} #`))
    .sort((a, b) => at(a.source) - at(b.source))
    .map((r) => ({
      permission: r.permission,
      ...(r.pattern && r.pattern !== "*" ? { pattern: r.pattern } : {}),
      action: (ACTIONS.includes(r.action as PermissionAction) ? r.action : "ask") as PermissionAction,
    }));
}

let nextKey = 1;
const rows = (rules: PermissionRule[]): Row[] => rules.map((rule) => ({ key: nextKey++, rule }));

/**
 * Your permission rules (the global config's `permissions`, checked in this order): add, edit,
 * delete and reorder them, then save (they replace the global config's list). The compiled
 * rules of every layer, with their sources, are listed below (read-only).
 */
export function RulesEditor({
  directory,
  globalConfig,
  defaultAgent,
}: {
  directory: string | null;
  globalConfig: string;
  defaultAgent: string;
}) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: keys.permissions(directory ?? "", defaultAgent),
    queryFn: () => api.permissions(directory ?? "", defaultAgent),
    enabled: directory !== null,
  });
  const data = query.data;
  const saved = useMemo(() => (data ? rows(ownRules(data.rules, globalConfig)) : null), [data, globalConfig]);
  const [draft, setDraft] = useState<Row[] | null>(null);
  const [saving, setSaving] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  const shown = draft ?? saved;

  const change = (f: (r: Row[]) => Row[]) => setDraft((d) => f(d ?? saved ?? []));
  const update = (key: number, patch: Partial<PermissionRule>) =>
    change((rs) => rs.map((r) => (r.key === key ? { ...r, rule: { ...r.rule, ...patch } } : r)));
  const move = (i: number, by: -1 | 1) =>
    change((rs) => {
      const next = [...rs];
      const [r] = next.splice(i, 1);
      next.splice(i + by, 0, r!);
      return next;
    });
  const add = () => {
    change((rs) => [...rs, { key: nextKey++, rule: { permission: "bash", action: "ask" } }]);
    requestAnimationFrame(() => list.current?.querySelector<HTMLInputElement>("li:last-child input")?.focus());
  };
  const save = async () => {
    if (!draft) return;
    const permissions = draft.map(({ rule }) => ({
      permission: rule.permission.trim() || "*",
      ...(rule.pattern?.trim() ? { pattern: rule.pattern.trim() } : {}),
      action: rule.action,
    }));
    setSaving(true);
    try {
      await api.updateSettings({ permissions });
      setDraft(null);
      toast("Permission rules saved", "info");
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setSaving(false);
      await queryClient.invalidateQueries({ queryKey: ["permissions"] });
    }
  };

  return (
    <section data-testid="rules-editor">
      <h3>Your permission rules</h3>
      <p className="muted small">
        Checked in this order, for every agent and project, below the agents&apos; and projects&apos; own rules. Saved to{" "}
        <span className="mono">{globalConfig}</span>.
      </p>
      {directory === null && <p className="muted small">Open a project to edit them.</p>}
      {query.error && <p className="error-text">{errorMessage(query.error)}</p>}
      {shown && shown.length === 0 && (
        <p className="muted small" data-testid="my-rules-empty">
          No rules of your own yet.
        </p>
      )}
      {shown && shown.length > 0 && (
        <ol className="rules-edit" ref={list} aria-label="Your permission rules">
          {shown.map((r, i) => (
            <li key={r.key} className="rules-edit-row" data-testid="my-rule">
              <span className="muted rules-edit-n">{i + 1}</span>
              <input
                className="input mono"
                list="rules-edit-permissions"
                aria-label={`Rule ${i + 1}: permission`}
                data-testid="my-rule-permission"
                value={r.rule.permission}
                onChange={(e) => update(r.key, { permission: e.target.value })}
              />
              <input
                className="input mono"
                aria-label={`Rule ${i + 1}: pattern`}
                placeholder="* (everything)"
                data-testid="my-rule-pattern"
                value={r.rule.pattern ?? ""}
                onChange={(e) => update(r.key, { pattern: e.target.value })}
              />
              <select
                className={`input action-${r.rule.action}`}
                aria-label={`Rule ${i + 1}: action`}
                data-testid="my-rule-action"
                value={r.rule.action}
                onChange={(e) => update(r.key, { action: e.target.value as PermissionAction })}
              >
                {ACTIONS.map((a) => (
                  <option key={a}>{a}</option>
                ))}
              </select>
              <button type="button" className="icon-btn" aria-label={`Move rule ${i + 1} up`} title="Move up" disabled={i === 0} onClick={() => move(i, -1)}>
                <ArrowUp size={14} aria-hidden />
              </button>
              <button
                type="button"
                className="icon-btn"
                aria-label={`Move rule ${i + 1} down`}
                title="Move down"
                disabled={i === shown.length - 1}
                onClick={() => move(i, 1)}
              >
                <ArrowDown size={14} aria-hidden />
              </button>
              <button
                type="button"
                className="icon-btn"
                aria-label={`Delete rule ${i + 1}`}
                title="Delete"
                data-testid="my-rule-delete"
                onClick={() => change((rs) => rs.filter((x) => x.key !== r.key))}
              >
                <Trash2 size={14} aria-hidden />
              </button>
            </li>
          ))}
        </ol>
      )}
      <datalist id="rules-edit-permissions">
        {PERMISSIONS.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      {shown && (
        <div className="row rules-edit-actions">
          <button type="button" className="btn small" data-testid="my-rule-add" onClick={add}>
            <Plus size={13} aria-hidden />
            Add a rule
          </button>
          <span className="rules-edit-spacer" />
          {draft && (
            <button type="button" className="btn small" data-testid="my-rules-discard" onClick={() => setDraft(null)}>
              Discard changes
            </button>
          )}
          <button
            type="button"
            className="btn small primary"
            data-testid="my-rules-save"
            disabled={!draft || saving}
            onClick={() => void save()}
          >
            {saving ? "Saving…" : "Save rules"}
          </button>
        </div>
      )}
    </section>
  );
}
