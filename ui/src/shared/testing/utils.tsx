// Shared helpers for component tests: a context with a fake transport.
import { type ReactNode, useMemo, useState } from "react";
import { ApiClient, type ClientError, toClientError } from "../api/client";
import { FakeTransport } from "../api/fake";
import { AppCtx, type Ctx } from "../context";
import { type Lang, translate } from "../i18n";
import { ErrorBanner } from "../ui/ErrorBanner";

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

/** `ctx` with the app's one error path as the shell has it: whatever reaches `showError`
 * shows in one banner outside the component (in `app-error`), and the component itself
 * renders inside `under-test`. A test of a form reads a failed write's banner from the
 * first and checks that the second has none of its own. */
export function WithAppErrors({ ctx, children }: { ctx: Ctx; children: ReactNode }) {
  const [error, setError] = useState<ClientError | null>(null);
  const value = useMemo<Ctx>(() => ({ ...ctx, showError: (e) => setError(toClientError(e)) }), [ctx]);
  return (
    <AppCtx.Provider value={value}>
      <div data-testid="under-test">{children}</div>
      <div data-testid="app-error">{error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}</div>
    </AppCtx.Provider>
  );
}
