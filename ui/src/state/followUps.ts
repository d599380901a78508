/**
 * Follow-ups typed while a session's turn runs: kept with the live session (outside React), so
 * they survive switching to another session and back, and are sent when the turn completes
 * whether or not the session is on screen (see LiveSession).
 */
export class FollowUps {
  private items: readonly string[] = [];
  private readonly listeners = new Set<() => void>();

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  /** The queued texts, oldest first (a new array on every change: a snapshot for React). */
  getSnapshot = (): readonly string[] => this.items;

  get size(): number {
    return this.items.length;
  }

  add(text: string): void {
    this.replace([...this.items, text]);
  }

  /** Takes the `i`th (the oldest by default) out of the queue. */
  take(i = 0): string | undefined {
    const text = this.items[i];
    if (text !== undefined) this.replace(this.items.filter((_, j) => j !== i));
    return text;
  }

  /** Puts a text back at the head (one that could not be sent). */
  putBack(text: string): void {
    this.replace([text, ...this.items]);
  }

  private replace(next: readonly string[]) {
    this.items = next;
    for (const fn of [...this.listeners]) fn();
  }
}
