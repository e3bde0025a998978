// Updates: the background check's notice and Help → About's section.
// This face is the only module other features and the app import (see boundary.test.ts).
export { CHECK_DELAY_MS, UpdateNotice, UpdateSection } from "./Updates";
