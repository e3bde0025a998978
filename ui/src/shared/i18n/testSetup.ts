// Vitest: both catalogs loaded before every test file (the app loads them on demand).
import { loadMessages } from ".";

await Promise.all([loadMessages("en"), loadMessages("zh")]);
