// The session's constraints (rejection reasons the model keeps to) and checkpoints, shown
// only when the backend offers their methods.
import type { Drafting, SessionStore } from "./store";

export function SessionExtras(_props: { drafting: Drafting; store: SessionStore }) {
  return null;
}
