import type { ClientError } from "../api/client";
import { useApp } from "../context";
import { describeError } from "../i18n";

export function ErrorBanner({ error, retry, onDismiss }: { error: ClientError; retry?: () => void; onDismiss?: () => void }) {
  const { lang, t } = useApp();
  const { title, details } = describeError(lang, error);
  return (
    <div className="error-banner" role="alert" data-testid="error-banner" data-code={error.code}>
      <p className="error-title">{title}</p>
      {details.map((d) => (
        <p key={d} className="small">
          {d}
        </p>
      ))}
      {(retry || onDismiss) && (
        <div className="error-actions">
          {retry && (
            <button type="button" onClick={retry}>
              {t("error.retry")}
            </button>
          )}
          {onDismiss && (
            <button type="button" onClick={onDismiss}>
              {t("error.dismiss")}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
