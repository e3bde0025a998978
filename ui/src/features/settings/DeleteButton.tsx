import { useApp } from "../../shared/context";

/** Delete with an inline confirmation (no browser dialogs, which a webview may block). */
export function DeleteButton({
  name,
  asking,
  onAsk,
  onCancel,
  onConfirm,
  testId,
}: {
  name: string;
  asking: boolean;
  onAsk: () => void;
  onCancel: () => void;
  onConfirm: () => void;
  testId?: string;
}) {
  const { t } = useApp();
  if (!asking) {
    return (
      <button type="button" className="link" data-testid={testId} onClick={onAsk}>
        {t("comments.delete")}
      </button>
    );
  }
  return (
    <span role="group" aria-label={t("library.deleteConfirm", { name })}>
      <span className="small">{t("library.deleteConfirm", { name })}</span>
      <button
        type="button"
        className="link danger-link"
        data-testid={testId ? `${testId}-confirm` : undefined}
        autoFocus
        onClick={onConfirm}
      >
        {t("comments.delete")}
      </button>
      <button type="button" className="link" onClick={onCancel}>
        {t("common.cancel")}
      </button>
    </span>
  );
}
