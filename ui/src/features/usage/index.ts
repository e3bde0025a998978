// Model usage and cost: the usage section of Settings.
// This face is the only module other features and the app import (see boundary.test.ts).
export { Usage } from "./Usage";
