// Settings: models and keys, library, brands, templates, data and the local-model offer.
// This face is the only module other features and the app import (see boundary.test.ts).
export { LocalModelOffer } from "./LocalOffer";
export { Settings, type SettingsSection } from "./Settings";
export { fillDays, formatCost, formatTokens, keyTravelsInClear, modelLabel, monthStart, parseOptionalNumber, utcDay, windowStart } from "./llm";
