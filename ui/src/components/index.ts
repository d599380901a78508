// Self-contained UI components: data and callbacks in, no fetching, no global state.
export { PermissionDialog } from "./permission/PermissionDialog";
export type { PermissionDialogProps } from "./permission/PermissionDialog";
export { UndoTimeline } from "./timeline/UndoTimeline";
export type { UndoTimelineProps } from "./timeline/UndoTimeline";
export { DiffView } from "./diff/DiffView";
export type { DiffViewProps, DiffViewData, DiffMode, DiffComment, DiffLineTarget } from "./diff/DiffView";
