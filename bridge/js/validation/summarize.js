// summarize.js: reads the vitest JSON report of one validation run and
// checks it against expected-skips.json.
//
//   node validation/summarize.js ADAPTER REPORT.json
//
// Prints every failed test (with the first lines of its error) and every
// problem with the skip list on stderr, and one line on stdout:
// "PASSED FAILED SKIPPED PROBLEMS". A problem is a skipped test that the
// list does not name for this adapter, or a list entry for this adapter
// that names no test of the suite (renamed upstream?). Exit status: 0.

import { readFileSync } from "node:fs";

const [adapter, reportPath] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportPath, "utf8"));
const list = JSON.parse(readFileSync(new URL("./expected-skips.json", import.meta.url), "utf8"));
const expected = new Map(list.filter((s) => !s.adapters || s.adapters.includes(adapter)).map((s) => [s.test, s]));

let passed = 0;
let failed = 0;
let skipped = 0;
let problems = 0;
const seen = new Set();
const say = (s) => process.stderr.write(`${s}\n`);

for (const file of report.testResults ?? []) {
  for (const t of file.assertionResults ?? []) {
    const name = [...t.ancestorTitles, t.title].join(" > ");
    seen.add(name);
    switch (t.status) {
      case "passed":
        passed += 1;
        break;
      case "failed": {
        failed += 1;
        const msg = (t.failureMessages ?? []).join("\n").split("\n").slice(0, 3).join("\n      ");
        say(`  FAIL ${adapter}: ${name}\n      ${msg}`);
        break;
      }
      default: {
        // skipped, pending, todo
        skipped += 1;
        const e = expected.get(name);
        if (e) {
          say(`  skip ${adapter}: ${name} [${e.rule}]`);
        } else {
          problems += 1;
          say(`  UNEXPECTED SKIP ${adapter}: ${name}`);
        }
      }
    }
  }
  if (file.status === "failed" && (file.assertionResults ?? []).length === 0) {
    failed += 1;
    problems += 1;
    say(`  FAIL ${adapter}: ${file.name}: ${file.message ?? "the file failed before running tests"}`);
  }
}

if (!process.env.CHECKPOINTKIT_RUN_EXPECTED_SKIPS) {
  for (const name of expected.keys()) {
    if (!seen.has(name)) {
      problems += 1;
      say(`  STALE SKIP ${adapter}: expected-skips.json names a test the suite does not have: ${name}`);
    }
  }
}

console.log(`${passed} ${failed} ${skipped} ${problems}`);
