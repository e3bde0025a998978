import { createContext, useContext } from "react";
import type { ApiClient, ClientError } from "./api/client";
import type { Lang, MessageId } from "./i18n";

export type T = (id: MessageId, vars?: Record<string, string | number>) => string;

export interface Ctx {
  client: ApiClient;
  lang: Lang;
  t: T;
  mod: string;
  now: () => number;
  toast: (text: string) => void;
  showError: (error: ClientError | unknown, retry?: () => void) => void;
}

export const AppCtx = createContext<Ctx | null>(null);

export function useApp(): Ctx {
  const c = useContext(AppCtx);
  if (!c) throw new Error("AppCtx missing");
  return c;
}
