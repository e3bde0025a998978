// First run: when no model profile exists and a model server (Ollama, LM Studio, ...)
// answers on this computer, offer it once, without blocking anything.
import { useEffect, useState } from "react";
import type { LocalServer } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { dismissLocalOffer, localOfferDismissed } from "../../shared/lib/prefs";
import { presetLabel } from "./llm";

export function LocalModelOffer({ onSetUp }: { onSetUp: () => void }) {
  const { client, t, lang } = useApp();
  const [found, setFound] = useState<LocalServer | null>(null);

  useEffect(() => {
    if (localOfferDismissed()) return;
    let live = true;
    void (async () => {
      try {
        const list = await client.call("llmProfile.list", {});
        if (!live || list.profiles.length > 0) return;
        const r = await client.call("llmProfile.detectLocal", {});
        if (live && r.found[0]) setFound(r.found[0]);
      } catch {
        // An offer is optional: say nothing when detection is not possible.
      }
    })();
    return () => {
      live = false;
    };
  }, [client]);

  if (!found) return null;
  const close = () => {
    dismissLocalOffer();
    setFound(null);
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
