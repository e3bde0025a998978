// First run: when no model profile exists and a model server (Ollama, LM Studio, ...)
// answers on this computer, offer it once, without blocking anything.
import { useState } from "react";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { dismissLocalOffer, localOfferDismissed } from "../../shared/lib/prefs";
import { presetLabel } from "./llm";

export function LocalModelOffer({ onSetUp }: { onSetUp: () => void }) {
  const { t, lang } = useApp();
  const [dismissed, setDismissed] = useState(localOfferDismissed);
  // An offer is optional: nothing is said when detection is not possible.
  const profiles = useMethod("llmProfile.list", {}, { enabled: !dismissed });
  const none = profiles.data?.profiles.length === 0;
  const found = useMethod("llmProfile.detectLocal", {}, { enabled: !dismissed && none }).data?.found[0] ?? null;

  if (!found || dismissed || !none) return null;
  const close = () => {
    dismissLocalOffer();
    setDismissed(true);
  };
  return (
    <aside className="local-offer" role="status" data-testid="local-offer" aria-label={t("localOffer.title")}>
      <p className="local-offer-title">{t("localOffer.title")}</p>
      <p className="small">
        {t("localOffer.body", { name: presetLabel(lang, found.preset), url: found.preset.baseUrl, n: found.models.length })}
      </p>
      <div className="local-offer-actions">
        <button type="button" className="primary" data-testid="local-offer-setup" onClick={() => { close(); onSetUp(); }}>
          {t("localOffer.setUp")}
        </button>
        <button type="button" data-testid="local-offer-dismiss" onClick={close}>
          {t("localOffer.notNow")}
        </button>
      </div>
    </aside>
  );
}
