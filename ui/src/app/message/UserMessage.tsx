import type { Message } from "../../protocol/generated";
import { textOf, type MessageActions } from "./actions";
import { MessageMenu } from "./MessageMenu";
import { CheckpointActions, useCheckpoints } from "../checkpoints/Checkpoints";

/** What the person wrote, with the files it mentions. */
export function UserMessage({ message, actions }: { message: Message; actions: MessageActions }) {
  const files = message.parts.filter((p) => p.content.type === "file");
  const cp = useCheckpoints();
  return (
    <div className="msg msg-user" data-testid="message-user" data-message-id={message.id}>
      <span className="msg-user-menu">
        <MessageMenu message={message} actions={actions} />
      </span>
      <div className="user-text">{textOf(message)}</div>
      {files.map((p) =>
        p.content.type === "file" ? (
          <span key={p.id} className="chip mono">
            @{p.content.path}
          </span>
        ) : null,
      )}
      {cp && actions.onFork && (
        <div>
          <CheckpointActions restoreTo={cp.restoreFor(message.id)} forkAt={message.id} />
        </div>
      )}
    </div>
  );
}
