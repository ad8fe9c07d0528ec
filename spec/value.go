package spec

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxValueDepth is how deeply lists and maps may nest in a value that
// [Normalize] accepts: a list, map or [DeltaSnapshot] is one level, a
// scalar none, so []any{[]any{1}} and DeltaSnapshot{[]any{1}} have depth 2. Metadata counts as a map itself, so its
// values may nest one level less. The limit is MongoDB's BSON nesting limit,
// the smallest among the backends; MessagePack and PostgreSQL's jsonb accept
// deeper values, so every adapter accepts and rejects the same ones.
const MaxValueDepth = 100

// Normalize converts v to the plain-value model that every saver stores and
// returns: nil, bool, int64, float64, string, []byte, []any and
// map[string]any, recursively, and [DeltaSnapshot], whose Value is
// normalised the same way and counts as one level of nesting. Other Go
// integers, unsigned integers that fit
// in int64, float32, and slices, arrays and string-keyed maps of convertible
// elements are converted. A nil slice or map becomes an empty one of the
// model type. No other type becomes a DeltaSnapshot. Anything else
// (other structs, pointers, channels, funcs, maps with
// non-string keys, unsigned values above math.MaxInt64), a list or map that
// contains itself, and lists and maps nested deeper than [MaxValueDepth]
// are rejected with an error that wraps [ErrUnsupportedValue] and names the
// path to the bad value. Rejection is fast: a value that contains itself
// fails at the first repetition, whatever its fan-out.
//
// The result never shares mutable memory with v.
func Normalize(v any) (any, error) {
	var n normalizer
	out, err := n.value(v, 0)
	if err != nil {
		return nil, err.toError()
	}
	return out, nil
}

// NormalizeMetadata returns a normalised copy of md as Put stores it: values
// follow the JSON subset of the plain-value model (no []byte, no
// [DeltaSnapshot], no NaN or infinities, valid UTF-8 strings and keys), and NUL characters are removed
// from top-level string values. A nil md yields an empty Metadata.
func NormalizeMetadata(md Metadata) (Metadata, error) {
	out, err := normalizeJSONMap(md)
	if err != nil {
		return nil, err
	}
	for k, v := range out {
		if s, ok := v.(string); ok && strings.IndexByte(s, 0) >= 0 {
			out[k] = strings.ReplaceAll(s, "\x00", "")
		}
	}
	return out, nil
}

// NormalizeFilter returns a normalised copy of a list filter. It follows the
// same model as [NormalizeMetadata] but keeps NUL characters.
func NormalizeFilter(f Metadata) (Metadata, error) {
	return normalizeJSONMap(f)
}

func normalizeJSONMap(md Metadata) (Metadata, error) {
	n := normalizer{jsonOnly: true}
	out, err := n.mapOf(md, md, 0)
	if err != nil {
		return nil, err.toError()
	}
	return out, nil
}

// valueError is a rejected value: why, and the path to it, built while the
// recursion unwinds (segs is innermost first), so that accepted values cost
// no path strings at all.
type valueError struct {
	segs []string
	why  string
}

func (e *valueError) at(seg string) *valueError {
	e.segs = append(e.segs, seg)
	return e
}

func (e *valueError) path() string {
	var b strings.Builder
	b.WriteByte('$')
	for i := len(e.segs) - 1; i >= 0; i-- {
		b.WriteString(e.segs[i])
	}
	return b.String()
}

func (e *valueError) toError() error {
	return fmt.Errorf("value at %s: %s: %w", e.path(), e.why, ErrUnsupportedValue)
}

func reject(v any, why string) *valueError {
	if why == "" {
		why = fmt.Sprintf("type %T", v)
	}
	return &valueError{why: why}
}

func indexSeg(i int) string  { return "[" + strconv.Itoa(i) + "]" }
func keySeg(k string) string { return "[" + strconv.Quote(k) + "]" }

// normalizer walks one value. open holds the non-empty lists and maps on
// the path from the root to the current one, to recognise a value that
// contains itself.
type normalizer struct {
	jsonOnly bool
	open     []openContainer
}

// openContainer identifies a list or map being walked: its data pointer
// and, for a slice, its length (two slices of one array with the same
// start and length hold the same elements).
type openContainer struct {
	ptr uintptr
	n   int
}

// enter checks that a container of the given depth (counting from 1) may be
// walked and records it as open; leave undoes it.
func (n *normalizer) enter(rv reflect.Value, depth int) *valueError {
	if depth > MaxValueDepth {
		return reject(nil, "lists and maps nested deeper than "+strconv.Itoa(MaxValueDepth)+" levels")
	}
	if rv.Len() == 0 {
		return nil // holds nothing, so cannot hold itself
	}
	c := openContainer{ptr: rv.Pointer()}
	if rv.Kind() == reflect.Slice {
		c.n = rv.Len()
	}
	for _, o := range n.open {
		if o == c {
			return reject(nil, "the value contains itself")
		}
	}
	n.open = append(n.open, c)
	return nil
}

func (n *normalizer) leave(rv reflect.Value) {
	if rv.Len() > 0 {
		n.open = n.open[:len(n.open)-1]
	}
}

// value normalises v found at the given depth (the number of lists and
// maps around it).
func (n *normalizer) value(v any, depth int) (any, *valueError) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return x, nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if n.jsonOnly && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return nil, reject(v, "NaN and infinities are not allowed in metadata")
		}
		return x, nil
	case string:
		if n.jsonOnly && !utf8.ValidString(x) {
			return nil, reject(v, "string is not valid UTF-8")
		}
		return x, nil
	case []byte:
		if n.jsonOnly {
			return nil, reject(v, "byte slices are not allowed in metadata")
		}
		return append([]byte{}, x...), nil
	case []any:
		return n.list(v, x, depth)
	case map[string]any:
		return n.mapOf(v, x, depth)
	case Metadata:
		return n.mapOf(v, x, depth)
	case DeltaSnapshot:
		return n.snapshot(x, depth)
	}
	return n.reflectValue(v, depth)
}

// snapshot normalises a delta snapshot: its value one level deeper.
func (n *normalizer) snapshot(x DeltaSnapshot, depth int) (any, *valueError) {
	if n.jsonOnly {
		return nil, reject(x, "delta snapshots are not allowed in metadata")
	}
	if depth+1 > MaxValueDepth {
		return nil, reject(nil, "lists and maps nested deeper than "+strconv.Itoa(MaxValueDepth)+" levels")
	}
	inner, err := n.value(x.Value, depth+1)
	if err != nil {
		return nil, err.at(".Value")
	}
	return DeltaSnapshot{Value: inner}, nil
}

func (n *normalizer) list(v any, x []any, depth int) (any, *valueError) {
	rv := reflect.ValueOf(v)
	if err := n.enter(rv, depth+1); err != nil {
		return nil, err
	}
	defer n.leave(rv)
	out := make([]any, len(x))
	for i, e := range x {
		ne, err := n.value(e, depth+1)
		if err != nil {
			return nil, err.at(indexSeg(i))
		}
		out[i] = ne
	}
	return out, nil
}

// mapOf normalises a map[string]any (or Metadata); v is x as an interface.
func (n *normalizer) mapOf(v any, x map[string]any, depth int) (map[string]any, *valueError) {
	rv := reflect.ValueOf(v)
	if err := n.enter(rv, depth+1); err != nil {
		return nil, err
	}
	defer n.leave(rv)
	out := make(map[string]any, len(x))
	for k, e := range x {
		if n.jsonOnly && !utf8.ValidString(k) {
			why := "key is not valid UTF-8"
			if depth == 0 {
				why = "metadata key is not valid UTF-8"
			}
			return nil, reject(v, why).at(keySeg(k))
		}
		ne, err := n.value(e, depth+1)
		if err != nil {
			return nil, err.at(keySeg(k))
		}
		out[k] = ne
	}
	return out, nil
}

func (n *normalizer) reflectValue(v any, depth int) (any, *valueError) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return nil, reject(v, "unsigned integer "+strconv.FormatUint(u, 10)+" overflows int64")
		}
		return int64(u), nil
	case reflect.Float32, reflect.Float64:
		return n.value(rv.Float(), depth)
	case reflect.String:
		return n.value(rv.String(), depth)
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return n.value(b, depth)
		}
		if rv.Kind() == reflect.Slice {
			if err := n.enter(rv, depth+1); err != nil {
				return nil, err
			}
			defer n.leave(rv)
		} else if depth+1 > MaxValueDepth {
			return nil, reject(nil, "lists and maps nested deeper than "+strconv.Itoa(MaxValueDepth)+" levels")
		}
		out := make([]any, rv.Len())
		for i := range out {
			ne, err := n.value(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err.at(indexSeg(i))
			}
			out[i] = ne
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, reject(v, fmt.Sprintf("map key type %s is not a string", rv.Type().Key()))
		}
		if err := n.enter(rv, depth+1); err != nil {
			return nil, err
		}
		defer n.leave(rv)
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			if n.jsonOnly && !utf8.ValidString(k) {
				return nil, reject(v, "key is not valid UTF-8").at(keySeg(k))
			}
			ne, err := n.value(it.Value().Interface(), depth+1)
			if err != nil {
				return nil, err.at(keySeg(k))
			}
			out[k] = ne
		}
		return out, nil
	}
	return nil, reject(v, "")
}

// Equal reports whether two normalised values are equal under the contract's
// JSON-value equality: numbers compare by value (int64 1 equals float64 1.0),
// booleans are not numbers, strings and byte slices compare exactly, lists
// element by element in order, maps as wholes regardless of key order, and
// a [DeltaSnapshot] equals only a DeltaSnapshot whose Value is Equal (never
// its bare Value). NaN equals nothing.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64, float64:
		return numbersEqual(a, b)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case DeltaSnapshot:
		y, ok := b.(DeltaSnapshot)
		return ok && Equal(x.Value, y.Value)
	}
	return false
}

func numbersEqual(a, b any) bool {
	fa, ok := toBigFloat(a)
	if !ok {
		return false
	}
	fb, ok := toBigFloat(b)
	if !ok {
		return false
	}
	return fa.Cmp(fb) == 0
}

func toBigFloat(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Float).SetInt64(x), true
	case float64:
		if math.IsNaN(x) {
			return nil, false
		}
		return new(big.Float).SetFloat64(x), true
	}
	return nil, false
}

// MatchFilter reports whether metadata md matches filter: every filter key
// must be present in md as a literal top-level key (a dot is part of the key,
// never a path) with a value [Equal] to the filter's. A nil filter value
// matches only a key that is present with a null value. An empty filter
// matches everything. Both arguments must be normalised.
func MatchFilter(md, filter Metadata) bool {
	for k, want := range filter {
		got, ok := md[k]
		if !ok || !Equal(got, want) {
			return false
		}
	}
	return true
}
