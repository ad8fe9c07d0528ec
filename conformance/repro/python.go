package repro

import (
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// PythonOptions says how a Python snippet opens the saver.
type PythonOptions struct {
	// Factory is the saver's factory as module:function (the one
	// `python -m checkpointkit_bridge serve` serves).
	Factory string
	// Async calls the saver's async API (aput, alist, ...), as the bridge
	// does for a factory that gives an async context manager or an
	// awaitable.
	Async bool
	// Title names the saver in the snippet's first line.
	Title string
}

// Python returns a short, runnable Python program for a bug report: it
// opens a saver from the factory, makes r's calls plainly with LangGraph
// types (config dicts, Checkpoint dicts, (channel, value) writes) and, at
// the call where the saver differs, prints the one field the difference is
// about (or the exception, or its absence) next to what the contract
// expects. It exits with status 1 when the difference shows, 0 when it does
// not.
func (r *Repro) Python(o PythonOptions) string {
	mod, fn, _ := strings.Cut(o.Factory, ":")
	d := r.Divergence
	chk := newCheck(d)
	p := &pyWriter{async: o.Async, l: python.withMinted(r.Calls)}
	if o.Async {
		p.indent = "    "
	}
	for i, c := range r.Calls {
		if i == d.Index {
			p.last(c, chk)
			break
		}
		p.step(c)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"%s: %s at call %d (%s), exit status 1 while it does.\n", r.Rule, o.Title, d.Index+1, d.Method)
	fmt.Fprintf(&b, "%s, shrunk from %d recorded by checkpointkit's ci/cmd/repro.\"\"\"\n\n", calls(len(r.Calls)), r.Recorded)
	if o.Async {
		b.WriteString("import asyncio\n")
	} else {
		b.WriteString("import atexit\n")
	}
	if p.suppress {
		b.WriteString("import contextlib\n")
	}
	if o.Async {
		b.WriteString("import inspect\n")
	}
	if p.islice {
		b.WriteString("import itertools\n")
	}
	b.WriteString("import sys\n\nfrom langgraph.checkpoint.base import BaseCheckpointSaver\n")
	if strings.Contains(p.b.String(), "_DeltaSnapshot(") {
		b.WriteString("from langgraph.checkpoint.serde.types import _DeltaSnapshot\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "from %s import %s as factory\n\n", mod, fn)
	if o.Async {
		// opened stays referenced while the saver is used: a context manager
		// made by contextlib closes its resources when it is collected.
		b.WriteString("\nasync def main() -> int:\n" +
			"    opened = factory()\n" +
			"    opened = await opened if inspect.isawaitable(opened) else opened\n" +
			"    saver = opened\n" +
			"    if not isinstance(opened, BaseCheckpointSaver):  # a context manager giving the saver\n" +
			"        saver = await opened.__aenter__() if hasattr(opened, \"__aenter__\") else opened.__enter__()\n")
	} else {
		// The context manager is exited at exit, while the interpreter can
		// still run its cleanup.
		b.WriteString("opened = factory()  # kept: a context manager closes the saver when collected\n" +
			"saver = opened if isinstance(opened, BaseCheckpointSaver) else opened.__enter__()\n" +
			"atexit.register(lambda: saver is opened or opened.__exit__(None, None, None))\n")
	}
	b.WriteString(p.b.String())
	if o.Async {
		b.WriteString("\n\nsys.exit(asyncio.run(main()))\n")
	}
	return b.String()
}

// pyWriter writes the calls of a Python snippet.
type pyWriter struct {
	b                strings.Builder
	l                lang
	async            bool
	indent           string
	suppress, islice bool
}

func (p *pyWriter) line(format string, args ...any) {
	p.b.WriteString(p.indent + fmt.Sprintf(format, args...) + "\n")
}

// exit ends the snippet with status (a Python expression).
func (p *pyWriter) exit(status string) {
	if p.async {
		p.line("return %s", status)
	} else {
		p.line("sys.exit(%s)", status)
	}
}

// call writes c as an expression (Put, PutWrites, GetTuple, DeleteThread,
// a delta history read).
func (p *pyWriter) call(c trace.Call) string {
	l := p.l
	a, aw := "", ""
	if p.async {
		a, aw = "a", "await "
	}
	switch c.Method {
	case trace.MethodPut:
		return fmt.Sprintf("%ssaver.%sput(%s, %s, %s, %s)", aw, a, l.config(c.Config), l.checkpoint(c.Checkpoint), l.value(anyMap(c.Metadata)), l.versions(c.NewVersions))
	case trace.MethodPutWrites:
		ws := make([]string, len(c.Writes))
		for j, w := range c.Writes {
			ws[j] = fmt.Sprintf("(%q, %s)", w.Channel, l.value(w.Value))
		}
		return fmt.Sprintf("%ssaver.%sput_writes(%s, [%s], %q, task_path=%q)", aw, a, l.config(c.Config), strings.Join(ws, ", "), c.TaskID, c.TaskPath)
	case trace.MethodGetTuple:
		return fmt.Sprintf("%ssaver.%sget_tuple(%s)", aw, a, l.config(c.Config))
	case trace.MethodDeleteThread:
		return fmt.Sprintf("%ssaver.%sdelete_thread(%q)", aw, a, c.ThreadID)
	case trace.MethodDeltaHistory:
		return pyHistoryCall(c, p.async)
	case trace.MethodNextVersion:
		// LangGraph's get_next_version is synchronous on every saver.
		return fmt.Sprintf("saver.get_next_version(%s, None)", l.currentLit(c.Current))
	}
	return "None  # " + c.Method + " cannot be written"
}

// list writes a List call that gathers the tuples into v (a recorded
// consumer that stopped early stops as early).
func (p *pyWriter) list(c trace.Call, v string) {
	cfg, kw := pyListArgs(c)
	n := len(c.Tuples)
	switch {
	case !p.async && c.Stopped:
		p.islice = true
		p.line("%s = list(itertools.islice(saver.list(%s%s), %d))", v, cfg, kw, n)
	case !p.async:
		p.line("%s = list(saver.list(%s%s))", v, cfg, kw)
	case c.Stopped:
		p.line("%s = []", v)
		p.line("async for t in saver.alist(%s%s):", cfg, kw)
		p.line("    %s.append(t)", v)
		p.line("    if len(%s) == %d:", v, n)
		p.line("        break")
	default:
		p.line("%s = [t async for t in saver.alist(%s%s)]", v, cfg, kw)
	}
}

// step writes a call before the differing one; a call the contract
// expects to fail may fail.
func (p *pyWriter) step(c trace.Call) {
	fails := c.Err != "" && !(c.Method == trace.MethodGetTuple && c.NotFound)
	if fails {
		p.suppress = true
		p.line("with contextlib.suppress(Exception):  # the contract expects an exception")
		p.indent += "    "
		defer func() { p.indent = p.indent[:len(p.indent)-4] }()
	}
	switch c.Method {
	case trace.MethodList:
		p.list(c, "_")
	case trace.MethodNextVersion:
		p.line("%s = %s", p.l.minted[c.Version], p.call(c))
	default:
		p.line("%s", p.call(c))
	}
}

// last writes the differing call and the comparison chk chose.
func (p *pyWriter) last(c trace.Call, chk check) {
	p.b.WriteString("\n")
	switch {
	case chk.raises:
		p.line("print(%s)", quote("expected: an exception, as checkpointkit's reference raises: "+chk.errMsg))
		p.line("try:")
		p.indent += "    "
		if c.Method == trace.MethodList {
			p.list(c, "_")
		} else {
			p.line("%s", p.call(c))
		}
		p.indent = p.indent[:len(p.indent)-4]
		p.line("except Exception as err:")
		p.line("    print(f\"got:      {err!r}\")")
		p.indent += "    "
		p.exit("0")
		p.indent = p.indent[:len(p.indent)-4]
		p.line("print(\"got:      no exception\")")
		p.exit("1")
		return
	case chk.none:
		p.line("print(\"expected: no exception\")")
		p.line("%s", p.call(c))
		p.line("print(\"got:      no exception\")")
		if p.async {
			p.exit("0")
		}
		return
	}
	if c.Method == trace.MethodNextVersion {
		p.line("current = %s", p.l.currentLit(c.Current))
		p.line("print(f\"expected: a version greater than {current!r}\")")
		p.line("got = saver.get_next_version(current, None)")
		p.line("print(f\"got:      {got!r}\")")
		p.exit("0 if current is None or got > current else 1")
		return
	}
	p.line("expected = %s", p.l.expected(chk, c))
	p.line("print(f\"expected: {expected!r}\")")
	switch c.Method {
	case trace.MethodPut:
		p.line("got = (%s)[\"configurable\"].get(%q)", p.call(c), chk.part.key)
	case trace.MethodGetTuple:
		p.line("t = %s", p.call(c))
		if chk.nilSafe {
			p.line("got = t and %s", pyPart(chk.part, "t"))
		} else {
			p.line("got = %s", pyPart(chk.part, "t"))
		}
	case trace.MethodList:
		p.list(c, "ts")
		if chk.index < 0 {
			p.line("got = [%s for t in ts]", pyPart(chk.part, "t"))
		} else {
			p.line("got = %s", pyPart(chk.part, fmt.Sprintf("ts[%d]", chk.index)))
		}
	case trace.MethodDeltaHistory:
		p.line("h = %s", p.call(c))
		p.line("got = %s", pyHistoryPart(chk.part, "h"))
	}
	p.line("print(f\"got:      {got!r}\")")
	p.exit("0 if got == expected and type(got) is type(expected) else 1")
}

// pyPart reads p of the tuple t.
func pyPart(p part, t string) string {
	switch p.area {
	case "config":
		return fmt.Sprintf("%s.config[\"configurable\"].get(%q)", t, p.key)
	case "parent":
		return fmt.Sprintf("%s.parent_config and %s.parent_config[\"configurable\"].get(%q)", t, t, p.key)
	case "metadata":
		return fmt.Sprintf("%s.metadata.get(%q)", t, p.key)
	case "writes":
		return fmt.Sprintf("[tuple(w) for w in sorted(%s.pending_writes, key=lambda w: w[0])]", t)
	}
	return fmt.Sprintf("%s.checkpoint.get(%q)", t, p.key)
}

// pyListArgs gives list's config argument and keywords as the bridge
// server passes them (bridge/python/checkpointkit_bridge/listing.py).
func pyListArgs(c trace.Call) (cfg, kw string) {
	o := c.List
	cfg = "None"
	if o.ThreadID != "" {
		parts := []string{fmt.Sprintf("%q: %q", "thread_id", o.ThreadID)}
		if !o.AllNamespaces {
			parts = append(parts, fmt.Sprintf("%q: %q", "checkpoint_ns", o.Namespace))
		}
		if o.CheckpointID != "" {
			parts = append(parts, fmt.Sprintf("%q: %q", "checkpoint_id", o.CheckpointID))
		}
		cfg = `{"configurable": {` + strings.Join(parts, ", ") + `}}`
	}
	if len(o.Filter) > 0 {
		kw += ", filter=" + python.value(anyMap(o.Filter))
	}
	if o.Before != "" {
		before := fmt.Sprintf(`{"checkpoint_id": %q`, o.Before)
		if o.ThreadID != "" {
			before += fmt.Sprintf(`, "thread_id": %q`, o.ThreadID)
		}
		kw += `, before={"configurable": ` + before + "}}"
	}
	if o.Limit != 0 {
		kw += fmt.Sprintf(", limit=%d", o.Limit)
	}
	return cfg, kw
}
