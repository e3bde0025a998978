// A virtualised list of rows of different heights that reads from the bottom, like a
// chat: rows are measured as they render (estimated before), only those near the
// viewport are in the DOM, and while the reader is at the bottom it stays there as
// rows arrive or the footer (a streaming message) grows. Scrolled away from the bottom,
// it stays where the reader is and offers a button back to the latest (saying so when
// rows arrived meanwhile); a new `revealKey` (the person sent something) goes back to
// the bottom and sticks there again. Short lists render every row, in normal flow.
// The windowing and the measuring of rows are TanStack Virtual's (`@tanstack/react-virtual`);
// this file keeps the reading from the bottom.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { observeRectOrDefault } from "./VirtualList";

export interface VirtualFeedProps<T> {
  items: readonly T[];
  getKey: (item: T) => string;
  renderItem: (item: T, index: number) => ReactNode;
  /** Height guessed for a row not measured yet (px). */
  estimate: number;
  /** Lists up to this long render every row (default 40). */
  threshold?: number;
  /** Rows kept beyond the viewport, in px (default 600). */
  overscan?: number;
  /** After the rows, inside the scroller (the streaming message, prompts). */
  footer?: ReactNode;
  label: string;
  testId?: string;
  className?: string;
  /** Changing it scrolls to the bottom and keeps it there (the person sent a task). */
  revealKey?: string | number;
  /** The labels of the button back to the bottom, shown while scrolled away from it:
   * `latest`, or `unseen` when rows arrived meanwhile. No button without them. */
  jumpLabels?: { latest: string; unseen: string };
}

const NEAR_BOTTOM = 48;

export function VirtualFeed<T>({ items, getKey, renderItem, estimate, threshold = 40, overscan = 600, footer, label, testId, className, revealKey, jumpLabels }: VirtualFeedProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  // Scrolled away from the bottom (the button back shows), and rows arrived since.
  const [away, setAway] = useState(false);
  const [unseen, setUnseen] = useState(false);
  const seenRows = useRef(items.length);
  const virtual = items.length > threshold;
  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual hands back functions the React Compiler cannot memoize; this component is not compiled
  const virtualizer = useVirtualizer({
    count: virtual ? items.length : 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => estimate,
    overscan: Math.max(1, Math.ceil(overscan / estimate)),
    getItemKey: (i) => getKey(items[i]),
    observeElementRect: observeRectOrDefault,
    initialRect: { width: 0, height: 800 },
    useFlushSync: false,
  });

  const stickToBottom = useCallback(() => {
    const el = scroller.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, []);

  const toBottom = useCallback(() => {
    atBottom.current = true;
    setAway(false);
    setUnseen(false);
    stickToBottom();
  }, [stickToBottom]);

  // Rows that arrive while the reader is scrolled away are news; at the bottom they are seen.
  useEffect(() => {
    if (atBottom.current || items.length < seenRows.current) seenRows.current = items.length;
    else if (items.length > seenRows.current) setUnseen(true);
  }, [items.length]);

  // The person sent something: show it, and what answers it, wherever they had scrolled.
  const revealed = useRef(revealKey);
  useLayoutEffect(() => {
    if (revealed.current === revealKey) return;
    revealed.current = revealKey;
    seenRows.current = items.length;
    toBottom();
  }, [revealKey, items.length, toBottom]);

  // Rows (and the footer) change size as they render and stream: keep the bottom in view.
  useEffect(() => {
    const el = scroller.current;
    const inner = content.current;
    if (!el || !inner || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(stickToBottom);
    ro.observe(inner);
    ro.observe(el);
    return () => ro.disconnect();
  }, [stickToBottom]);

  useLayoutEffect(stickToBottom);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const bottom = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM;
    atBottom.current = bottom;
    setAway(!bottom);
    if (bottom) {
      setUnseen(false);
      seenRows.current = items.length;
    }
  };

  let rows: ReactNode;
  let total = 0;
  if (!virtual) {
    rows = items.map((item, i) => (
      <div key={getKey(item)} role="listitem" className="feed-row">
        {renderItem(item, i)}
      </div>
    ));
  } else {
    total = virtualizer.getTotalSize();
    const out: ReactNode[] = virtualizer.getVirtualItems().map((row) => (
      <div
        key={row.key}
        ref={virtualizer.measureElement}
        data-index={row.index}
        role="listitem"
        className="feed-row"
        style={{ position: "absolute", top: 0, left: 0, right: 0, transform: `translateY(${row.start}px)` }}
      >
        {renderItem(items[row.index], row.index)}
      </div>
    ));
    rows = out;
  }

  return (
    <div ref={scroller} className={`feed ${className ?? ""}`} onScroll={onScroll} data-testid={testId}>
      <div ref={content}>
        <div role="list" aria-label={label} style={virtual ? { position: "relative", height: total } : undefined}>
          {rows}
        </div>
        {footer}
        {away && jumpLabels && (
          <div className="feed-jump">
            <button type="button" className="small-btn feed-jump-btn" data-testid="feed-jump" data-unseen={unseen} onClick={toBottom}>
              {unseen ? jumpLabels.unseen : jumpLabels.latest}
            </button>
          </div>
        )}
      </div>
    </div>
  );
}
