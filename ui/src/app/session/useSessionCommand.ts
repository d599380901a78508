import { useCallback, useEffect, useEffectEvent } from "react";
import type { RevertSummary } from "../../protocol/generated";
import type { SessionStore } from "../../state/store";
import { errorMessage } from "../../lib/api";
import { useServices, useToast } from "../context";
import { SESSION_COMMAND, type SessionCommand } from "../commands";
import type { PanelTab } from "../RightPanel";
import type { SessionViewProps } from "../SessionView";
import type { useSessionActions } from "./useSessionActions";

/** What a `/` command does in a session view (`args`: the rest of the line, for those that take some). */
export function useSessionCommand({
  sessionId,
  props,
  store,
  actions: { compact, fork, promote, reportHistory, setModel, switchTo, unshare },
  setPanel,
  setHelp,
  setModelPicker,
  setSharing,
  setReview,
}: {
  sessionId: string;
  props: SessionViewProps;
  store: SessionStore;
  actions: ReturnType<typeof useSessionActions>;
  setPanel: (tab: PanelTab | null) => void;
  setHelp: (open: boolean) => void;
  setModelPicker: (open: boolean) => void;
  setSharing: (open: boolean) => void;
  setReview: (open: boolean) => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  return useCallback(
    (name: string, args?: string) => {
      const run = async (p: Promise<RevertSummary>) => {
        try {
          reportHistory(await p);
        } catch (e) {
          toast(errorMessage(e));
        }
      };
      switch (name) {
        case "undo":
          void run(api.undo(sessionId));
          break;
        case "redo":
          void run(api.redo(sessionId));
          break;
        case "revert":
        case "snapshots":
          setPanel("changes");
          break;
        case "diff":
          setPanel("diff");
          break;
        case "new":
          props.onNewSession();
          break;
        case "plan":
        case "build":
          void switchTo(name);
          break;
        case "help":
          setHelp(true);
          break;
        case "worktrees":
          props.onWorktrees?.();
          break;
        case "compare":
          props.onCompare?.();
          break;
        case "fork":
          void fork(null, false);
          break;
        case "forks":
          props.onForkTree?.(sessionId);
          break;
        case "promote":
          void promote();
          break;
        case "compact":
          void compact();
          break;
        case "cost":
          setPanel("cost");
          break;
        case "history":
          setPanel("history");
          break;
        case "model": {
          const ref = args?.trim();
          if (!ref) setModelPicker(true);
          else
            setModel(ref === "default" ? null : ref).catch((e: unknown) => toast(`/model ${ref}: ${errorMessage(e)}`));
          break;
        }
        case "share":
          setSharing(true);
          break;
        case "review":
          setReview(true);
          break;
        case "unshare":
          void unshare();
          break;
        case "agent": {
          const m = /^create\b\s*([\s\S]*)$/.exec(args?.trim() ?? "create");
          if (m) props.onCreateAgent?.(m[1]?.trim() || undefined, store.getState().agent);
          else toast("Usage: /agent create [what the agent should do]", "info");
          break;
        }
        default:
      }
    },
    [
      api,
      compact,
      fork,
      promote,
      props,
      reportHistory,
      sessionId,
      setHelp,
      setModel,
      setModelPicker,
      setPanel,
      setSharing,
      setReview,
      store,
      switchTo,
      toast,
      unshare,
    ],
  );
}

/** The command palette's session actions (a `/` command, Stop, the plan/build toggle), sent as window events. */
export function usePaletteCommands({
  store,
  stop,
  toggleMode,
  onCommand,
}: {
  store: SessionStore;
  stop: () => Promise<void>;
  toggleMode: () => void;
  onCommand: (name: string, args?: string) => void;
}) {
  const onPaletteCommand = useEffectEvent((cmd: SessionCommand) => {
    if (cmd.kind === "stop") {
      if (store.getState().running) void stop();
    } else if (cmd.kind === "mode") toggleMode();
    else onCommand(cmd.name, cmd.args);
  });
  useEffect(() => {
    const on = (e: globalThis.Event) => onPaletteCommand((e as CustomEvent<SessionCommand>).detail);
    window.addEventListener(SESSION_COMMAND, on);
    return () => window.removeEventListener(SESSION_COMMAND, on);
  }, []);
}
