import type { Message } from "../../protocol/generated";
import { MenuButton } from "../MenuButton";
import type { MessageActions } from "./actions";

/** A message's actions menu: fork from it (with or without its files), when the view can fork. */
export function MessageMenu({ message, actions }: { message: Message; actions: MessageActions }) {
  const fork = actions.onFork;
  if (!fork) return null;
  return (
    <MenuButton
      label="Message actions"
      className="icon-btn msg-menu"
      testId="message-menu"
      items={[
        { label: "Fork from here", testId: "fork-here", onSelect: () => fork(message.id, false) },
        { label: "Fork with files from here", testId: "fork-files-here", onSelect: () => fork(message.id, true) },
      ]}
    />
  );
}
