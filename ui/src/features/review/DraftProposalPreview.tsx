// A platform draft proposal (`draft_patch`) as the platform will show it: the saved
// draft with the proposal's text in place of its own, in the same preview the Drafts
// panel uses (WeChat at phone width, X posts as cards with their counters, ...). X posts
// are measured by the engine, as X counts them, so the counters are the real ones.
import { useEffect, useMemo, useState } from "react";
import type { DraftContent, PlatformDraft } from "../../shared/api/generated";
import { fetchRead } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { DraftPreview } from "../drafts";
import { asDraft, editedContent } from "../drafts";

export function DraftProposalPreview({ draft, proposedText }: { draft: PlatformDraft; proposedText: string }) {
  const { client, t } = useApp();
  const content = useMemo<DraftContent>(
    () => editedContent(draft.content, proposedText, draft.content.type === "card" ? draft.content.tags.join(" ") : ""),
    [draft.content, proposedText],
  );
  // The weighted length of each proposed post, keyed by the text it was measured for.
  const [weights, setWeights] = useState<{ for: DraftContent; lengths: number[] } | null>(null);
  useEffect(() => {
    if (content.type !== "thread") return;
    let live = true;
    void Promise.all(content.posts.map((p) => fetchRead(client, "pipeline.measure", { platform: "x", field: "post", text: p.text }).then((m) => m.weightedLength))).then(
      (lengths) => live && setWeights({ for: content, lengths }),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [client, content]);
  const shown: DraftContent =
    content.type === "thread" && weights?.for === content
      ? { type: "thread", posts: content.posts.map((p, i) => ({ ...p, weightedLength: weights.lengths[i] ?? 0 })) }
      : content;
  const platform = t(`platform.${draft.platform}` as MessageId);
  return (
    <section className="review-preview" data-testid="review-draft-preview" data-platform={draft.platform} aria-label={t("ai.review.draftPreview", { platform })}>
      <p className="small muted pad-x">{t("ai.review.draftPreview", { platform })}</p>
      <div className="preview-frame">
        <DraftPreview draft={{ ...asDraft(draft), content: shown }} projectId={draft.projectId} />
      </div>
    </section>
  );
}
