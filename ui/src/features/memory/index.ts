// What the engine remembers across sessions: the memory list (AI panel and Settings).
// This face is the only module other features and the app import (see boundary.test.ts).
export { MemoryList } from "./MemoryList";
