// Shared helpers for component tests: a context with a fake transport.
import type { ReactNode } from "react";
import { ApiClient } from "../api/client";
import { FakeTransport } from "../api/fake";
import { AppCtx, type Ctx } from "../context";
import { type Lang, translate } from "../i18n";

export const NOW = Date.parse("2026-11-22T12:00:00Z");

export function makeCtx(transport: FakeTransport, lang: Lang = "en", over: Partial<Ctx> = {}): Ctx {
  return {
    client: new ApiClient(transport),
    lang,
    t: (id, vars) => translate(lang, id, vars),
    mod: "Ctrl",
    now: () => NOW,
    toast: () => undefined,
    showError: () => undefined,
    ...over,
  };
}

export function WithCtx({ ctx, children }: { ctx: Ctx; children: ReactNode }) {
  return <AppCtx.Provider value={ctx}>{children}</AppCtx.Provider>;
}
