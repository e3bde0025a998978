// The app's one error banner (every failed write or reported read ends here, through the
// context's `showError`) and its short-lived toasts.
import { useCallback, useRef, useState } from "react";
import { type ClientError, toClientError } from "../shared/api/client";

export interface Toast {
  id: number;
  text: string;
}

export function useNotices() {
  const [error, setError] = useState<{ error: ClientError; retry?: () => void } | null>(null);
  const [toasts, setToasts] = useState<Toast[]>([]);
  const toastId = useRef(0);
  const toast = useCallback((text: string) => {
    const id = ++toastId.current;
    setToasts((l) => [...l.slice(-2), { id, text }]);
    setTimeout(() => setToasts((l) => l.filter((x) => x.id !== id)), 4000);
  }, []);
  const showError = useCallback((e: unknown, retry?: () => void) => setError({ error: toClientError(e), retry }), []);
  const dismissError = useCallback(() => setError(null), []);
  return { error, showError, dismissError, toasts, toast };
}
