// ESLint for the UI (run by `npm run lint` and scripts/test): the recommended rules of
// ESLint, typescript-eslint and the React hooks plugin (which includes the React
// Compiler's checks of render purity and state updates).

import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // The build output, and the file `cargo xtask codegen` writes from the Rust types.
  { ignores: ["dist/", "src/shared/api/generated.ts"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  reactHooks.configs.flat.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      globals: { ...globals.browser },
    },
    rules: {
      // An underscore marks a value kept on purpose (a destructured field left out, a
      // parameter a signature requires).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ["vite.config.ts", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node } },
  },
);
