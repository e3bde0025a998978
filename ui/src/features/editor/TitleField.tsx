// The project's title, edited in place as the editor's heading line. A one-row textarea
// rather than an input, so a long title wraps onto more lines instead of being cut off
// mid-word; it still behaves as a single-line field: Enter moves on to the body and a
// pasted or dropped line break becomes a space.
import { useLayoutEffect, useRef } from "react";

/** Sets the height to the text's, so every line shows; only a title taller than the
 * stylesheet's max-height (a very narrow column) scrolls inside. */
function fitHeight(el: HTMLTextAreaElement) {
  el.style.overflowY = "hidden";
  el.style.height = "auto";
  // Not laid out (a hidden tab, or jsdom): keep the natural one-row height.
  if (el.scrollHeight === 0) return;
  // border-box: the height includes the borders, scrollHeight does not.
  el.style.height = `${el.scrollHeight + el.offsetHeight - el.clientHeight}px`;
  if (el.scrollHeight > el.clientHeight) el.style.overflowY = "auto";
}

export function TitleField({
  value,
  label,
  placeholder,
  onChange,
  onEnter,
  onBlur,
}: {
  value: string;
  label: string;
  placeholder: string;
  onChange: (value: string) => void;
  /** Enter outside an input method's composition: go on to the body. */
  onEnter: () => void;
  onBlur?: () => void;
}) {
  const ref = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => {
    if (ref.current) fitHeight(ref.current);
  }, [value]);
  // The text rewraps when the column's width changes (window, sidebar, preview).
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    let width = el.clientWidth;
    const observer = new ResizeObserver(() => {
      if (el.clientWidth === width) return;
      width = el.clientWidth;
      fitHeight(el);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return (
    <textarea
      ref={ref}
      className="doc-title-input"
      data-testid="title-input"
      rows={1}
      aria-label={label}
      placeholder={placeholder}
      value={value}
      onChange={(e) => onChange(e.target.value.replace(/[\r\n]+/g, " "))}
      onBlur={onBlur}
      onKeyDown={(e) => {
        if (e.key === "Enter" && !e.nativeEvent.isComposing && e.keyCode !== 229) {
          e.preventDefault();
          onEnter();
        }
      }}
    />
  );
}
