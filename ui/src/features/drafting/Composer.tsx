// Writing a task. Enter sends (the button says so), Shift+Enter starts a new line,
// Ctrl/Cmd+Enter sends too;
// nothing acts in the middle of an input-method composition. With text selected in the
// editor the task is scoped to it (a removable chip shows what goes along).
import { forwardRef, useImperativeHandle, useRef, useState } from "react";
import type { Mode } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { Selection } from "./scope";

export interface ComposerHandle {
  focus(): void;
}

export interface ComposerProps {
  /** The text selected in the editor now ("" for none). */
  selectionText: string;
  /** The selection's range and text, read when the task is sent. */
  getSelection: () => Selection | null;
  /** The selection text whose chip the person removed (or sent already). */
  dismissed: string | null;
  onDismiss: (selectionText: string) => void;
  mode: Mode;
  running: boolean;
  disabled?: boolean;
  onMode: (mode: Mode) => void;
  /** Sends the task; resolves false when it was not taken (the text is kept). */
  onSend: (task: string, selection: Selection | null) => Promise<boolean> | boolean;
}

export const Composer = forwardRef<ComposerHandle, ComposerProps>(function Composer(
  { selectionText, getSelection, dismissed, onDismiss, mode, running, disabled, onMode, onSend },
  ref,
) {
  const { t } = useApp();
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  useImperativeHandle(ref, () => ({ focus: () => area.current?.focus() }));

  // A selection of nothing but white space (an empty line) is no scope: no chip, and
  // the task goes without one.
  const scoped = selectionText.trim() !== "" && dismissed !== selectionText;

  const send = async () => {
    const task = text.trim();
    if (!task || disabled) return;
    const selection = scoped ? getSelection() : null;
    setText("");
    const taken = await onSend(task, selection && selection.to > selection.from && selection.text.trim() !== "" ? selection : null);
    if (taken === false) setText((now) => now || task);
    else onDismiss(selectionText);
  };

  return (
    <form
      className="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {scoped && (
        <div className="scope-chip" data-testid="scope-chip">
          <span className="scope-chip-label small muted">{t("ai.scope.label")}</span>
          <span className="scope-chip-text" title={selectionText}>
            {selectionText}
          </span>
          <button type="button" className="icon-btn" aria-label={t("ai.scope.remove")} title={t("ai.scope.remove")} data-testid="scope-remove" onClick={() => onDismiss(selectionText)}>
            ×
          </button>
        </div>
      )}
      <textarea
        ref={area}
        data-testid="composer-input"
        aria-label={t("ai.composer.label")}
        placeholder={running ? t("ai.composer.placeholderRunning") : t("ai.composer.placeholder")}
        rows={3}
        value={text}
        disabled={disabled}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing || e.keyCode === 229) return;
          if (e.key !== "Enter" || e.shiftKey || e.altKey) return;
          e.preventDefault();
          void send();
        }}
      />
      <div className="composer-bar">
        <button
          type="button"
          className="toggle"
          aria-pressed={mode === "plan"}
          data-testid="plan-toggle"
          title={t("ai.mode.planHelp")}
          onClick={() => onMode(mode === "plan" ? "default" : "plan")}
        >
          {t("ai.mode.plan")}
        </button>
        <span className="spacer" />
        <button type="submit" className="primary" data-testid="send" disabled={disabled || !text.trim()}>
          {running ? t("ai.composer.queue") : t("ai.composer.send")} <kbd className="on-accent">{t("ai.composer.sendKey")}</kbd>
        </button>
      </div>
    </form>
  );
});
