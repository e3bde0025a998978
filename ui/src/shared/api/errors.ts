// What every failed call rejects with, whichever transport carried it.

import type { ErrorCode, Hint } from "./generated";

/** Codes the client itself can produce, on top of the server's. */
export type ClientErrorCode = ErrorCode | "OFFLINE" | "INTERNAL";

/** What every failed call rejects with: the server's ApiError, or one the client made. */
export interface ClientError {
  code: ClientErrorCode;
  message: string;
  hints: Hint[];
  details?: unknown;
  /** The UI's wording of this particular problem (`problem.<id>`) and its values. */
  messageId?: string;
  params?: { [key in string]?: string };
}

export function isClientError(value: unknown): value is ClientError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === "string" && typeof v.message === "string";
}

/** Normalises anything thrown or rejected into a ClientError. */
export function toClientError(value: unknown): ClientError {
  if (isClientError(value)) {
    const v = value as ClientError;
    const hints = Array.isArray(v.hints)
      ? v.hints.filter((h): h is Hint => typeof h === "object" && h !== null && typeof h.id === "string")
      : [];
    const out: ClientError = { code: v.code, message: v.message, hints };
    if (v.details !== undefined) out.details = v.details;
    if (typeof v.messageId === "string") out.messageId = v.messageId;
    if (typeof v.params === "object" && v.params !== null) out.params = v.params;
    return out;
  }
  if (typeof value === "string") return internalError(value);
  if (value instanceof Error) return internalError(value.message);
  return internalError("Unexpected error");
}

export function internalError(message: string, details?: unknown): ClientError {
  const e: ClientError = { code: "INTERNAL", message, hints: [] };
  if (details !== undefined) e.details = details;
  return e;
}

export const OFFLINE_HINT: Hint = {
  id: "offline.check_running",
  message: "Check that Inkstone is still running, then try again.",
};

export function offlineError(cause?: unknown): ClientError {
  const reason = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : undefined;
  const e: ClientError = {
    code: "OFFLINE",
    message: "Could not reach the Inkstone backend.",
    hints: [OFFLINE_HINT],
  };
  if (reason) e.details = { reason };
  return e;
}

export function abortError(): ClientError {
  return { code: "INTERNAL", message: "The request was cancelled.", hints: [], details: { aborted: true } };
}
