// A fixed-row-height virtualised list: only the rows in view (plus a few) are in the DOM.
// The windowing is TanStack Virtual's (`@tanstack/react-virtual`); this file gives it the
// list's look and roles.
import { observeElementRect, useVirtualizer, type Virtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useRef } from "react";

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

/** The scroller's size, or 600 px tall before it has a layout (a list laid out in a
 * hidden panel, or in a test's DOM), so the first rows render either way. */
export function observeRectOrDefault<T extends Element>(instance: Virtualizer<T, Element>, cb: (rect: { width: number; height: number }) => void) {
  return observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : { width: rect.width, height: 600 }));
}

export function VirtualList<T>({ items, rowHeight, overscan = 6, className, label, testId, renderRow, getKey }: VirtualListProps<T>) {
  const ref = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual hands back functions the React Compiler cannot memoize; this component is not compiled
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => ref.current,
    estimateSize: () => rowHeight,
    overscan,
    getItemKey: (i) => getKey(items[i]),
    observeElementRect: observeRectOrDefault,
    initialRect: { width: 0, height: 600 },
    useFlushSync: false,
  });
  return (
    <div ref={ref} className={`vlist ${className ?? ""}`} role="list" aria-label={label} data-testid={testId}>
      <div style={{ position: "relative", height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((row) => (
          <div key={row.key} role="listitem" className="vrow" style={{ position: "absolute", top: row.start, height: rowHeight, left: 0, right: 0 }}>
            {renderRow(items[row.index], row.index)}
          </div>
        ))}
      </div>
    </div>
  );
}
