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

// Normalize converts v to the plain-value model that every saver stores and
// returns: nil, bool, int64, float64, string, []byte, []any and
// map[string]any, recursively. Other Go integers, unsigned integers that fit
// in int64, float32, and slices, arrays and string-keyed maps of convertible
// elements are converted. A nil slice or map becomes an empty one of the
// model type. Anything else (structs, pointers, channels, funcs, maps with
// non-string keys, unsigned values above math.MaxInt64) is rejected with an
// error that wraps [ErrUnsupportedValue] and names the path to the bad value.
//
// The result never shares mutable memory with v.
func Normalize(v any) (any, error) {
	return normalize(v, "$", false)
}

// NormalizeMetadata returns a normalised copy of md as Put stores it: values
// follow the JSON subset of the plain-value model (no []byte, no NaN or
// infinities, valid UTF-8 strings and keys), and NUL characters are removed
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
	out := make(Metadata, len(md))
	for k, v := range md {
		path := "$[" + strconv.Quote(k) + "]"
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("metadata key %s is not valid UTF-8: %w", path, ErrUnsupportedValue)
		}
		nv, err := normalize(v, path, true)
		if err != nil {
			return nil, err
		}
		out[k] = nv
	}
	return out, nil
}

func unsupported(path string, v any, why string) error {
	if why == "" {
		why = fmt.Sprintf("type %T", v)
	}
	return fmt.Errorf("value at %s: %s: %w", path, why, ErrUnsupportedValue)
}

func normalize(v any, path string, jsonOnly bool) (any, error) {
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
		if jsonOnly && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return nil, unsupported(path, v, "NaN and infinities are not allowed in metadata")
		}
		return x, nil
	case string:
		if jsonOnly && !utf8.ValidString(x) {
			return nil, unsupported(path, v, "string is not valid UTF-8")
		}
		return x, nil
	case []byte:
		if jsonOnly {
			return nil, unsupported(path, v, "byte slices are not allowed in metadata")
		}
		return append([]byte{}, x...), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ne, err := normalize(e, path+"["+strconv.Itoa(i)+"]", jsonOnly)
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := path + "[" + strconv.Quote(k) + "]"
			if jsonOnly && !utf8.ValidString(k) {
				return nil, unsupported(p, v, "key is not valid UTF-8")
			}
			ne, err := normalize(e, p, jsonOnly)
			if err != nil {
				return nil, err
			}
			out[k] = ne
		}
		return out, nil
	}
	return normalizeReflect(v, path, jsonOnly)
}

func normalizeReflect(v any, path string, jsonOnly bool) (any, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return nil, unsupported(path, v, "unsigned integer "+strconv.FormatUint(u, 10)+" overflows int64")
		}
		return int64(u), nil
	case reflect.Float32, reflect.Float64:
		return normalize(rv.Float(), path, jsonOnly)
	case reflect.String:
		return normalize(rv.String(), path, jsonOnly)
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return normalize(b, path, jsonOnly)
		}
		out := make([]any, rv.Len())
		for i := range out {
			ne, err := normalize(rv.Index(i).Interface(), path+"["+strconv.Itoa(i)+"]", jsonOnly)
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, unsupported(path, v, fmt.Sprintf("map key type %s is not a string", rv.Type().Key()))
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return normalize(m, path, jsonOnly)
	}
	return nil, unsupported(path, v, "")
}

// Equal reports whether two normalised values are equal under the contract's
// JSON-value equality: numbers compare by value (int64 1 equals float64 1.0),
// booleans are not numbers, strings and byte slices compare exactly, lists
// element by element in order, and maps as wholes regardless of key order.
// NaN equals nothing.
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
