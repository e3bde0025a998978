// A modal dialog: focus moves in on open and back out on close; Esc closes.
import { type ReactNode, useEffect, useRef } from "react";

export function Dialog({
  title,
  onClose,
  children,
  testId,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const el = ref.current;
    const first = el?.querySelector<HTMLElement>("[data-autofocus], input, textarea, select, button");
    (first ?? el)?.focus();
    return () => before?.focus?.();
  }, []);
  return (
    <div className="backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={ref}
        className={`dialog ${wide ? "dialog-wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-label={title}
        data-testid={testId}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === "Escape" && !e.nativeEvent.isComposing) {
            e.stopPropagation();
            onClose();
          } else if (e.key === "Tab") {
            // Keep keyboard focus inside the dialog.
            const all = Array.from(
              ref.current?.querySelectorAll<HTMLElement>("button:not(:disabled), input, select, textarea, [tabindex='0']") ?? [],
            );
            if (all.length === 0) return;
            const first = all[0];
            const last = all[all.length - 1];
            if (e.shiftKey && document.activeElement === first) {
              e.preventDefault();
              last.focus();
            } else if (!e.shiftKey && document.activeElement === last) {
              e.preventDefault();
              first.focus();
            }
          }
        }}
      >
        <h2 className="dialog-title">{title}</h2>
        {children}
      </div>
    </div>
  );
}
