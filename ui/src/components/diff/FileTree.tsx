import { useMemo, useState } from "react";
import { ChevronDown, ChevronRight } from "lucide-react";
import type { FileDiff } from "../../protocol/generated";

const STATUS_BADGE = { added: "A", modified: "M", deleted: "D" } as const;

interface Folder {
  name: string;
  path: string;
  folders: Folder[];
  files: { file: FileDiff; index: number }[];
  count: number;
  additions: number;
  deletions: number;
}

/** The changed files as folders (a chain of single-folder folders shown as one: `src/app/ui`). */
export function buildTree(files: FileDiff[]): Folder {
  const root: Folder = { name: "", path: "", folders: [], files: [], count: 0, additions: 0, deletions: 0 };
  files.forEach((file, index) => {
    const parts = file.file.split("/");
    parts.pop();
    let at = root;
    const chain = [root];
    for (const part of parts) {
      let next = at.folders.find((f) => f.name === part);
      if (!next) {
        next = { name: part, path: at.path ? `${at.path}/${part}` : part, folders: [], files: [], count: 0, additions: 0, deletions: 0 };
        at.folders.push(next);
      }
      at = next;
      chain.push(at);
    }
    at.files.push({ file, index });
    for (const f of chain) {
      f.count += 1;
      f.additions += file.additions;
      f.deletions += file.deletions;
    }
  });
  return compress(root);
}

function compress(folder: Folder): Folder {
  const folders = folder.folders.map((f) => {
    let c = f;
    while (c.files.length === 0 && c.folders.length === 1) {
      const only = c.folders[0]!;
      c = { ...only, name: `${c.name}/${only.name}` };
    }
    return compress(c);
  });
  return { ...folder, folders };
}

/** Many changed files: a tree of folders (collapsible, with counts); a file jumps to its diff. */
export function FileTree({ files, onJump }: { files: FileDiff[]; onJump: (index: number) => void }) {
  const tree = useMemo(() => buildTree(files), [files]);
  const [closed, setClosed] = useState<Record<string, boolean>>({});
  const toggle = (path: string) => setClosed((c) => ({ ...c, [path]: !c[path] }));
  return (
    <ul className="mia-diff-file-list mia-diff-tree" data-testid="diff-file-tree" aria-label="Changed files">
      <FolderItems folder={tree} depth={0} closed={closed} onToggle={toggle} onJump={onJump} />
    </ul>
  );
}

function FolderItems({
  folder,
  depth,
  closed,
  onToggle,
  onJump,
}: {
  folder: Folder;
  depth: number;
  closed: Record<string, boolean>;
  onToggle: (path: string) => void;
  onJump: (index: number) => void;
}) {
  const indent = { paddingLeft: `${10 + depth * 14}px` };
  return (
    <>
      {folder.folders.map((f) => {
        const open = !closed[f.path];
        return (
          <li key={`d:${f.path}`} data-testid="diff-tree-folder" data-path={f.path}>
            <button
              type="button"
              className="mia-diff-file-link mia-diff-tree-folder"
              style={indent}
              aria-expanded={open}
              onClick={() => onToggle(f.path)}
            >
              <span className="mia-diff-tree-caret" aria-hidden="true">
                {open ? <ChevronDown size={14} aria-hidden /> : <ChevronRight size={14} aria-hidden />}
              </span>
              <span className="mia-diff-path">{f.name}/</span>
              <span className="mia-diff-counts">
                <span className="mia-diff-tree-count" data-testid="diff-tree-count">
                  {f.count} file{f.count === 1 ? "" : "s"}
                </span>{" "}
                <span className="mia-diff-add-count">+{f.additions}</span>{" "}
                <span className="mia-diff-del-count">−{f.deletions}</span>
              </span>
            </button>
            {open && (
              <ul className="mia-diff-tree-children">
                <FolderItems folder={f} depth={depth + 1} closed={closed} onToggle={onToggle} onJump={onJump} />
              </ul>
            )}
          </li>
        );
      })}
      {folder.files.map(({ file, index }) => (
        <li key={`f:${file.file}`} data-testid="diff-tree-file" data-path={file.file}>
          <button type="button" className="mia-diff-file-link" style={indent} onClick={() => onJump(index)}>
            <span className={`mia-diff-badge mia-diff-badge-${file.status}`} title={file.status}>
              {STATUS_BADGE[file.status]}
            </span>
            <span className="mia-diff-path">{file.file.split("/").pop()}</span>
            <span className="mia-diff-counts">
              {file.binary ? (
                "binary"
              ) : (
                <>
                  <span className="mia-diff-add-count">+{file.additions}</span>{" "}
                  <span className="mia-diff-del-count">−{file.deletions}</span>
                </>
              )}
            </span>
          </button>
        </li>
      ))}
    </>
  );
}
