package bridge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/checkpointkit/checkpointkit/spec"
)

// This file encodes and decodes the shapes of PROTOCOL.md ("Shapes"):
// config, versions, checkpoint, tuple. Encoders append JSON; decoders read
// the trees of decodeJSON and resolve the typed values in them.

// The encoders write every object's members in ascending key order, the
// canonical form of PROTOCOL.md: the shapes' members are spelled out in
// that order, and maps are sorted.

func appendConfig(b []byte, c spec.Config) []byte {
	b = append(b, `{"checkpoint_id":`...)
	b = appendString(b, c.CheckpointID)
	b = append(b, `,"checkpoint_ns":`...)
	b = appendString(b, c.Namespace)
	b = append(b, `,"thread_id":`...)
	b = appendString(b, c.ThreadID)
	return append(b, '}')
}

// appendVersions appends versions as an object of strings; nil is {}.
func appendVersions(b []byte, vs spec.Versions) []byte {
	b = append(b, '{')
	for i, ch := range sortedKeys(vs) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, ch)
		b = append(b, ':')
		b = appendString(b, string(vs[ch]))
	}
	return append(b, '}')
}

// appendStrings appends a list of strings; nil is null when nullable, []
// otherwise.
func appendStrings(b []byte, ss []string, nullable bool) []byte {
	if ss == nil && nullable {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendCheckpoint(b []byte, cp spec.Checkpoint) ([]byte, error) {
	b = append(b, `{"channel_values":`...)
	b, err := appendObject(b, cp.ChannelValues)
	if err != nil {
		return b, err
	}
	b = append(b, `,"channel_versions":`...)
	b = appendVersions(b, cp.ChannelVersions)
	b = append(b, `,"id":`...)
	b = appendString(b, cp.ID)
	b = append(b, `,"ts":`...)
	if utf8.ValidString(cp.TS) {
		b = appendString(b, cp.TS)
	} else {
		// JSON strings hold UTF-8 only; a timestamp is data kept byte for
		// byte (SPEC.md ERR-9), so other bytes travel as $bytes.
		b, _ = appendValue(b, []byte(cp.TS))
	}
	b = append(b, `,"updated_channels":`...)
	b = appendStrings(b, cp.UpdatedChannels, true)
	b = append(b, `,"v":`...)
	b = strconv.AppendInt(b, int64(cp.V), 10)
	b = append(b, `,"versions_seen":{`...)
	for i, node := range sortedKeys(cp.VersionsSeen) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, node)
		b = append(b, ':')
		b = appendVersions(b, cp.VersionsSeen[node])
	}
	return append(b, "}}"...), nil
}

// appendTuple appends a tuple; nil pending writes are written as [], the
// shape's array.
func appendTuple(b []byte, t *spec.Tuple) ([]byte, error) {
	b = append(b, `{"checkpoint":`...)
	b, err := appendCheckpoint(b, t.Checkpoint)
	if err != nil {
		return b, err
	}
	b = append(b, `,"config":`...)
	b = appendConfig(b, t.Config)
	b = append(b, `,"metadata":`...)
	if b, err = appendObject(b, t.Metadata); err != nil {
		return b, err
	}
	b = append(b, `,"parent_config":`...)
	if t.Parent != nil {
		b = appendConfig(b, *t.Parent)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"pending_writes":[`...)
	for i, pw := range t.PendingWrites {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, pw.TaskID)
		b = append(b, ',')
		b = appendString(b, pw.Channel)
		b = append(b, ',')
		if b, err = appendValue(b, pw.Value); err != nil {
			return b, err
		}
		b = append(b, ']')
	}
	return append(b, "]}"...), nil
}

// objectOf returns v as an object; null is a nil map.
func objectOf(v any, what string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("%s must be an object, not %s", what, kindOf(v))
	}
	return m, nil
}

// stringOf returns v as a string; null is "".
func stringOf(v any, what string) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badRequest("%s must be a string, not %s", what, kindOf(v))
	}
	return s, nil
}

// intOf returns v as an integer; null is 0.
func intOf(v any, what string) (int64, error) {
	if v == nil {
		return 0, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, badRequest("%s must be an integer, not %s", what, kindOf(v))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, badRequest("%s must be an integer, not %s", what, n)
	}
	return i, nil
}

// stringsOf returns v as a list of strings; null is nil.
func stringsOf(v any, what string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest("%s must be an array of strings, not %s", what, kindOf(v))
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, badRequest("%s must be an array of strings, not hold %s", what, kindOf(e))
		}
		out[i] = s
	}
	return out, nil
}

// valuesOf returns an object of typed values (channel values, metadata, a
// filter) with its values resolved; null is a nil map.
func valuesOf(v any, what string) (map[string]any, error) {
	m, err := objectOf(v, what)
	if err != nil || m == nil {
		return nil, err
	}
	return objectFromTree(m)
}

// configOf returns a config; missing members are "".
func configOf(v any, what string) (spec.Config, error) {
	m, err := objectOf(v, what)
	if err != nil {
		return spec.Config{}, err
	}
	if m == nil {
		return spec.Config{}, badRequest("%s must be an object, not null", what)
	}
	var c spec.Config
	if c.ThreadID, err = stringOf(m["thread_id"], what+".thread_id"); err != nil {
		return c, err
	}
	if c.Namespace, err = stringOf(m["checkpoint_ns"], what+".checkpoint_ns"); err != nil {
		return c, err
	}
	c.CheckpointID, err = stringOf(m["checkpoint_id"], what+".checkpoint_id")
	return c, err
}

// versionsOf returns versions; null is nil.
func versionsOf(v any, what string) (spec.Versions, error) {
	m, err := objectOf(v, what)
	if err != nil || m == nil {
		return nil, err
	}
	vs := make(spec.Versions, len(m))
	for ch, ver := range m {
		s, ok := ver.(string)
		if !ok {
			return nil, badRequest("%s[%q] must be a version string, not %s", what, ch, kindOf(ver))
		}
		vs[ch] = spec.Version(s)
	}
	return vs, nil
}

func checkpointOf(v any) (spec.Checkpoint, error) {
	var cp spec.Checkpoint
	m, err := objectOf(v, "checkpoint")
	if err != nil {
		return cp, err
	}
	if m == nil {
		return cp, badRequest("checkpoint must be an object, not null")
	}
	ver, err := intOf(m["v"], "checkpoint.v")
	if err != nil {
		return cp, err
	}
	cp.V = int(ver)
	if cp.ID, err = stringOf(m["id"], "checkpoint.id"); err != nil {
		return cp, err
	}
	if cp.TS, err = tsOf(m["ts"]); err != nil {
		return cp, err
	}
	// A saver may drop members (PROTOCOL.md, "Shapes"): absent or null
	// channel_values, channel_versions and versions_seen read as empty, an
	// absent updated_channels as nil (unknown).
	if cp.ChannelValues, err = valuesOf(m["channel_values"], "checkpoint.channel_values"); err != nil {
		return cp, err
	}
	if cp.ChannelValues == nil {
		cp.ChannelValues = map[string]any{}
	}
	if cp.ChannelVersions, err = versionsOf(m["channel_versions"], "checkpoint.channel_versions"); err != nil {
		return cp, err
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = spec.Versions{}
	}
	seen, err := objectOf(m["versions_seen"], "checkpoint.versions_seen")
	if err != nil {
		return cp, err
	}
	cp.VersionsSeen = make(map[string]spec.Versions, len(seen))
	for node, vs := range seen {
		if cp.VersionsSeen[node], err = versionsOf(vs, "checkpoint.versions_seen."+node); err != nil {
			return cp, err
		}
		if cp.VersionsSeen[node] == nil {
			cp.VersionsSeen[node] = spec.Versions{}
		}
	}
	cp.UpdatedChannels, err = stringsOf(m["updated_channels"], "checkpoint.updated_channels")
	return cp, err
}

// tupleOf returns a tuple; null is nil.
func tupleOf(v any) (*spec.Tuple, error) {
	m, err := objectOf(v, "tuple")
	if err != nil || m == nil {
		return nil, err
	}
	t := &spec.Tuple{}
	if t.Config, err = configOf(m["config"], "tuple.config"); err != nil {
		return nil, err
	}
	if t.Checkpoint, err = checkpointOf(m["checkpoint"]); err != nil {
		return nil, err
	}
	md, err := valuesOf(m["metadata"], "tuple.metadata")
	if err != nil {
		return nil, err
	}
	t.Metadata = md
	if p := m["parent_config"]; p != nil {
		parent, err := configOf(p, "tuple.parent_config")
		if err != nil {
			return nil, err
		}
		t.Parent = &parent
	}
	if pws := m["pending_writes"]; pws != nil {
		list, ok := pws.([]any)
		if !ok {
			return nil, badRequest("tuple.pending_writes must be an array, not %s", kindOf(pws))
		}
		t.PendingWrites = make([]spec.PendingWrite, len(list))
		for i, e := range list {
			parts, err := partsOf(e, "pending write [task_id, channel, value]", 3)
			if err != nil {
				return nil, err
			}
			t.PendingWrites[i] = spec.PendingWrite{TaskID: parts[0].(string), Channel: parts[1].(string), Value: parts[2]}
		}
	}
	return t, nil
}

// partsOf returns an array of n-1 strings followed by a typed value, the
// value resolved.
func partsOf(v any, what string, n int) ([]any, error) {
	parts, ok := v.([]any)
	if !ok || len(parts) != n {
		return nil, badRequest("a %s must be an array of %d elements", what, n)
	}
	for _, p := range parts[:n-1] {
		if _, ok := p.(string); !ok {
			return nil, badRequest("a %s must start with strings", what)
		}
	}
	var err error
	parts[n-1], err = fromTree(parts[n-1])
	return parts, err
}

// tsOf reads a checkpoint's timestamp: a string, or $bytes for one that is
// not valid UTF-8.
func tsOf(v any) (string, error) {
	if _, ok := v.(map[string]any); !ok {
		return stringOf(v, "checkpoint.ts")
	}
	x, err := fromTree(v)
	if err != nil {
		return "", fmt.Errorf("checkpoint.ts: %w", err)
	}
	b, ok := x.([]byte)
	if !ok {
		return "", badRequest("checkpoint.ts must be a string or $bytes, not %s", kindOf(x))
	}
	return string(b), nil
}
