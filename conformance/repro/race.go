package repro

import (
	"errors"
	"fmt"
	"strings"
)

// Races: a reproduction of a concurrency rule that a call sequence cannot
// show.
//
// A saver that breaks CONC-1, CONC-2 or CONC-3 only when calls overlap
// gives, replayed one call at a time, what the reference gives. For those
// rules a reproduction is a short program that makes the calls overlap on
// purpose and checks the rule's property afterwards (CONC-1, CONC-2) or
// while it runs (CONC-3): threads in Python's sync API, tasks on one event
// loop in its async API and in JavaScript. A race need not show in every
// run, so the program tries a bounded number of rounds and exits 1 as soon
// as the property breaks, 0 when it held throughout.

// ErrNoRace reports a rule without a race program.
var ErrNoRace = errors.New("repro: no race program for this rule")

// RaceRules are the rules [PythonRace] and [JSRace] write programs for.
var RaceRules = []string{"CONC-1", "CONC-2", "CONC-3"}

// raceShape says what a race program does for a rule.
type raceShape struct {
	// writers is the number of concurrent writers; threads reports that
	// each writes a thread of its own (CONC-1), else all share one
	// (CONC-2, CONC-3).
	writers int
	threads bool
	// reader runs a reader alongside the writers that checks every
	// checkpoint it reads is whole (CONC-3); without it the program checks
	// afterwards that nothing was lost (CONC-1, CONC-2).
	reader bool
	// what is the property, for the program's output.
	what string
}

var raceShapes = map[string]raceShape{
	"CONC-1": {writers: 4, threads: true, what: "every checkpoint and write of 4 concurrent writers on 4 threads reads back"},
	"CONC-2": {writers: 4, what: "every checkpoint and write of 4 concurrent writers on one thread reads back"},
	"CONC-3": {writers: 1, reader: true, what: "a reader alongside a writer sees each checkpoint whole or not at all"},
}

// raceRounds is the number of checkpoints each writer puts.
const raceRounds = 200

// PythonRace returns a Python program that races the saver's calls as
// rule says and exits 1 when the rule breaks. o says how to open the
// saver, as for [Repro.Python].
func PythonRace(rule string, o PythonOptions) (string, error) {
	sh, ok := raceShapes[rule]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNoRace, rule)
	}
	mod, fn, _ := strings.Cut(o.Factory, ":")
	a, aw, def := "", "", "def"
	if o.Async {
		a, aw, def = "a", "await ", "async def"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"%s: %s: a race, exit status 1 when it shows.\n", rule, o.Title)
	fmt.Fprintf(&b, "Expected: %s. Written by checkpointkit's ci/cmd/repro.\"\"\"\n\n", sh.what)
	if o.Async {
		b.WriteString("import asyncio\nimport inspect\nimport sys\n")
	} else {
		b.WriteString("import atexit\nimport sys\nimport threading\n")
	}
	b.WriteString("\nfrom langgraph.checkpoint.base import BaseCheckpointSaver\n\n")
	fmt.Fprintf(&b, "from %s import %s as factory\n\nROUNDS, WRITERS = %d, %d\nBIG = \"x\" * 100_000\nbroken: list[str] = []\n\n\n", mod, fn, raceRounds, sh.writers)

	// The writer w puts ROUNDS checkpoints, each with a large value and a
	// small one naming it, and one write.
	thread := `"race"`
	if sh.threads {
		thread = `f"race-{w}"`
	}
	fmt.Fprintf(&b, "%s writer(saver, w: int) -> list[tuple[dict, str]]:\n", def)
	fmt.Fprintf(&b, "    cfg, version, done = {\"configurable\": {\"thread_id\": %s, \"checkpoint_ns\": \"\"}}, None, []\n", thread)
	b.WriteString("    for i in range(ROUNDS):\n" +
		"        cid = f\"1ef00000-0000-6000-8{w:03d}-{i:012d}\"\n" +
		"        version = saver.get_next_version(version, None)\n" +
		"        cp = {\"v\": 4, \"id\": cid, \"ts\": \"2026-01-01T00:00:00+00:00\", \"channel_values\": {\"big\": cid + BIG, \"id\": cid},\n" +
		"              \"channel_versions\": {\"big\": version, \"id\": version}, \"versions_seen\": {}, \"updated_channels\": None}\n")
	b.WriteString("        try:\n")
	fmt.Fprintf(&b, "            cfg = %ssaver.%sput(cfg, cp, {\"step\": i, \"writer\": w}, {\"big\": version, \"id\": version})\n", aw, a)
	fmt.Fprintf(&b, "            %ssaver.%sput_writes(cfg, [(\"w\", cid)], f\"task-{w}\")\n", aw, a)
	b.WriteString("        except Exception as err:\n" +
		"            broken.append(f\"writer {w} raised {err!r}\")\n" +
		"            break\n" +
		"        done.append((cfg, cid))\n")
	if o.Async {
		b.WriteString("        await asyncio.sleep(0)\n")
	}
	b.WriteString("    return done\n\n\n")

	b.WriteString("def whole(t, cid: str | None = None) -> str | None:\n" +
		"    \"\"\"Why t is not a whole checkpoint (None when it is).\"\"\"\n" +
		"    cid = cid or t.checkpoint[\"id\"]\n" +
		"    vals = t.checkpoint[\"channel_values\"]\n" +
		"    if vals.get(\"id\") != cid or vals.get(\"big\") != cid + BIG or t.metadata.get(\"step\") is None:\n" +
		"        return f\"{cid}: channel values {sorted(vals)}, metadata {sorted(t.metadata)}\"\n" +
		"    return None\n\n\n")

	if sh.reader {
		fmt.Fprintf(&b, "%s reader(saver, stop) -> None:\n", def)
		b.WriteString("    cfg = {\"configurable\": {\"thread_id\": \"race\", \"checkpoint_ns\": \"\"}}\n")
		stopped := "stop.is_set()"
		if o.Async {
			stopped = "stop[0]"
		}
		fmt.Fprintf(&b, "    while not %s and not broken:\n", stopped)
		b.WriteString("        try:\n")
		fmt.Fprintf(&b, "            t = %ssaver.%sget_tuple(cfg)\n", aw, a)
		b.WriteString("        except Exception as err:  # a torn read may fail to decode\n" +
			"            broken.append(f\"get_tuple raised {err!r}\")\n" +
			"            return\n" +
			"        if t is not None and (why := whole(t)):\n" +
			"            broken.append(why)\n")
		if o.Async {
			b.WriteString("        await asyncio.sleep(0)\n")
		}
		b.WriteString("\n\n")
	}

	// check reads every checkpoint back after the writers are done.
	fmt.Fprintf(&b, "%s check(saver, done) -> None:\n", def)
	b.WriteString("    for cfg, cid in done:\n")
	fmt.Fprintf(&b, "        t = %ssaver.%sget_tuple(cfg)\n", aw, a)
	b.WriteString("        why = \"lost\" if t is None else whole(t, cid)\n" +
		"        if why is None and [w[2] for w in t.pending_writes] != [cid]:\n" +
		"            why = f\"{cid}: writes {t.pending_writes!r}\"\n" +
		"        if why:\n" +
		"            broken.append(why)\n" +
		"            return\n\n\n")

	if o.Async {
		b.WriteString("async def main() -> int:\n" +
			"    opened = factory()\n" +
			"    opened = await opened if inspect.isawaitable(opened) else opened\n" +
			"    saver = opened\n" +
			"    if not isinstance(opened, BaseCheckpointSaver):\n" +
			"        saver = await opened.__aenter__() if hasattr(opened, \"__aenter__\") else opened.__enter__()\n")
		if sh.reader {
			b.WriteString("    stop = [False]\n" +
				"    read = asyncio.ensure_future(reader(saver, stop))\n" +
				"    done = await writer(saver, 0)\n" +
				"    stop[0] = True\n" +
				"    await read\n")
		} else {
			b.WriteString("    dones = await asyncio.gather(*(writer(saver, w) for w in range(WRITERS)))\n" +
				"    done = [d for ds in dones for d in ds]\n")
		}
		b.WriteString("    await check(saver, done)\n" + raceVerdictPy("    ", sh) + "    return 1 if broken else 0\n\n\n" +
			"sys.exit(asyncio.run(main()))\n")
		return b.String(), nil
	}
	b.WriteString("opened = factory()  # kept: a context manager closes the saver when collected\n" +
		"saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()\n" +
		"atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))\n" +
		"dones: list[list] = [[] for _ in range(WRITERS)]\n" +
		"threads = [threading.Thread(target=lambda w=w: dones[w].extend(writer(saver, w))) for w in range(WRITERS)]\n")
	if sh.reader {
		b.WriteString("stop = threading.Event()\n" +
			"read = threading.Thread(target=reader, args=(saver, stop))\n" +
			"read.start()\n")
	}
	b.WriteString("for t in threads:\n    t.start()\nfor t in threads:\n    t.join()\n")
	if sh.reader {
		b.WriteString("stop.set()\nread.join()\n")
	}
	b.WriteString("check(saver, [d for ds in dones for d in ds])\n" + raceVerdictPy("", sh) + "sys.exit(1 if broken else 0)\n")
	return b.String(), nil
}

func raceVerdictPy(indent string, sh raceShape) string {
	return fmt.Sprintf("%sprint(%q)\n%sprint(f\"got:      {broken[0] if broken else 'it held'}\")\n", indent, "expected: "+sh.what, indent)
}

// JSRace returns an ES module that races a LangGraph.js saver of kind
// (as [Repro.JS] opens it) as rule says, with concurrent async calls on
// one event loop, and exits 1 when the rule breaks.
func JSRace(rule, kind, title string) (string, error) {
	sh, ok := raceShapes[rule]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNoRace, rule)
	}
	s, ok := jsSavers[kind]
	if !ok {
		return "", fmt.Errorf("repro: no LangGraph.js saver of kind %q (want memory, sqlite, postgres or mongo)", kind)
	}
	thread := `"race"`
	if sh.threads {
		thread = "`race-${w}`"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: %s: a race, exit status 1 when it shows.\n// Expected: %s. Written by checkpointkit's ci/cmd/repro; run with node from bridge/js.\n", rule, title, sh.what)
	b.WriteString(s.imports + "\n\n" + s.open + "\n")
	fmt.Fprintf(&b, "const ROUNDS = %d, WRITERS = %d, BIG = \"x\".repeat(100_000);\nconst broken = [];\n\n", raceRounds, sh.writers)
	fmt.Fprintf(&b, "async function writer(w) {\n  let cfg = { configurable: { thread_id: %s, checkpoint_ns: \"\" } }, version;\n  const done = [];\n", thread)
	b.WriteString("  for (let i = 0; i < ROUNDS; i++) {\n" +
		"    const id = `1ef00000-0000-6000-8${String(w).padStart(3, \"0\")}-${String(i).padStart(12, \"0\")}`;\n" +
		"    version = saver.getNextVersion(version);\n" +
		"    const cp = { v: 4, id, ts: \"2026-01-01T00:00:00+00:00\", channel_values: { big: id + BIG, id },\n" +
		"      channel_versions: { big: version, id: version }, versions_seen: {} };\n" +
		"    try {\n" +
		"      cfg = await saver.put(cfg, cp, { step: i, writer: w }, { big: version, id: version });\n" +
		"      await saver.putWrites(cfg, [[\"w\", id]], `task-${w}`);\n" +
		"    } catch (err) {\n      broken.push(`writer ${w} threw ${err}`);\n      break;\n    }\n" +
		"    done.push([cfg, id]);\n  }\n  return done;\n}\n\n")
	b.WriteString("function whole(t, id = t.checkpoint.id) {\n" +
		"  const vals = t.checkpoint.channel_values;\n" +
		"  if (vals.id !== id || vals.big !== id + BIG || t.metadata?.step === undefined) {\n" +
		"    return `${id}: channel values ${Object.keys(vals).sort()}, metadata ${Object.keys(t.metadata ?? {}).sort()}`;\n" +
		"  }\n  return null;\n}\n\n")
	if sh.reader {
		b.WriteString("let stop = false;\nasync function reader() {\n" +
			"  const cfg = { configurable: { thread_id: \"race\", checkpoint_ns: \"\" } };\n" +
			"  while (!stop && broken.length === 0) {\n" +
			"    let t;\n    try {\n      t = await saver.getTuple(cfg);\n" +
			"    } catch (err) {\n      broken.push(`getTuple threw ${err}`);\n      return;\n    }\n" +
			"    const why = t && whole(t);\n    if (why) broken.push(why);\n  }\n}\n\n" +
			"const read = reader();\nconst done = await writer(0);\nstop = true;\nawait read;\n")
	} else {
		b.WriteString("const done = (await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))).flat();\n")
	}
	b.WriteString("for (const [cfg, id] of done) {\n" +
		"  const t = await saver.getTuple(cfg);\n" +
		"  let why = t ? whole(t, id) : \"lost\";\n" +
		"  if (!why && JSON.stringify(t.pendingWrites.map((w) => w[2])) !== JSON.stringify([id])) why = `${id}: writes ${JSON.stringify(t.pendingWrites)}`;\n" +
		"  if (why) {\n    broken.push(why);\n    break;\n  }\n}\n")
	fmt.Fprintf(&b, "console.log(%q);\nconsole.log(\"got:     \", broken[0] ?? \"it held\");\nprocess.exitCode = broken.length ? 1 : 0;\n", "expected: "+sh.what)
	if s.close != "" {
		b.WriteString(s.close + "\n")
	}
	return b.String(), nil
}
