import { createContext, useContext } from "react";

/** "Open in editor" for a project file (path relative to the project), set by the session view. */
export type OpenFile = (path: string, line?: number) => void;

export const OpenFileContext = createContext<OpenFile | null>(null);

export function useOpenFile(): OpenFile | null {
  return useContext(OpenFileContext);
}
