package repro

import (
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// lang writes plain values as literals of one language.
type lang struct {
	null, yes, no string
	bytes         func(b []byte) string
	float         func(f float64) string
	int           func(n int64) string
	// version writes a channel version as the saver's runtime expects it.
	version func(v spec.Version) string
	// snapshot wraps a written value in the runtime's delta snapshot type
	// (spec.DeltaSnapshot).
	snapshot string
	// noVersion is what get_next_version / getNextVersion takes for no
	// current version.
	noVersion string
	// minted names the variables holding the versions a snippet's
	// NextVersion calls minted (see withMinted).
	minted map[spec.Version]string
}

// withMinted returns l writing each version that a NextVersion call of
// calls minted as the variable the snippet keeps it in ("v1", "v2", ...
// in the order minted), so that the snippet puts and expects the versions
// its own saver minted, as an engine would, and not the reference's.
func (l lang) withMinted(calls []trace.Call) lang {
	l.minted = nil
	for _, c := range calls {
		if c.Method != trace.MethodNextVersion {
			continue
		}
		if l.minted == nil {
			l.minted = map[spec.Version]string{}
		}
		if _, ok := l.minted[c.Version]; !ok {
			l.minted[c.Version] = fmt.Sprintf("v%d", len(l.minted)+1)
		}
	}
	return l
}

// versionLit writes v: the variable holding it when the snippet minted
// it, else a literal.
func (l lang) versionLit(v spec.Version) string {
	if name, ok := l.minted[v]; ok {
		return name
	}
	return l.version(v)
}

// currentLit writes NextVersion's argument v: no version ("") is the
// runtime's noVersion.
func (l lang) currentLit(v spec.Version) string {
	if v == "" {
		return l.noVersion
	}
	return l.versionLit(v)
}

var python = lang{
	null: "None", yes: "True", no: "False",
	bytes: func(b []byte) string { return fmt.Sprintf("bytes.fromhex(%q)", hex.EncodeToString(b)) },
	float: func(f float64) string {
		switch {
		case math.IsNaN(f):
			return `float("nan")`
		case math.IsInf(f, 1):
			return `float("inf")`
		case math.IsInf(f, -1):
			return `float("-inf")`
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".en") {
			s += ".0"
		}
		return s
	},
	int:       func(n int64) string { return strconv.FormatInt(n, 10) },
	version:   func(v spec.Version) string { return strconv.Quote(string(v)) },
	snapshot:  "_DeltaSnapshot(%s)",
	noVersion: "None",
}

// decimal is a version LangGraph.js's bridge server passes as a number.
var decimal = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,14})$`)

var javascript = lang{
	null: "null", yes: "true", no: "false",
	bytes: func(b []byte) string {
		parts := make([]string, len(b))
		for i, c := range b {
			parts[i] = strconv.Itoa(int(c))
		}
		return "new Uint8Array([" + strings.Join(parts, ", ") + "])"
	},
	float: func(f float64) string {
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		case f == 0 && math.Signbit(f):
			return "-0"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	},
	int: func(n int64) string {
		if n > 1<<53 || n < -(1<<53) {
			return strconv.FormatInt(n, 10) + "n"
		}
		return strconv.FormatInt(n, 10)
	},
	version: func(v spec.Version) string {
		if decimal.MatchString(string(v)) {
			return string(v)
		}
		return strconv.Quote(string(v))
	},
	snapshot:  "new DeltaSnapshot(%s)",
	noVersion: "undefined",
}

// value writes a plain value (spec's value model) as a literal.
func (l lang) value(v any) string {
	switch x := v.(type) {
	case nil:
		return l.null
	case bool:
		if x {
			return l.yes
		}
		return l.no
	case string:
		return strconv.Quote(x)
	case []byte:
		return l.bytes(x)
	case float64:
		return l.float(x)
	case float32:
		return l.float(float64(x))
	case int64:
		return l.int(x)
	case int:
		return l.int(int64(x))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = l.value(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return l.object(x, l.value)
	case spec.Metadata:
		return l.object(map[string]any(x), l.value)
	case spec.DeltaSnapshot:
		return fmt.Sprintf(l.snapshot, l.value(x.Value))
	}
	if n, err := spec.Normalize(v); err == nil && fmt.Sprintf("%T", n) != fmt.Sprintf("%T", v) {
		return l.value(n)
	}
	return strconv.Quote(fmt.Sprint(v))
}

// object writes a map with sorted keys, each value written by f.
func (l lang) object(m map[string]any, f func(any) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Quote(k) + ": " + f(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (l lang) versions(vs spec.Versions) string {
	m := make(map[string]any, len(vs))
	for k, v := range vs {
		m[k] = v
	}
	return l.object(m, func(v any) string { return l.versionLit(v.(spec.Version)) })
}

// checkpoint writes a checkpoint as LangGraph's dict / object.
func (l lang) checkpoint(cp *spec.Checkpoint) string {
	return fmt.Sprintf(`{"v": %d, "id": %q, "ts": %q, "channel_values": %s, "channel_versions": %s, "versions_seen": %s, "updated_channels": %s}`,
		cp.V, cp.ID, cp.TS, l.value(anyMap(cp.ChannelValues)), l.versions(cp.ChannelVersions),
		l.versionsSeen(cp.VersionsSeen), l.strings(cp.UpdatedChannels))
}

func (l lang) versionsSeen(vs map[string]spec.Versions) string {
	seen := make(map[string]any, len(vs))
	for k, v := range vs {
		seen[k] = v
	}
	return l.object(seen, func(v any) string { return l.versions(v.(spec.Versions)) })
}

// strings writes a list of strings; nil is null.
func (l lang) strings(ss []string) string {
	if ss == nil {
		return l.null
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = quote(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// tuple writes a fixed-length sequence: a Python tuple, a JS array.
func (l lang) tuple(parts ...string) string {
	if l.null == "None" {
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func quote(s string) string { return strconv.Quote(s) }

// config writes a config as {"configurable": {...}}, without an empty
// checkpoint ID (as the bridge servers pass it).
func (l lang) config(c spec.Config) string {
	s := fmt.Sprintf(`{"configurable": {"thread_id": %q, "checkpoint_ns": %q`, c.ThreadID, c.Namespace)
	if c.CheckpointID != "" {
		s += fmt.Sprintf(`, "checkpoint_id": %q`, c.CheckpointID)
	}
	return s + "}}"
}

func anyMap[M ~map[string]any](m M) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return map[string]any(m)
}
