// A fixed-row-height virtualised list: only the rows in view (plus a few) are in the DOM.
import { type ReactNode, useEffect, useRef, useState } from "react";

export interface VirtualListProps<T> {
  items: T[];
  rowHeight: number;
  overscan?: number;
  className?: string;
  label: string;
  testId?: string;
  renderRow: (item: T, index: number) => ReactNode;
  getKey: (item: T) => string;
}

export function VirtualList<T>({ items, rowHeight, overscan = 6, className, label, testId, renderRow, getKey }: VirtualListProps<T>) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight || 600);
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div
        key={getKey(items[i])}
        role="listitem"
        className="vrow"
        style={{ position: "absolute", top: i * rowHeight, height: rowHeight, left: 0, right: 0 }}
      >
        {renderRow(items[i], i)}
      </div>,
    );
  }
  return (
    <div
      ref={ref}
      className={`vlist ${className ?? ""}`}
      role="list"
      aria-label={label}
      data-testid={testId}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
    >
      <div style={{ position: "relative", height: items.length * rowHeight }}>{rows}</div>
    </div>
  );
}
