import { useEffect, useState } from "react";
import { TipButton } from "./TipButton";
import type { ProjectSummary } from "../protocol/generated";
import { baseName, relativeTime } from "../lib/format";
import { errorMessage } from "../lib/api";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";
import { Folder, FolderOpen, GitBranch, Settings } from "lucide-react";

export function ProjectBar({
  project,
  onOpen,
  onSettings,
  onWorktrees,
  worktreesOpen,
}: {
  project: string | null;
  onOpen: (dir: string) => void;
  onSettings: () => void;
  onWorktrees?: () => void;
  worktreesOpen?: boolean;
}) {
  const { platform } = useServices();
  const toast = useToast();
  const [asking, setAsking] = useState(false);
  const open = async () => {
    if (platform.kind === "desktop") {
      try {
        const dir = await platform.pickFolder();
        if (dir) onOpen(dir);
      } catch (e) {
        toast(errorMessage(e));
      }
    } else setAsking(true);
  };
  return (
    <div className="project-bar">
      <div className="project-name" title={project ?? "No project open"} data-testid="project-name">
        <Folder size={14} aria-hidden /> {project ? baseName(project) : "No project"}
      </div>
      <div className="project-actions">
        <TipButton className="btn small icon-only" data-testid="open-folder" onPress={() => void open()} aria-label="Open folder…" tip="Open a project folder">
          <FolderOpen size={14} aria-hidden />
        </TipButton>
        {project && onWorktrees && (
          <button
            type="button"
            className={`btn small toggle${worktreesOpen ? " on" : ""}`}
            data-testid="open-worktrees"
            aria-pressed={worktreesOpen ? "true" : "false"}
            title="Worktrees: parallel attempts, compare, promote"
            onClick={onWorktrees}
          >
            <GitBranch size={14} aria-hidden />
            Worktrees
          </button>
        )}
        <TipButton className="btn small" data-testid="open-settings" onPress={onSettings} aria-label="Settings" tip="Settings">
          <Settings size={14} aria-hidden />
        </TipButton>
      </div>
      {asking && (
        <OpenFolderDialog
          onClose={() => setAsking(false)}
          onPick={(dir) => {
            setAsking(false);
            onOpen(dir);
          }}
        />
      )}
    </div>
  );
}

/** Browser: no native dialog, so a path field and the recent projects. */
function OpenFolderDialog({ onClose, onPick }: { onClose: () => void; onPick: (dir: string) => void }) {
  const { api } = useServices();
  const [path, setPath] = useState("");
  const [projects, setProjects] = useState<ProjectSummary[] | null>(null);
  useEffect(() => {
    api.projects().then(setProjects, () => setProjects([]));
  }, [api]);
  return (
    <Modal title="Open a project folder" onClose={onClose} testId="open-folder-dialog">
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) onPick(path.trim());
        }}
      >
        <label className="stack">
          <span>Absolute path of the folder</span>
          <input
            className="input mono"
            data-testid="folder-path"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder="/home/me/project"
            autoFocus
          />
        </label>
        <div className="row-end">
          <button type="submit" className="btn primary" disabled={!path.trim()}>
            Open
          </button>
        </div>
      </form>
      <h3 className="small muted">Recent projects</h3>
      {projects === null && <p className="muted">Loading…</p>}
      {projects?.length === 0 && <p className="muted">None yet.</p>}
      <ul className="recent-projects">
        {projects?.map((p) => (
          <li key={p.directory}>
            <button type="button" className="link-btn" onClick={() => onPick(p.directory)} title={p.directory}>
              <strong>{baseName(p.directory)}</strong> <span className="mono muted small">{p.directory}</span>
            </button>
            <span className="muted small">
              {" "}
              {p.sessions} sessions · {relativeTime(p.last_used)}
            </span>
          </li>
        ))}
      </ul>
    </Modal>
  );
}
