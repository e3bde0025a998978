// Searching the person's own writing (content search).
// This face is the only module other features and the app import (see boundary.test.ts).
export { ContentSearch } from "./ContentSearch";
