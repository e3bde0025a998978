// Keeps the newest of overlapping reads. Two reads of the same list may be in flight at
// once (one from opening a view, one after a change); the server can answer them in
// either order. A read's answer is shown only when no read started after it has already
// been shown, and a local change (`supersede`) outranks every read started before it.

export class Latest {
  private started = 0;
  private shown = 0;

  /** Marks the start of a read; pass the ticket to `accept` with its answer. */
  begin(): number {
    return ++this.started;
  }

  /** True when the answer of the read with `ticket` is newer than what is shown; it is
   * then the one shown. */
  accept(ticket: number): boolean {
    if (ticket < this.shown) return false;
    this.shown = ticket;
    return true;
  }

  /** A change made here, newer than any read in flight: their answers are dropped. */
  supersede(): void {
    this.shown = ++this.started;
  }
}
