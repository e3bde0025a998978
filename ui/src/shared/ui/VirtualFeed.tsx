// A virtualised list of rows of different heights that reads from the bottom, like a
// chat: rows are measured as they render (estimated before), only those near the
// viewport are in the DOM, and while the reader is at the bottom it stays there as
// rows arrive or the footer (a streaming message) grows. Scrolled away from the bottom,
// it stays where the reader is and offers a button back to the latest (saying so when
// rows arrived meanwhile); a new `revealKey` (the person sent something) goes back to
// the bottom and sticks there again. Short lists render every row, in normal flow.
import { type ReactNode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";

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
  /** Before the rows, inside the scroller (what reads the earlier rows). */
  header?: ReactNode;
  /** Called while the reader is near the top (to read earlier rows, which then go
   * above the ones shown without moving them). */
  onNearTop?: () => void;
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
const NEAR_TOP = 200;

export function VirtualFeed<T>({ items, getKey, renderItem, estimate, threshold = 40, overscan = 600, footer, header, onNearTop, label, testId, className, revealKey, jumpLabels }: VirtualFeedProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const [heights, setHeights] = useState<ReadonlyMap<string, number>>(() => new Map());
  const atBottom = useRef(true);
  // Scrolled away from the bottom (the button back shows), and rows arrived since.
  const [away, setAway] = useState(false);
  const [unseen, setUnseen] = useState(false);
  const seenRows = useRef(items.length);
  const [view, setView] = useState({ top: 0, height: 800 });
  const virtual = items.length > threshold;

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
    const ro = new ResizeObserver(() => {
      stickToBottom();
      setView((v) => (v.height === el.clientHeight ? v : { ...v, height: el.clientHeight }));
    });
    ro.observe(inner);
    ro.observe(el);
    return () => ro.disconnect();
  }, [stickToBottom]);

  useLayoutEffect(stickToBottom);

  // Rows read in above the first one shown keep the reader where they were.
  const firstKey = items.length > 0 ? getKey(items[0]) : null;
  const previous = useRef({ firstKey, height: 0 });
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const was = previous.current;
    if (!atBottom.current && was.firstKey !== null && firstKey !== was.firstKey && el.scrollHeight > was.height) el.scrollTop += el.scrollHeight - was.height;
    previous.current = { firstKey, height: el.scrollHeight };
  });

  // One observer measures every rendered row of a virtual list.
  const rowObserver = useRef<ResizeObserver | null>(null);
  useEffect(() => {
    if (typeof ResizeObserver === "undefined") return;
    let frame = 0;
    const measured = new Map<string, number>();
    rowObserver.current = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const key = (entry.target as HTMLElement).dataset.key;
        const h = (entry.target as HTMLElement).offsetHeight;
        if (key && h > 0) measured.set(key, h);
      }
      if (measured.size === 0 || frame) return;
      // One state update per frame, however many rows resized.
      frame = requestAnimationFrame(() => {
        frame = 0;
        const batch = new Map(measured);
        measured.clear();
        setHeights((old) => {
          let next: Map<string, number> | null = null;
          for (const [key, h] of batch) {
            if (old.get(key) === h) continue;
            next ??= new Map(old);
            next.set(key, h);
          }
          return next ?? old;
        });
      });
    });
    return () => {
      rowObserver.current?.disconnect();
      if (frame) cancelAnimationFrame(frame);
    };
  }, []);
  const measure = useCallback((el: HTMLDivElement | null) => {
    if (el) rowObserver.current?.observe(el);
  }, []);

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
    if (virtual) setView({ top: el.scrollTop, height: el.clientHeight });
    if (onNearTop && el.scrollTop < NEAR_TOP) onNearTop();
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
    const tops: number[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      tops[i] = total;
      total += heights.get(getKey(items[i])) ?? estimate;
    }
    const from = view.top - overscan;
    const to = view.top + view.height + overscan;
    // The first row that ends below `from` (tops are sorted).
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const end = mid + 1 < items.length ? tops[mid + 1] : total;
      if (end <= from) lo = mid + 1;
      else hi = mid;
    }
    const out: ReactNode[] = [];
    for (let i = lo; i < items.length && tops[i] < to; i++) {
      const key = getKey(items[i]);
      out.push(
        <div key={key} ref={measure} data-key={key} role="listitem" className="feed-row" style={{ position: "absolute", top: tops[i], left: 0, right: 0 }}>
          {renderItem(items[i], i)}
        </div>,
      );
    }
    rows = out;
  }

  return (
    <div ref={scroller} className={`feed ${className ?? ""}`} onScroll={onScroll} data-testid={testId}>
      <div ref={content}>
        {header}
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
