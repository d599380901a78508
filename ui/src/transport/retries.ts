/**
 * The scheduled reconnects of a transport's lost streams, each run once: at its backoff's end or
 * when the user asks to retry now (`Transport.reconnect`), whichever comes first.
 */
export class Retries {
  private readonly waiting = new Set<() => void>();

  constructor(private readonly schedule: (fn: () => void, ms: number) => unknown) {}

  /** Runs `fn` in `ms` (or at `now()`), once; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void {
    let done = false;
    const go = () => {
      if (done) return;
      done = true;
      this.waiting.delete(go);
      fn();
    };
    this.waiting.add(go);
    this.schedule(go, ms);
    return () => {
      done = true;
      this.waiting.delete(go);
    };
  }

  /** Runs every scheduled retry now. */
  now(): void {
    for (const go of [...this.waiting]) go();
  }
}
