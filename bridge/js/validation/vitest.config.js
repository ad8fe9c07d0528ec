// vitest configuration of the LangGraph.js validation suite run against
// checkpointkit's Go adapters (see validate.vitest.js and
// ci/langgraphjs-validation).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // @langchain/langgraph-checkpoint-validation uses vitest's globals.
    globals: true,
    include: ["validation/validate.vitest.js"],
    root: new URL("..", import.meta.url).pathname,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One file, one worker: the adapter's server process is its child.
    pool: "forks",
    fileParallelism: false,
  },
});
