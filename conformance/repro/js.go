package repro

import (
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// jsSaver opens and closes one of LangGraph.js's savers as
// bridge/js/server.js does.
type jsSaver struct {
	// open is the imports and the statements that define saver; close the
	// statements that release it.
	imports, open, close string
}

// jsSavers are the kinds bridge/js/server.js serves.
var jsSavers = map[string]jsSaver{
	"memory": {
		imports: `import { MemorySaver } from "@langchain/langgraph-checkpoint";`,
		open:    "const saver = new MemorySaver();",
	},
	"sqlite": {
		imports: `import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";`,
		open:    `const saver = SqliteSaver.fromConnString(":memory:");`,
		close:   "saver.db.close();",
	},
	"postgres": {
		imports: "import pg from \"pg\";\nimport { PostgresSaver } from \"@langchain/langgraph-checkpoint-postgres\";",
		open: `// A new schema of the database CHECKPOINTKIT_POSTGRES_DSN names.
const pool = new pg.Pool({ connectionString: process.env.CHECKPOINTKIT_POSTGRES_DSN });
const schema = "repro_" + Date.now().toString(36);
const saver = new PostgresSaver(pool, undefined, { schema });
await saver.setup();`,
		close: "await pool.query(`DROP SCHEMA IF EXISTS \"${schema}\" CASCADE`);\nawait pool.end();",
	},
	"mongo": {
		imports: "import { MongoClient } from \"mongodb\";\nimport { MongoDBSaver } from \"@langchain/langgraph-checkpoint-mongodb\";",
		open: `// A new database of the server CHECKPOINTKIT_MONGO_URI names.
const client = new MongoClient(process.env.CHECKPOINTKIT_MONGO_URI);
await client.connect();
const dbName = "repro_" + Date.now().toString(36);
const saver = new MongoDBSaver({ client, dbName });
await saver.setup();`,
		close: "await client.db(dbName).dropDatabase();\nawait client.close();",
	},
}

// JS returns a short ES module for a bug report: it opens a fresh
// LangGraph.js saver of kind (memory, sqlite, postgres or mongo, as
// bridge/js/server.js opens them), makes r's calls plainly and, at the call
// where the saver differs, prints the one field the difference is about
// (or the error, or its absence) next to what the contract expects. It
// exits with status 1 when the difference shows. Run it from a folder where
// the saver's package is installed (bridge/js).
func (r *Repro) JS(kind, title string) (string, error) {
	s, ok := jsSavers[kind]
	if !ok {
		return "", fmt.Errorf("repro: no LangGraph.js saver of kind %q (want memory, sqlite, postgres or mongo)", kind)
	}
	d := r.Divergence
	chk := newCheck(d)
	l := javascript.withMinted(r.Calls)
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: %s at call %d (%s), exit status 1 while it does.\n", r.Rule, title, d.Index+1, d.Method)
	fmt.Fprintf(&b, "// %s, shrunk from %d recorded by checkpointkit's ci/cmd/repro. Run with node from bridge/js.\n", calls(len(r.Calls)), r.Recorded)
	if !chk.raises && !chk.none {
		b.WriteString("import { isDeepStrictEqual } from \"node:util\";\n")
	}
	var body strings.Builder
	for i, c := range r.Calls {
		if i == d.Index {
			jsLast(&body, l, c, chk)
			break
		}
		if c.Method == trace.MethodNextVersion {
			fmt.Fprintf(&body, "const %s = %s;\n", l.minted[c.Version], jsCall(l, c))
			continue
		}
		if c.Err != "" && !(c.Method == trace.MethodGetTuple && c.NotFound) {
			if c.Method == trace.MethodList {
				fmt.Fprintf(&body, "try { for await (const _ of saver.list(%s)); } catch {} // the contract expects an error\n", jsListArgs(c))
			} else {
				fmt.Fprintf(&body, "await %s.catch(() => {}); // the contract expects an error\n", jsCall(l, c))
			}
			continue
		}
		if c.Method == trace.MethodList {
			fmt.Fprintf(&body, "for await (const _ of saver.list(%s));\n", jsListArgs(c))
		} else {
			fmt.Fprintf(&body, "await %s;\n", jsCall(l, c))
		}
	}
	b.WriteString(s.imports + "\n")
	if strings.Contains(body.String(), "new DeltaSnapshot(") {
		b.WriteString("import { DeltaSnapshot } from \"@langchain/langgraph-checkpoint\";\n")
	}
	b.WriteString("\n" + s.open + "\n" + body.String())
	if s.close != "" {
		b.WriteString(s.close + "\n")
	}
	return b.String(), nil
}

// jsCall writes c as an expression (Put, PutWrites, GetTuple, DeleteThread,
// a delta history read).
func jsCall(l lang, c trace.Call) string {
	switch c.Method {
	case trace.MethodPut:
		return fmt.Sprintf("saver.put(%s, %s, %s, %s)", l.config(c.Config), l.checkpoint(c.Checkpoint), l.value(anyMap(c.Metadata)), l.versions(c.NewVersions))
	case trace.MethodPutWrites:
		ws := make([]string, len(c.Writes))
		for j, w := range c.Writes {
			ws[j] = fmt.Sprintf("[%q, %s]", w.Channel, l.value(w.Value))
		}
		// The task path orders one checkpoint's writes (writesSortKey), as
		// bridge/js/server.js passes it.
		return fmt.Sprintf("saver.putWrites(%s, [%s], %q, %q)", l.config(c.Config), strings.Join(ws, ", "), c.TaskID, c.TaskPath)
	case trace.MethodGetTuple:
		return fmt.Sprintf("saver.getTuple(%s)", l.config(c.Config))
	case trace.MethodDeleteThread:
		return fmt.Sprintf("saver.deleteThread(%q)", c.ThreadID)
	case trace.MethodDeltaHistory:
		return jsHistoryCall(c)
	case trace.MethodNextVersion:
		return fmt.Sprintf("saver.getNextVersion(%s)", l.currentLit(c.Current))
	}
	return "Promise.resolve() /* " + c.Method + " cannot be written */"
}

// jsLast writes the differing call and the comparison chk chose.
func jsLast(b *strings.Builder, l lang, c trace.Call, chk check) {
	b.WriteString("\n")
	if c.Method == trace.MethodNextVersion {
		fmt.Fprintf(b, "const current = %s;\nconsole.log(\"expected: a version greater than\", current);\n", l.currentLit(c.Current))
		b.WriteString("const got = saver.getNextVersion(current);\nconsole.log(\"got:     \", got);\n")
		b.WriteString("process.exitCode = current === undefined || got > current ? 0 : 1;\n")
		return
	}
	call := "await " + jsCall(l, c)
	if c.Method == trace.MethodList {
		call = fmt.Sprintf("for await (const _ of saver.list(%s));", jsListArgs(c))
	}
	switch {
	case chk.raises:
		fmt.Fprintf(b, "console.log(%s);\n", quote("expected: an error, as checkpointkit's reference fails: "+chk.errMsg))
		fmt.Fprintf(b, "try {\n  %s\n  console.log(\"got:      no error\");\n  process.exitCode = 1;\n", strings.TrimSuffix(call, ";")+";")
		b.WriteString("} catch (err) {\n  console.log(\"got:     \", String(err));\n}\n")
		return
	case chk.none:
		fmt.Fprintf(b, "console.log(\"expected: no error\");\n%s\nconsole.log(\"got:      no error\");\n", strings.TrimSuffix(call, ";")+";")
		return
	}
	fmt.Fprintf(b, "const expected = %s;\nconsole.log(\"expected:\", expected);\n", l.expected(chk, c))
	switch c.Method {
	case trace.MethodPut:
		fmt.Fprintf(b, "const got = (%s).configurable.%s;\n", call, chk.part.key)
	case trace.MethodGetTuple:
		fmt.Fprintf(b, "const t = %s;\n", call)
		if chk.nilSafe {
			fmt.Fprintf(b, "const got = %s;\n", jsPart(chk.part, "t?"))
		} else {
			fmt.Fprintf(b, "const got = %s;\n", jsPart(chk.part, "t"))
		}
	case trace.MethodList:
		b.WriteString("const ts = [];\n")
		if c.Stopped {
			fmt.Fprintf(b, "for await (const t of saver.list(%s)) {\n  ts.push(t);\n  if (ts.length === %d) break;\n}\n", jsListArgs(c), len(c.Tuples))
		} else {
			fmt.Fprintf(b, "for await (const t of saver.list(%s)) ts.push(t);\n", jsListArgs(c))
		}
		if chk.index < 0 {
			fmt.Fprintf(b, "const got = ts.map((t) => %s);\n", jsPart(chk.part, "t"))
		} else {
			fmt.Fprintf(b, "const got = %s;\n", jsPart(chk.part, fmt.Sprintf("ts[%d]", chk.index)))
		}
	case trace.MethodDeltaHistory:
		fmt.Fprintf(b, "const h = %s;\nconst got = %s;\n", call, jsHistoryPart(chk.part, "h"))
	}
	b.WriteString("console.log(\"got:     \", got);\nprocess.exitCode = isDeepStrictEqual(got, expected) ? 0 : 1;\n")
}

// jsPart reads p of the tuple t ("t?" when there may be none).
func jsPart(p part, t string) string {
	switch p.area {
	case "config":
		return fmt.Sprintf("%s.config.configurable.%s ?? null", t, p.key)
	case "parent":
		return fmt.Sprintf("%s.parentConfig?.configurable.%s ?? null", t, p.key)
	case "metadata":
		return fmt.Sprintf("%s.metadata?.[%q] ?? null", t, p.key)
	case "writes":
		return fmt.Sprintf("[...(%s.pendingWrites ?? [])].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))", t)
	}
	return fmt.Sprintf("%s.checkpoint.%s ?? null", t, p.key)
}

// jsListArgs gives list's config and options as bridge/js/server.js
// passes them.
func jsListArgs(c trace.Call) string {
	o := c.List
	var parts []string
	if o.ThreadID != "" {
		parts = append(parts, fmt.Sprintf("thread_id: %q", o.ThreadID))
	}
	if !o.AllNamespaces {
		parts = append(parts, fmt.Sprintf("checkpoint_ns: %q", o.Namespace))
	}
	if o.CheckpointID != "" {
		parts = append(parts, fmt.Sprintf("checkpoint_id: %q", o.CheckpointID))
	}
	var opts []string
	if len(o.Filter) > 0 {
		opts = append(opts, "filter: "+javascript.value(anyMap(o.Filter)))
	}
	if o.Before != "" {
		opts = append(opts, fmt.Sprintf("before: { configurable: { checkpoint_id: %q } }", o.Before))
	}
	if o.Limit != 0 {
		opts = append(opts, fmt.Sprintf("limit: %d", o.Limit))
	}
	return "{ configurable: { " + strings.Join(parts, ", ") + " } }, { " + strings.Join(opts, ", ") + " }"
}
