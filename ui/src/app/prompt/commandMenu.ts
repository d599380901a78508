import type { CommandInfo, CommandSourceView } from "../../protocol/generated";
import { COMMANDS, type SlashCommand } from "../commands";

/**
 * An option of the composer's / menu: a built-in command (run when picked) or one of the
 * project's custom commands (picking it puts `/name ` in the composer for its arguments; the
 * backend expands it when the message is sent). A custom command whose file is not used (`error`)
 * is listed greyed and cannot be picked.
 */
export type MenuCommand =
  | { kind: "builtin"; key: string; name: string; args?: string; description: string }
  | {
      kind: "custom";
      key: string;
      name: string;
      args?: string;
      description: string;
      source: CommandSourceView;
      path: string;
      error: string | null;
    };

/**
 * The option key of a custom command: apart from the built-ins' names (which a broken file may
 * shadow) and from another file of the same name (the one that lost to it is listed too).
 */
export const customKey = (c: Pick<CommandInfo, "name" | "path">) => `custom:${c.name}:${c.path}`;

const builtin = (c: SlashCommand): MenuCommand => ({ kind: "builtin", key: c.name, ...c });

function custom(c: CommandInfo): MenuCommand {
  const item: MenuCommand = {
    kind: "custom",
    key: customKey(c),
    name: c.name,
    description: c.description?.trim() ?? "",
    source: c.source,
    path: c.path,
    error: c.error?.trim() || null,
  };
  const hint = c.argument_hint?.trim();
  if (hint) item.args = hint;
  return item;
}

/** A custom command that cannot be picked (its file is not used, with why). */
export const isBroken = (c: MenuCommand) => c.kind === "custom" && c.error !== null;

/** The options whose name starts with what follows the `/`: the built-ins, then the project's commands. */
export function commandMenuOptions(query: string, customs: readonly CommandInfo[] = []): MenuCommand[] {
  const q = query.toLowerCase();
  const matches = (name: string) => name.toLowerCase().startsWith(q);
  return [
    ...COMMANDS.filter((c) => matches(c.name)).map(builtin),
    ...customs.filter((c) => matches(c.name)).map(custom),
  ];
}

/** The first line of an error, shortened to fit a menu line (the whole text is its tooltip). */
export function shortError(error: string, max = 80): string {
  const line = error.split("\n").find((l) => l.trim())?.trim() ?? error.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
