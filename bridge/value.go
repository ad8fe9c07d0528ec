package bridge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/checkpointkit/checkpointkit/spec"
)

// This file is the typed value encoding of PROTOCOL.md ("Values"): plain
// JSON for nil, booleans, strings, lists and maps, bare numbers for
// integers within ±(2^53−1) and for floats with a fractional part, and
// single-key tag objects ($int, $float, $bytes, $map, $delta) for
// everything JSON would lose.

// maxSafeInt is the largest integer every JSON reader holds exactly
// (2^53−1, JavaScript's Number.MAX_SAFE_INTEGER).
const maxSafeInt = 1<<53 - 1

// Value tags.
const (
	tagInt   = "$int"
	tagFloat = "$float"
	tagBytes = "$bytes"
	tagMap   = "$map"
	tagDelta = "$delta"
)

// maxWireDepth is how deeply the protocol nests lists and maps in one value
// (PROTOCOL.md, "Values"): far beyond the contract's spec.MaxValueDepth, so
// that the saver, not the bridge, judges SPEC.md VALUE-10, and shallow
// enough for every reader's recursion. A self-containing value reaches it
// too.
const maxWireDepth = 256

// appendValue appends the canonical typed encoding of v (PROTOCOL.md,
// "Values" and "Canonical form"). Values outside the plain-value model are
// converted with spec.Normalize first. What the protocol cannot carry — a
// type Normalize rejects, a string or key that is not valid UTF-8, a value
// nested deeper than maxWireDepth or containing itself — gives an error
// wrapping ErrNotCarried: the saver behind the bridge never sees it, so it
// is not the saver's refusal (SPEC.md VALUE-9 and VALUE-10 are the saver's
// to judge).
func appendValue(b []byte, v any) ([]byte, error) { return appendNested(b, v, 0) }

// appendNested is appendValue for a value inside depth lists and maps.
func appendNested(b []byte, v any, depth int) ([]byte, error) {
	switch v.(type) {
	case []any, map[string]any, spec.Metadata, spec.DeltaSnapshot:
		if depth >= maxWireDepth {
			return b, notCarried("a value nested deeper than %d levels, or containing itself", maxWireDepth)
		}
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return appendInt(b, x), nil
	case int:
		return appendInt(b, int64(x)), nil
	case float64:
		return appendFloat(b, x), nil
	case string:
		if !utf8.ValidString(x) {
			return b, notCarried("string %q is not valid UTF-8", x)
		}
		return appendString(b, x), nil
	case []byte:
		b = append(b, `{"`+tagBytes+`":"`...)
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, `"}`...), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendNested(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return appendMap(b, x, depth)
	case spec.Metadata:
		return appendMap(b, x, depth)
	case spec.DeltaSnapshot:
		return appendDelta(b, x, depth)
	}
	n, err := spec.Normalize(v)
	if err != nil {
		return b, notCarried("%v", err)
	}
	return appendNested(b, n, depth)
}

func appendInt(b []byte, x int64) []byte {
	if x >= -maxSafeInt && x <= maxSafeInt {
		return strconv.AppendInt(b, x, 10)
	}
	b = append(b, `{"`+tagInt+`":"`...)
	b = strconv.AppendInt(b, x, 10)
	return append(b, `"}`...)
}

func appendFloat(b []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(b, `{"`+tagFloat+`":"NaN"}`...)
	case math.IsInf(x, 1):
		return append(b, `{"`+tagFloat+`":"Infinity"}`...)
	case math.IsInf(x, -1):
		return append(b, `{"`+tagFloat+`":"-Infinity"}`...)
	case x == math.Trunc(x): // integral, -0 included
		b = append(b, `{"`+tagFloat+`":"`...)
		b = appendNumber(b, x)
		return append(b, `"}`...)
	}
	// A fractional value always prints with a '.' or an exponent, so that
	// it reads back as a float.
	return appendNumber(b, x)
}

// appendNumber appends a finite float as ECMAScript's Number::toString
// spells it (PROTOCOL.md, "Canonical form"): the shortest digits that read
// back as x, positional when the decimal exponent n (x = 0.d1…dk × 10^n)
// is within -6 < n <= 21, otherwise d1[.d2…dk]e±(n-1). -0 is "-0".
func appendNumber(b []byte, x float64) []byte {
	if x == 0 {
		if math.Signbit(x) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	if x < 0 {
		b = append(b, '-')
		x = -x
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], x, 'e', -1, 64) // d[.ddd]e±XX
	mant, exp, _ := strings.Cut(string(e), "e")
	digits := strings.Replace(mant, ".", "", 1)
	k := len(digits)
	p, _ := strconv.Atoi(exp)
	n := p + 1
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, "0."...)
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// appendMap appends a map of values, wrapped in $map when its only key
// starts with '$' so that it does not read as a tag.
func appendMap(b []byte, m map[string]any, depth int) ([]byte, error) {
	wrap := false
	if len(m) == 1 {
		for k := range m {
			wrap = strings.HasPrefix(k, "$")
		}
	}
	if wrap {
		b = append(b, `{"`+tagMap+`":`...)
	}
	b, err := appendFields(b, m, depth+1)
	if err != nil {
		return b, err
	}
	if wrap {
		b = append(b, '}')
	}
	return b, nil
}

// appendObject appends m as a JSON object whose values are typed values.
// The object itself is never wrapped: it is a shape (channel values,
// metadata, a filter) or the inside of $map.
func appendObject(b []byte, m map[string]any) ([]byte, error) { return appendFields(b, m, 0) }

// appendFields is appendObject for an object whose values are inside depth
// lists and maps. Members are written in ascending order of their keys'
// bytes, which is Unicode code point order (PROTOCOL.md, "Canonical form").
func appendFields(b []byte, m map[string]any, depth int) ([]byte, error) {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if !utf8.ValidString(k) {
			return b, notCarried("key %q is not valid UTF-8", k)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendNested(b, m[k], depth); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// sortedKeys returns the keys of m in ascending byte order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// appendString appends s as a canonical JSON string (PROTOCOL.md,
// "Canonical form"): `"` and `\` escaped, \b \t \n \f \r, other control
// characters as \u00xx, U+2028 and U+2029 escaped, everything else as
// itself. Invalid UTF-8 is replaced by U+FFFD; callers that must not lose
// bytes check utf8.ValidString first.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' { // valid JSON, but not in every line-oriented reader
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// errBadValue reports a value whose JSON is malformed for the typed
// encoding: an unknown tag, or a tag with a payload of the wrong kind.
func errBadValue(format string, a ...any) error {
	return badRequest("bad value: %s", fmt.Sprintf(format, a...))
}

// decodeValue decodes one typed value.
func decodeValue(data []byte) (any, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, errBadValue("%v", err)
	}
	return fromTree(v)
}

// fromTree converts a generic JSON tree (numbers as json.Number) into
// plain values, in place.
func fromTree(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return decodeNumber(string(x))
	case []any:
		for i, e := range x {
			d, err := fromTree(e)
			if err != nil {
				return nil, err
			}
			x[i] = d
		}
		return x, nil
	case map[string]any:
		if len(x) == 1 {
			for k, e := range x {
				if strings.HasPrefix(k, "$") {
					return fromTag(k, e)
				}
			}
		}
		return objectFromTree(x)
	}
	return nil, errBadValue("unexpected %T", v)
}

func objectFromTree(m map[string]any) (map[string]any, error) {
	for k, e := range m {
		d, err := fromTree(e)
		if err != nil {
			return nil, err
		}
		m[k] = d
	}
	return m, nil
}

// decodeNumber reads a bare JSON number: with a fraction or an exponent it
// is a float, without one an integer. An integer literal beyond int64 can
// only have been meant as a number (JavaScript writes 2**64 that way), so
// it reads as the nearest float.
func decodeNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return i, nil
		}
		if !errors.Is(err, strconv.ErrRange) {
			return nil, errBadValue("number %s: %v", s, err)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // ±Inf on overflow is the value JSON meant
		return nil, errBadValue("number %s: %v", s, err)
	}
	return f, nil
}

func fromTag(tag string, payload any) (any, error) {
	if tag == tagMap {
		m, ok := payload.(map[string]any)
		if !ok {
			return nil, errBadValue("%s wants an object, got %s", tag, kindOf(payload))
		}
		return objectFromTree(m)
	}
	if tag == tagDelta {
		return deltaFromTree(payload)
	}
	s, ok := payload.(string)
	if !ok {
		if tag == tagInt || tag == tagFloat || tag == tagBytes {
			return nil, errBadValue("%s wants a string, got %s", tag, kindOf(payload))
		}
		return nil, errBadValue("unknown tag %q (a map whose only key starts with '$' must be wrapped in $map)", tag)
	}
	switch tag {
	case tagInt:
		if !isDecimalInt(s) {
			return nil, errBadValue("%s %q is not a decimal integer", tag, s)
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if errors.Is(err, strconv.ErrRange) { // no encoder writes one: the model's integers are int64
			return nil, errBadValue("%s %s is outside int64", tag, s)
		}
		if err != nil {
			return nil, errBadValue("%s %q is not a decimal integer", tag, s)
		}
		return i, nil
	case tagFloat:
		f, err := parseFloatTag(s)
		if err != nil {
			return nil, errBadValue("%s %q is not a number", tag, s)
		}
		return f, nil
	case tagBytes:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, errBadValue("%s is not padded standard base64: %v", tag, err)
		}
		return b, nil
	}
	return nil, errBadValue("unknown tag %q (a map whose only key starts with '$' must be wrapped in $map)", tag)
}

func parseFloatTag(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if !isDecimalFloat(s) {
		return 0, fmt.Errorf("not a decimal number")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return f, nil
}

// isDecimalInt reports whether s is an $int payload: -?[0-9]+.
func isDecimalInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && digitsEnd(s, 0) == len(s)
}

// isDecimalFloat reports whether s is a decimal $float payload:
// -?(D+(.D*)?|.D+)([eE][-+]?D+)? with D a decimal digit. Go's ParseFloat
// reads more (hex, "inf", a leading '+', underscores), which the protocol
// does not allow.
func isDecimalFloat(s string) bool {
	s = strings.TrimPrefix(s, "-")
	i := digitsEnd(s, 0)
	intDigits := i
	if i < len(s) && s[i] == '.' {
		j := digitsEnd(s, i+1)
		if intDigits == 0 && j == i+1 {
			return false
		}
		i = j
	} else if intDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsEnd(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// digitsEnd returns the index of the first non-digit of s at or after i.
func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
