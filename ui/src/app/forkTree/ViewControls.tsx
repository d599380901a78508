import { ArrowDownFromLine, ArrowRightFromLine, Map as MapIcon, Maximize, ZoomIn, ZoomOut } from "lucide-react";
import type { Direction } from "../forkTreeModel";
import { MAX_ZOOM, MIN_ZOOM } from "./viewport";

/** Zoom out / level / zoom in, fit to view, the layout direction and the minimap, over the tree's corner. */
export function ViewControls({
  k,
  dir,
  auto,
  minimap,
  onZoomIn,
  onZoomOut,
  onFit,
  onDirection,
  onMinimap,
}: {
  k: number;
  dir: Direction;
  /** The direction was picked by depth (not by the user). */
  auto: boolean;
  minimap: boolean;
  onZoomIn: () => void;
  onZoomOut: () => void;
  onFit: () => void;
  onDirection: (dir: Direction) => void;
  onMinimap: (show: boolean) => void;
}) {
  const other: Direction = dir === "LR" ? "TB" : "LR";
  const dirLabel = other === "TB" ? "Lay out top to bottom" : "Lay out left to right";
  return (
    <div className="ft-controls" role="toolbar" aria-label="Fork tree view" data-testid="fork-tree-controls">
      <button
        type="button"
        className="icon-btn"
        onClick={onZoomOut}
        disabled={k <= MIN_ZOOM + 1e-3}
        aria-label="Zoom out"
        title="Zoom out (−, Ctrl/Cmd+wheel)"
        data-testid="fork-tree-zoom-out"
      >
        <ZoomOut size={16} aria-hidden="true" />
      </button>
      <span className="ft-zoom small" data-testid="fork-tree-zoom" aria-live="polite" aria-label={`Zoom ${Math.round(k * 100)}%`}>
        {Math.round(k * 100)}%
      </span>
      <button
        type="button"
        className="icon-btn"
        onClick={onZoomIn}
        disabled={k >= MAX_ZOOM - 1e-3}
        aria-label="Zoom in"
        title="Zoom in (+, Ctrl/Cmd+wheel)"
        data-testid="fork-tree-zoom-in"
      >
        <ZoomIn size={16} aria-hidden="true" />
      </button>
      <button type="button" className="icon-btn" onClick={onFit} aria-label="Fit to view" title="Fit to view (0)" data-testid="fork-tree-fit">
        <Maximize size={16} aria-hidden="true" />
      </button>
      <span className="ft-controls-sep" aria-hidden="true" />
      <button
        type="button"
        className="icon-btn"
        onClick={() => onDirection(other)}
        aria-label={dirLabel}
        title={`${dirLabel}${auto ? " (now chosen by depth)" : ""}`}
        data-testid="fork-tree-direction"
        data-dir={dir}
      >
        {other === "TB" ? <ArrowDownFromLine size={16} aria-hidden="true" /> : <ArrowRightFromLine size={16} aria-hidden="true" />}
      </button>
      <button
        type="button"
        className={`icon-btn${minimap ? " on" : ""}`}
        onClick={() => onMinimap(!minimap)}
        aria-pressed={minimap}
        aria-label="Minimap"
        title={minimap ? "Hide the minimap" : "Show the minimap"}
        data-testid="fork-tree-minimap-toggle"
      >
        <MapIcon size={16} aria-hidden="true" />
      </button>
    </div>
  );
}
