package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The JSON form of a trace: {"calls": [...]}, configs and checkpoints with
// LangGraph's field names.

type jsonConfig struct {
	ThreadID     string `json:"thread_id"`
	Namespace    string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

type jsonCheckpoint struct {
	V               int                          `json:"v"`
	ID              string                       `json:"id"`
	TS              string                       `json:"ts"`
	ChannelValues   map[string]any               `json:"channel_values"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	UpdatedChannels []string                     `json:"updated_channels"`
}

type jsonWrite struct {
	TaskID  string `json:"task_id,omitempty"`
	Channel string `json:"channel"`
	Value   any    `json:"value"`
}

type jsonTuple struct {
	Config        jsonConfig     `json:"config"`
	Checkpoint    jsonCheckpoint `json:"checkpoint"`
	Metadata      map[string]any `json:"metadata"`
	Parent        *jsonConfig    `json:"parent,omitempty"`
	PendingWrites []jsonWrite    `json:"pending_writes"`
}

type jsonList struct {
	ThreadID      string         `json:"thread_id,omitempty"`
	Namespace     string         `json:"namespace"`
	AllNamespaces bool           `json:"all_namespaces,omitempty"`
	CheckpointID  string         `json:"checkpoint_id,omitempty"`
	Filter        map[string]any `json:"filter,omitempty"`
	Before        string         `json:"before,omitempty"`
	Limit         int            `json:"limit,omitempty"`
}

type jsonCall struct {
	Method      string            `json:"method"`
	Config      *jsonConfig       `json:"config,omitempty"`
	Checkpoint  *jsonCheckpoint   `json:"checkpoint,omitempty"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
	NewVersions map[string]string `json:"new_versions,omitempty"`
	Writes      []jsonWrite       `json:"writes,omitempty"`
	TaskID      string            `json:"task_id,omitempty"`
	TaskPath    *string           `json:"task_path,omitempty"`
	List        *jsonList         `json:"list,omitempty"`
	ThreadID    string            `json:"thread_id,omitempty"`
	Result      *jsonConfig       `json:"result,omitempty"`
	Tuple       *jsonTuple        `json:"tuple,omitempty"`
	Tuples      []jsonTuple       `json:"tuples,omitempty"`
	Channels    []string          `json:"channels,omitempty"`
	Histories   map[string]any    `json:"histories,omitempty"`
	Current     *string           `json:"current,omitempty"`
	Version     string            `json:"version,omitempty"`
	Stopped     bool              `json:"stopped,omitempty"`
	Err         string            `json:"error,omitempty"`
	NotFound    bool              `json:"not_found,omitempty"`
}

type jsonTrace struct {
	Calls []jsonCall `json:"calls"`
}

func toJSONConfig(c spec.Config) *jsonConfig {
	return &jsonConfig{ThreadID: c.ThreadID, Namespace: c.Namespace, CheckpointID: c.CheckpointID}
}

func (c *jsonConfig) spec() spec.Config {
	if c == nil {
		return spec.Config{}
	}
	return spec.Config{ThreadID: c.ThreadID, Namespace: c.Namespace, CheckpointID: c.CheckpointID}
}

func strVersions(vs spec.Versions) map[string]string {
	if vs == nil {
		return nil
	}
	out := make(map[string]string, len(vs))
	for k, v := range vs {
		out[k] = string(v)
	}
	return out
}

func specVersions(vs map[string]string) spec.Versions {
	if vs == nil {
		return nil
	}
	out := make(spec.Versions, len(vs))
	for k, v := range vs {
		out[k] = spec.Version(v)
	}
	return out
}

func toJSONCheckpoint(cp *spec.Checkpoint) *jsonCheckpoint {
	out := &jsonCheckpoint{V: cp.V, ID: cp.ID, TS: cp.TS, ChannelValues: toJSONMap(cp.ChannelValues),
		ChannelVersions: strVersions(cp.ChannelVersions), UpdatedChannels: cp.UpdatedChannels}
	if cp.VersionsSeen != nil {
		out.VersionsSeen = map[string]map[string]string{}
		for k, v := range cp.VersionsSeen {
			out.VersionsSeen[k] = strVersions(v)
		}
	}
	return out
}

func (c *jsonCheckpoint) spec() *spec.Checkpoint {
	out := &spec.Checkpoint{V: c.V, ID: c.ID, TS: c.TS, ChannelValues: fromJSONMap(c.ChannelValues),
		ChannelVersions: specVersions(c.ChannelVersions), UpdatedChannels: c.UpdatedChannels}
	if c.VersionsSeen != nil {
		out.VersionsSeen = map[string]spec.Versions{}
		for k, v := range c.VersionsSeen {
			out.VersionsSeen[k] = specVersions(v)
		}
	}
	return out
}

func toJSONTuple(t *spec.Tuple) *jsonTuple {
	out := &jsonTuple{Config: *toJSONConfig(t.Config), Checkpoint: *toJSONCheckpoint(&t.Checkpoint),
		Metadata: toJSONMap(t.Metadata), PendingWrites: []jsonWrite{}}
	if t.Parent != nil {
		out.Parent = toJSONConfig(*t.Parent)
	}
	for _, w := range t.PendingWrites {
		out.PendingWrites = append(out.PendingWrites, jsonWrite{TaskID: w.TaskID, Channel: w.Channel, Value: toJSON(w.Value)})
	}
	return out
}

func (t *jsonTuple) spec() *spec.Tuple {
	out := &spec.Tuple{Config: t.Config.spec(), Checkpoint: *t.Checkpoint.spec(), Metadata: fromJSONMap(t.Metadata),
		PendingWrites: []spec.PendingWrite{}}
	if t.Parent != nil {
		p := t.Parent.spec()
		out.Parent = &p
	}
	for _, w := range t.PendingWrites {
		out.PendingWrites = append(out.PendingWrites, spec.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, Value: fromJSON(w.Value)})
	}
	return out
}

// Marshal encodes calls as an indented JSON trace.
func Marshal(calls []Call) ([]byte, error) {
	tr := jsonTrace{Calls: make([]jsonCall, 0, len(calls))}
	for _, c := range calls {
		jc := jsonCall{Method: c.Method, Err: c.Err, NotFound: c.NotFound}
		switch c.Method {
		case MethodPut:
			jc.Config = toJSONConfig(c.Config)
			jc.Checkpoint = toJSONCheckpoint(c.Checkpoint)
			jc.Metadata = toJSONMap(c.Metadata)
			jc.NewVersions = strVersions(c.NewVersions)
			if jc.NewVersions == nil {
				jc.NewVersions = map[string]string{}
			}
			if c.Result != nil {
				jc.Result = toJSONConfig(*c.Result)
			}
		case MethodPutWrites:
			jc.Config = toJSONConfig(c.Config)
			jc.TaskID = c.TaskID
			jc.TaskPath = &c.TaskPath
			for _, w := range c.Writes {
				jc.Writes = append(jc.Writes, jsonWrite{Channel: w.Channel, Value: toJSON(w.Value)})
			}
		case MethodGetTuple:
			jc.Config = toJSONConfig(c.Config)
			if c.Tuple != nil {
				jc.Tuple = toJSONTuple(c.Tuple)
			}
		case MethodList:
			o := c.List
			jc.List = &jsonList{ThreadID: o.ThreadID, Namespace: o.Namespace, AllNamespaces: o.AllNamespaces,
				CheckpointID: o.CheckpointID, Filter: toJSONMap(o.Filter), Before: o.Before, Limit: o.Limit}
			for _, t := range c.Tuples {
				jc.Tuples = append(jc.Tuples, *toJSONTuple(t))
			}
			jc.Stopped = c.Stopped
		case MethodDeleteThread:
			jc.ThreadID = c.ThreadID
		case MethodDeltaHistory:
			jc.Config = toJSONConfig(c.Config)
			jc.Channels = c.Channels
			if c.Histories != nil {
				jc.Histories = toJSONHistories(c.Histories)
			}
		case MethodNextVersion:
			cur := string(c.Current)
			jc.Current, jc.Version = &cur, string(c.Version)
		default:
			return nil, fmt.Errorf("trace: unknown method %q", c.Method)
		}
		tr.Calls = append(tr.Calls, jc)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tr); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes a trace written by Marshal.
func Unmarshal(data []byte) ([]Call, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tr jsonTrace
	if err := dec.Decode(&tr); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	calls := make([]Call, 0, len(tr.Calls))
	for i, jc := range tr.Calls {
		c := Call{Method: jc.Method, Config: jc.Config.spec(), Metadata: fromJSONMap(jc.Metadata),
			NewVersions: specVersions(jc.NewVersions), TaskID: jc.TaskID, ThreadID: jc.ThreadID, Err: jc.Err, NotFound: jc.NotFound}
		switch jc.Method {
		case MethodPut:
			if jc.Checkpoint == nil {
				return nil, fmt.Errorf("trace: call %d: Put without checkpoint", i)
			}
			c.Checkpoint = jc.Checkpoint.spec()
			if jc.Result != nil {
				r := jc.Result.spec()
				c.Result = &r
			}
		case MethodPutWrites:
			if jc.TaskPath != nil {
				c.TaskPath = *jc.TaskPath
			}
			c.Writes = []spec.Write{}
			for _, w := range jc.Writes {
				c.Writes = append(c.Writes, spec.Write{Channel: w.Channel, Value: fromJSON(w.Value)})
			}
		case MethodGetTuple:
			if jc.Tuple != nil {
				c.Tuple = jc.Tuple.spec()
			}
		case MethodList:
			if jc.List == nil {
				return nil, fmt.Errorf("trace: call %d: List without options", i)
			}
			l := jc.List
			c.List = &spec.ListOptions{ThreadID: l.ThreadID, Namespace: l.Namespace, AllNamespaces: l.AllNamespaces,
				CheckpointID: l.CheckpointID, Filter: fromJSONMap(l.Filter), Before: l.Before, Limit: l.Limit}
			c.Tuples = []*spec.Tuple{}
			c.Stopped = jc.Stopped
			for _, t := range jc.Tuples {
				c.Tuples = append(c.Tuples, t.spec())
			}
		case MethodDeleteThread:
		case MethodDeltaHistory:
			c.Channels = jc.Channels
			if jc.Histories != nil {
				hs, err := fromJSONHistories(jc.Histories)
				if err != nil {
					return nil, fmt.Errorf("trace: call %d: %w", i, err)
				}
				c.Histories = hs
			}
		case MethodNextVersion:
			if jc.Current == nil || jc.Version == "" {
				return nil, fmt.Errorf("trace: call %d: NextVersion without its current or minted version", i)
			}
			c.Current, c.Version = spec.Version(*jc.Current), spec.Version(jc.Version)
		default:
			return nil, fmt.Errorf("trace: call %d: unknown method %q", i, jc.Method)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// fromJSON converts a decoded JSON value to the plain-value model:
// json.Number becomes int64 when integral, else float64.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	case map[string]any:
		if v, ok, err := fromTag(x); ok && err == nil {
			return v
		}
		return fromJSONMap(x)
	}
	return v
}

func fromJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = fromJSON(v)
	}
	return out
}

var (
	uuidPattern    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hex32Pattern   = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)

// Normalize rewrites a JSON trace so that runs of the same scenario
// compare equal: UUIDs (checkpoint and task IDs, also inside namespaces),
// 32-hex interrupt IDs and channel versions become tokens numbered by first
// appearance, checkpoint timestamps and error messages constants. The null
// task ID is kept.
func Normalize(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("trace: normalize: %w", err)
	}
	tok := map[string]string{}
	counts := map[string]int{}
	token := func(kind, s string) string {
		if t, ok := tok[kind+s]; ok {
			return t
		}
		counts[kind]++
		t := fmt.Sprintf("<%s%d>", kind, counts[kind])
		tok[kind+s] = t
		return t
	}
	var norm func(s string) string
	norm = func(s string) string {
		if versionPattern.MatchString(s) {
			return token("v", s)
		}
		s = uuidPattern.ReplaceAllStringFunc(s, func(m string) string {
			if m == spec.NullTaskID {
				return m
			}
			return token("id", m)
		})
		return hex32Pattern.ReplaceAllStringFunc(s, func(m string) string { return token("int", m) })
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case string:
			switch key {
			case "ts":
				return "<ts>"
			case "error":
				return "<error>" // adapter-specific wording
			}
			return norm(x)
		case []any:
			for i, e := range x {
				x[i] = walk(e, "")
			}
			return x
		case map[string]any:
			out := make(map[string]any, len(x))
			for _, k := range slices.Sorted(maps.Keys(x)) { // keys in a fixed order, so tokens are stable
				out[norm(k)] = walk(x[k], k)
			}
			return out
		}
		return v
	}
	doc = walk(doc, "")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(buf.String()) + "\n"), nil
}
