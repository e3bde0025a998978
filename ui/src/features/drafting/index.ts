// The AI panel: a drafting session's timeline, composer, prompts, context meter and Ask.
// Its state lives in store.ts (a plain model, outside React).
// This face is the only module other features and the app import (see boundary.test.ts).
export { AiPanel } from "./AiPanel";
export { ALLOW_SCOPES, patternLabel, scopeLabel } from "./AlwaysAllow";
export { type SourceTarget } from "./citations";
export { targetLabel } from "./approval";
export { StatusAi } from "./StatusAi";
export { ProposalBadge } from "./ToolStep";
export { type Selection } from "./scope";
export { Drafting, SessionStore } from "./store";
