package bridge

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The shared protocol vectors of testdata/vectors (see its README.md),
// which the JavaScript and Python implementations check too: every value
// and message must encode to exactly the vector's text and decode to
// exactly the described value.

const vectorsDir = "testdata/vectors"

// loadVectors reads a vectors file into v; numbers stay json.Number.
func loadVectors(t *testing.T, name string, v any) {
	t.Helper()
	f, err := os.Open(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := json.NewDecoder(f)
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// buildValue builds the Go value of a neutral value description. An int
// beyond int64 is a uint64 when it fits one and a *big.Int otherwise: the
// nearest Go values the encoder must refuse.
func buildValue(t *testing.T, d map[string]any) any {
	t.Helper()
	str := func(k string) string { s, _ := d[k].(string); return s }
	switch d["type"] {
	case "null":
		return nil
	case "bool":
		return d["value"].(bool)
	case "int":
		if i, err := strconv.ParseInt(str("value"), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(str("value"), 10, 64); err == nil {
			return u
		}
		n, ok := new(big.Int).SetString(str("value"), 10)
		if !ok {
			t.Fatalf("bad int %q", str("value"))
		}
		return n
	case "float":
		switch s := str("value"); s {
		case "NaN":
			return math.NaN()
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		case "-0":
			return math.Copysign(0, -1)
		default:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("bad float %q: %v", s, err)
			}
			return f
		}
	case "string":
		return str("value")
	case "bytes":
		b, err := base64.StdEncoding.DecodeString(str("base64"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	case "list":
		out := []any{}
		for _, e := range d["items"].([]any) {
			out = append(out, buildValue(t, e.(map[string]any)))
		}
		return out
	case "map":
		out := map[string]any{}
		for _, e := range d["entries"].([]any) {
			kv := e.([]any)
			out[kv[0].(string)] = buildValue(t, kv[1].(map[string]any))
		}
		return out
	case "delta":
		return spec.DeltaSnapshot{Value: buildValue(t, d["value"].(map[string]any))}
	}
	t.Fatalf("unknown value description %v", d)
	return nil
}

func TestVectorsValues(t *testing.T) {
	type vector struct {
		Name  string         `json:"name"`
		Value map[string]any `json:"value"`
		JSON  string         `json:"json"`
		Code  string         `json:"code"`
	}
	var file struct{ Encode, Decode, Refuse []vector }
	loadVectors(t, "values.json", &file)
	if len(file.Encode) == 0 || len(file.Decode) == 0 || len(file.Refuse) == 0 {
		t.Fatal("values.json has an empty section")
	}
	for _, v := range file.Encode {
		want := buildValue(t, v.Value)
		got, err := appendValue(nil, want)
		if err != nil || string(got) != v.JSON {
			t.Errorf("%s: encode = %s, %v; want %s", v.Name, got, err, v.JSON)
		}
	}
	for _, v := range append(file.Encode, file.Decode...) {
		want := buildValue(t, v.Value)
		got, err := decodeValue([]byte(v.JSON))
		if err != nil || !same(got, want) {
			t.Errorf("%s: decode %s = %#v, %v; want %#v", v.Name, v.JSON, got, err, want)
		}
	}
	for _, v := range file.Refuse {
		_, err := appendValue(nil, buildValue(t, v.Value))
		if err == nil || codeOf(err) != v.Code {
			t.Errorf("%s: encode gave %v (code %s), want code %s", v.Name, err, codeOf(err), v.Code)
		}
	}
}

func TestVectorsInvalid(t *testing.T) {
	var file struct {
		Invalid []struct{ Name, JSON, Code string }
	}
	loadVectors(t, "invalid.json", &file)
	if len(file.Invalid) == 0 {
		t.Fatal("invalid.json has no vectors")
	}
	for _, v := range file.Invalid {
		got, err := decodeValue([]byte(v.JSON))
		if err == nil || codeOf(err) != v.Code {
			t.Errorf("%s: decode %s = %#v, %v; want code %s", v.Name, v.JSON, got, err, v.Code)
		}
	}
}

func TestVectorsMessages(t *testing.T) {
	var file struct {
		Messages []struct {
			Name    string
			Message map[string]any
			Line    string
		}
	}
	loadVectors(t, "messages.json", &file)
	if len(file.Messages) < 10 {
		t.Fatalf("messages.json has %d vectors", len(file.Messages))
	}
	for _, v := range file.Messages {
		t.Run(v.Name, func(t *testing.T) {
			b := vectorBuilder{t}
			got := b.encode(v.Message)
			if want := v.Line + "\n"; string(got) != want {
				t.Errorf("encode:\n got %s\nwant %s", got, want)
			}
			m, err := parseMessage([]byte(v.Line))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			b.checkDecoded(m, v.Message)
		})
	}
}

// vectorBuilder builds Go values from message descriptions.
type vectorBuilder struct{ t *testing.T }

func (b vectorBuilder) int(v any) int64 {
	b.t.Helper()
	i, err := v.(json.Number).Int64()
	if err != nil {
		b.t.Fatal(err)
	}
	return i
}

func (b vectorBuilder) obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func (b vectorBuilder) strings(v any) []string {
	if v == nil {
		return nil
	}
	out := []string{}
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func (b vectorBuilder) config(v any) spec.Config {
	m := b.obj(v)
	return spec.Config{ThreadID: m["thread_id"].(string), Namespace: m["checkpoint_ns"].(string), CheckpointID: m["checkpoint_id"].(string)}
}

func (b vectorBuilder) values(v any) map[string]any {
	out := map[string]any{}
	for k, d := range b.obj(v) {
		out[k] = buildValue(b.t, d.(map[string]any))
	}
	return out
}

func (b vectorBuilder) versions(v any) spec.Versions {
	out := spec.Versions{}
	for k, s := range b.obj(v) {
		out[k] = spec.Version(s.(string))
	}
	return out
}

func (b vectorBuilder) checkpoint(v any) spec.Checkpoint {
	m := b.obj(v)
	cp := spec.Checkpoint{
		V:               int(b.int(m["v"])),
		ID:              m["id"].(string),
		ChannelValues:   b.values(m["channel_values"]),
		ChannelVersions: b.versions(m["channel_versions"]),
		VersionsSeen:    map[string]spec.Versions{},
		UpdatedChannels: b.strings(m["updated_channels"]),
	}
	if ts, ok := m["ts"].(string); ok {
		cp.TS = ts
	} else {
		cp.TS = string(buildValue(b.t, b.obj(m["ts"])).([]byte))
	}
	for node, vs := range b.obj(m["versions_seen"]) {
		cp.VersionsSeen[node] = b.versions(vs)
	}
	return cp
}

func (b vectorBuilder) tuple(v any) *spec.Tuple {
	m := b.obj(v)
	t := &spec.Tuple{
		Config:        b.config(m["config"]),
		Checkpoint:    b.checkpoint(m["checkpoint"]),
		Metadata:      b.values(m["metadata"]),
		PendingWrites: []spec.PendingWrite{},
	}
	if m["parent_config"] != nil {
		p := b.config(m["parent_config"])
		t.Parent = &p
	}
	for _, e := range m["pending_writes"].([]any) {
		pw := e.([]any)
		t.PendingWrites = append(t.PendingWrites, spec.PendingWrite{TaskID: pw[0].(string), Channel: pw[1].(string), Value: buildValue(b.t, b.obj(pw[2]))})
	}
	return t
}

func (b vectorBuilder) writes(v any) []spec.Write {
	out := []spec.Write{}
	for _, e := range v.([]any) {
		w := e.([]any)
		out = append(out, spec.Write{Channel: w[0].(string), Value: buildValue(b.t, b.obj(w[1]))})
	}
	return out
}

func (b vectorBuilder) listOptions(p map[string]any) spec.ListOptions {
	return spec.ListOptions{
		ThreadID: p["thread_id"].(string), Namespace: p["checkpoint_ns"].(string), AllNamespaces: p["all_namespaces"].(bool),
		CheckpointID: p["checkpoint_id"].(string), Filter: b.values(p["filter"]), Before: p["before"].(string), Limit: int(b.int(p["limit"])),
	}
}

// encode writes the message a description stands for, with the encoders
// the client and the server use.
func (b vectorBuilder) encode(d map[string]any) []byte {
	t := b.t
	t.Helper()
	id := b.int(d["id"])
	switch {
	case d["cancel"] != nil:
		return appendCancel(nil, id)
	case d["credit"] != nil:
		return appendCredit(nil, id, b.int(d["credit"]))
	case d["error"] != nil:
		e := b.obj(d["error"])
		return appendError(nil, id, e["code"].(string), e["message"].(string))
	case d["item"] != nil:
		raw, err := appendTuple(nil, b.tuple(d["item"]))
		if err != nil {
			t.Fatal(err)
		}
		return appendAnswer(nil, id, "item", raw)
	case d["method"] == nil: // a result, told apart by its members
		r := b.obj(d["result"])
		var raw []byte
		switch {
		case r == nil:
			raw = null
		case r["checkpoint"] != nil:
			var err error
			if raw, err = appendTuple(nil, b.tuple(r)); err != nil {
				t.Fatal(err)
			}
		case r["capabilities"] != nil:
			raw = appendHello(r["name"].(string), b.strings(r["capabilities"]))
		case r["config"] != nil:
			raw = append(appendConfig([]byte(`{"config":`), b.config(r["config"])), '}')
		case r["saver"] != nil:
			raw = append(appendString([]byte(`{"saver":`), r["saver"].(string)), '}')
		case r["version"] != nil:
			raw = append(appendString([]byte(`{"version":`), r["version"].(string)), '}')
		case r["histories"] != nil:
			raw = b.encodeHistories(r)
		default:
			t.Fatalf("unknown result %v", r)
		}
		return appendAnswer(nil, id, "result", raw)
	}
	method := d["method"].(string)
	p := b.obj(d["params"])
	var params []byte
	var err error
	switch method {
	case "hello":
		params = []byte(`{"version":` + strconv.Itoa(protocolVersion) + `}`)
	case "open", "close":
		params, _ = noParams(nil)
	case "put":
		params, err = appendPutParams(nil, b.config(p["config"]), b.checkpoint(p["checkpoint"]), b.values(p["metadata"]), b.versions(p["new_versions"]))
	case "put_writes":
		params, err = appendPutWritesParams(nil, b.config(p["config"]), b.writes(p["writes"]), p["task_id"].(string), p["task_path"].(string))
	case "get_tuple":
		params = appendGetTupleParams(nil, b.config(p["config"]))
	case "list":
		params, err = appendListParams(nil, b.listOptions(p), int(b.int(p["credit"])))
	case "delete_thread":
		params, err = stringParams("thread_id", p["thread_id"].(string))(nil)
	case "next_version":
		params, err = stringParams("current", p["current"].(string))(nil)
	case "copy_thread":
		params = appendCopyThreadParams(nil, p["src"].(string), p["dst"].(string))
	case "delta_history":
		params = appendDeltaHistoryParams(nil, b.config(p["config"]), b.strings(p["channels"]))
	case "prune":
		strategy, perr := parseStrategy(p["strategy"].(string))
		if perr != nil {
			t.Fatal(perr)
		}
		params = appendPruneParams(nil, b.strings(p["thread_ids"]), strategy)
	default:
		t.Fatalf("no encoder for method %q", method)
	}
	if err != nil {
		t.Fatal(err)
	}
	saver, _ := d["saver"].(string)
	var timeout int64
	if d["timeout_ms"] != nil {
		timeout = b.int(d["timeout_ms"])
	}
	return appendRequest(nil, id, saver, method, timeout, params)
}

// checkDecoded compares a parsed message with its description, decoding
// params and results as the server and the client do.
func (b vectorBuilder) checkDecoded(m *message, d map[string]any) {
	t := b.t
	t.Helper()
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decode %s:\n got %#v\nwant %#v", what, got, want)
		}
	}
	check("id", m.id, b.int(d["id"]))
	switch {
	case d["cancel"] != nil:
		check("cancel", m.cancel, true)
		return
	case d["credit"] != nil:
		check("credit", *m.credit, b.int(d["credit"]))
		return
	case d["error"] != nil:
		e := b.obj(d["error"])
		check("error", *m.err, wireError{code: e["code"].(string), message: e["message"].(string)})
		return
	case d["item"] != nil:
		got, err := tupleOf(m.item)
		if err != nil {
			t.Fatal(err)
		}
		check("item", got, b.tuple(d["item"]))
		return
	case d["method"] == nil:
		r := b.obj(d["result"])
		if !m.hasResult {
			t.Fatal("no result")
		}
		switch {
		case r == nil:
			check("result", m.result, nil)
		case r["checkpoint"] != nil:
			got, err := tupleOf(m.result)
			if err != nil {
				t.Fatal(err)
			}
			check("tuple", got, b.tuple(r))
		case r["config"] != nil:
			got, err := configOf(b.obj(m.result)["config"], "config")
			if err != nil {
				t.Fatal(err)
			}
			check("config", got, b.config(r["config"]))
		case r["histories"] != nil:
			b.checkHistories(m.result, r)
		default:
			check("result", unNumber(m.result), unNumber(d["result"]))
		}
		return
	}
	check("method", m.method, d["method"])
	saver, _ := d["saver"].(string)
	check("saver", m.saver, saver)
	if d["timeout_ms"] != nil {
		if m.timeoutMS == nil {
			t.Fatal("no timeout_ms")
		}
		check("timeout_ms", *m.timeoutMS, b.int(d["timeout_ms"]))
	} else if m.timeoutMS != nil {
		t.Errorf("timeout_ms %d, want none", *m.timeoutMS)
	}
	p := params{method: m.method, m: m.params}
	dp := b.obj(d["params"])
	switch m.method {
	case "put":
		check("put params", []any{p.config("config"), p.checkpoint(), map[string]any(p.values("metadata")), p.versions("new_versions")},
			[]any{b.config(dp["config"]), b.checkpoint(dp["checkpoint"]), b.values(dp["metadata"]), b.versions(dp["new_versions"])})
	case "put_writes":
		check("put_writes params", []any{p.config("config"), p.writes(), p.string("task_id", true), p.string("task_path", false)},
			[]any{b.config(dp["config"]), b.writes(dp["writes"]), dp["task_id"], dp["task_path"]})
	case "get_tuple":
		check("get_tuple params", p.config("config"), b.config(dp["config"]))
	case "list":
		opts := b.listOptions(dp)
		check("list params", []any{p.string("thread_id", false), p.string("checkpoint_ns", false), p.bool("all_namespaces"), p.string("checkpoint_id", false),
			map[string]any(p.values("filter")), p.string("before", false), p.int("limit"), p.int("credit")},
			[]any{opts.ThreadID, opts.Namespace, opts.AllNamespaces, opts.CheckpointID, map[string]any(opts.Filter), opts.Before, int64(opts.Limit), b.int(dp["credit"])})
	case "prune":
		check("prune params", []any{p.strings("thread_ids"), p.string("strategy", true)}, []any{b.strings(dp["thread_ids"]), dp["strategy"]})
	default: // params of strings and integers only
		check("params", unNumber(m.params), unNumber(d["params"]))
	}
	if p.err != nil {
		t.Errorf("params: %v", p.err)
	}
}

// unNumber returns a JSON tree with its json.Numbers as int64, for
// comparing plain JSON.
func unNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		i, _ := x.Int64()
		return i
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unNumber(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = unNumber(e)
		}
		return out
	}
	return v
}
