// Settings: models and keys, library, brands, templates, data and the local-model offer.
// This face is the only module other features and the app import (see boundary.test.ts).
import { lazy } from "react";
export { LocalModelOffer } from "./LocalOffer";
// Settings load on demand: the window's first screen (the project list) needs only the
// local-model offer, not the settings' sections (models, usage, reports, policies, ...).
export type { SettingsSection } from "./Settings";
export const loadSettings = () => import("./Settings");
export const Settings = lazy(() => loadSettings().then((m) => ({ default: m.Settings })));
export { fillDays, formatCost, formatTokens, keyTravelsInClear, modelLabel, monthStart, parseOptionalNumber, utcDay, windowStart } from "./llm";
