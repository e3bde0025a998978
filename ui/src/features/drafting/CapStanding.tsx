// The member's standing against the workspace's monthly AI cap, beside the AI panel's
// meter: "this month: $1.20 of $5.00" (or tokens), warning near the cap and saying
// calls are refused once it is reached. The engine decides the level (`usage.standing`:
// the policy last seen and the month's running total, no network); nothing shows
// without a cap.
import { useEffect } from "react";
import type { CapStanding as Standing } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";

function money(n: number): string {
  return n.toFixed(2);
}

/** The standing's words: the figures, then how near the cap is. */
export function standingText(t: ReturnType<typeof useApp>["t"], lang: "en" | "zh", s: Standing): string {
  const n = (x: number) => x.toLocaleString(lang === "zh" ? "zh-CN" : "en");
  const parts: string[] = [];
  if (s.capUsd !== undefined) parts.push(t("ai.cap.cost", { used: money(s.spent.costUsd), cap: money(s.capUsd) }));
  if (s.capTokens !== undefined) parts.push(t("ai.cap.tokens", { used: n(s.spent.tokens), cap: n(s.capTokens) }));
  const figures = t("ai.cap.thisMonth", { figures: parts.join(" · ") });
  if (s.level === "near") return `${figures} · ${t("ai.cap.near")}`;
  if (s.level === "reached") return `${figures} · ${t("ai.cap.reached")}`;
  return figures;
}

/** `spent`: the session's tokens so far; when it moves, a call was metered and the
 * standing is read again. */
export function CapStanding({ spent }: { spent: number }) {
  const { t, lang } = useApp();
  const { data, refetch } = useMethod("usage.standing", {});
  useEffect(() => {
    if (spent > 0) void refetch();
  }, [spent, refetch]);
  if (!data || data.level === "none") return null;
  const who = data.setBy ?? t("ai.cap.anOwner");
  const title = [t("ai.cap.title", { workspace: data.workspaceName ?? "", owner: who }), data.level === "reached" ? t("ai.cap.reachedTitle") : data.level === "near" ? t("ai.cap.nearTitle") : ""]
    .filter(Boolean)
    .join("\n");
  return (
    <span
      className={`small cap-standing cap-${data.level}`}
      data-testid="cap-standing"
      data-level={data.level}
      role={data.level === "under" ? undefined : "status"}
      title={title}
    >
      {standingText(t, lang, data)}
    </span>
  );
}
