// The AI panel of the right-hand side: the drafting session and one-click optimize
// will live here (see UX.md, "Reviewing AI work"). Until then it says what is coming.

import { useApp } from "../context";

export function AiPanel() {
  const { t } = useApp();
  return (
    <div className="panel-body">
      <div className="empty" data-testid="soon-ai">
        <p className="empty-title">{t("soon.ai.title")}</p>
        <p className="muted">{t("soon.ai.body")}</p>
      </div>
    </div>
  );
}
