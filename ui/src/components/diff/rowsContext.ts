import { createContext, useContext, type ReactNode } from "react";

/** What the rows of one file can do besides showing lines (all optional). */
export interface FileRowsOptions {
  /** The line numbers' buttons: comment on that line (`extend`: shift held, a range from the last one). */
  onGutter?: (line: number, extend: boolean) => void;
  /** Buttons in a hunk's header row (Stage, Discard, Take …). */
  hunkActions?: (hunk: number) => ReactNode;
  /** After-side lines marked as selected (the range being commented on). */
  selected?: readonly [number, number] | null;
  /** The file's path (the gutter buttons' labels). */
  file: string;
}

export const FileRowsContext = createContext<FileRowsOptions>({ file: "" });

export function useFileRows(): FileRowsOptions {
  return useContext(FileRowsContext);
}
