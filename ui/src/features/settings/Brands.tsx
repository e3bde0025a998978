// Settings → Brand profiles: voice, audience, banned words and call to action, which
// the checks and (later) the drafting session use.

import type { BrandProfile } from "../../shared/api/generated";
import { useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { Library } from "./Library";

type BrandForm = { name: string; voice: string; audience: string; banned: string; cta: string };

/** Banned words are typed as one list separated by commas (either width) or lines. */
const splitList = (s: string) =>
  s
    .split(/[,，\n]/)
    .map((x) => x.trim())
    .filter(Boolean);

export function Brands({ brands, onChanged }: { brands: BrandProfile[]; onChanged: () => void }) {
  const { t } = useApp();
  const { write } = useWrites();
  return (
    <Library<BrandProfile, BrandForm>
      kind="brand"
      items={brands}
      help={t("brand.help")}
      empty={t("brand.empty")}
      newLabel={t("brand.new")}
      fields={[
        { key: "voice", label: t("brand.voice") },
        { key: "audience", label: t("brand.audience") },
        { key: "banned", label: t("brand.banned") },
        { key: "cta", label: t("brand.cta") },
      ]}
      toForm={(b) => ({
        name: b?.name ?? "",
        voice: b?.voice ?? "",
        audience: b?.targetAudience ?? "",
        banned: b?.bannedWords.join(", ") ?? "",
        cta: b?.cta ?? "",
      })}
      subtitle={(b) => b.voice}
      save={async (form, b) => {
        const profile = {
          name: form.name.trim(),
          voice: form.voice,
          targetAudience: form.audience,
          bannedWords: splitList(form.banned),
          cta: form.cta,
        };
        if (!b) return write("brandProfile.create", profile);
        // Fields this form does not show keep their stored values.
        return write("brandProfile.update", {
          id: b.id,
          profile: { ...profile, linkStrategy: b.linkStrategy, defaultTags: b.defaultTags, industry: b.industry },
        });
      }}
      remove={(b) => write("brandProfile.delete", { id: b.id })}
      onChanged={onChanged}
    />
  );
}
