package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Protocol identity, checked by the client in the hello answer.
const (
	protocolName    = "checkpointkit-bridge"
	protocolVersion = 1
)

// Capabilities a server can advertise in its hello answer.
const (
	capOpen        = "open"
	capCopyThread  = "copy_thread"
	capDeleteRuns  = "delete_for_runs"
	capPrune       = "prune"
	capNextVersion = "next_version"
)

// message is any message, in either direction, as read from the wire.
// Which members are set tells what it is (PROTOCOL.md, "Messages"). params,
// result and item are JSON trees (decodeJSON's), their values not yet
// converted.
type message struct {
	id        int64
	method    string
	saver     string
	timeoutMS *int64
	cancel    bool
	credit    *int64
	params    map[string]any // nil when absent or null
	result    any
	hasResult bool
	item      any
	hasItem   bool
	err       *wireError
}

// wireError is the error member of an answer.
type wireError struct {
	code, message string
}

// badRequest returns an error wrapping ErrBadRequest.
func badRequest(format string, a ...any) error {
	return fmt.Errorf("bridge: %s: %w", fmt.Sprintf(format, a...), ErrBadRequest)
}

// parseMessage decodes one line. When the line is an object with a usable
// id but is malformed otherwise, the returned message carries that id
// along with the error. Id 0 is accepted only on an error answer (a
// server's complaint about a line that named no request).
func parseMessage(line []byte) (*message, error) {
	m := &message{}
	tree, err := decodeJSON(line)
	if err != nil {
		return m, badRequest("malformed message: %v", err)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return m, badRequest("a message must be a JSON object, not %s", kindOf(tree))
	}
	id, present, err := intMember(obj, "id")
	if err != nil || !present || id < 0 || (id == 0 && obj["error"] == nil) {
		return m, badRequest("message without a positive integer id")
	}
	m.id = id
	if m.method, _, err = stringMember(obj, "method"); err != nil {
		return m, err
	}
	if m.saver, _, err = stringMember(obj, "saver"); err != nil {
		return m, err
	}
	if t, ok, err := intMember(obj, "timeout_ms"); err != nil {
		return m, err
	} else if ok {
		m.timeoutMS = &t
	}
	if c, ok := obj["cancel"]; ok && c != nil {
		if m.cancel, ok = c.(bool); !ok {
			return m, badRequest("cancel must be a boolean")
		}
	}
	if c, ok, err := intMember(obj, "credit"); err != nil {
		return m, err
	} else if ok {
		m.credit = &c
	}
	if p := obj["params"]; p != nil {
		if m.params, ok = p.(map[string]any); !ok {
			return m, badRequest("params must be an object, not %s", kindOf(p))
		}
	}
	m.result, m.hasResult = obj["result"]
	m.item, m.hasItem = obj["item"]
	if e, ok := obj["error"]; ok && e != nil {
		eo, ok := e.(map[string]any)
		if !ok {
			return m, badRequest("error must be an object, not %s", kindOf(e))
		}
		var we wireError
		if we.code, _, err = stringMember(eo, "code"); err != nil {
			return m, err
		}
		if we.message, _, err = stringMember(eo, "message"); err != nil {
			return m, err
		}
		m.err = &we
	}
	return m, nil
}

// intMember returns the integer member key of obj and whether it is
// present (null counts as absent).
func intMember(obj map[string]any, key string) (int64, bool, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false, badRequest("%s must be an integer, not %s", key, kindOf(v))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, false, badRequest("%s must be an integer, not %s", key, n)
	}
	return i, true, nil
}

// stringMember returns the string member key of obj and whether it is
// present (null counts as absent).
func stringMember(obj map[string]any, key string) (string, bool, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, badRequest("%s must be a string, not %s", key, kindOf(v))
	}
	return s, true, nil
}

// The append functions below write whole messages in the canonical form
// (members in key order), newline included.
// params, results and items are built by the shape encoders of shapes.go.

func appendRequest(b []byte, id int64, saver, method string, timeoutMS int64, params []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	if saver != "" {
		b = append(b, `,"saver":`...)
		b = appendString(b, saver)
	}
	if timeoutMS > 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, timeoutMS, 10)
	}
	return append(b, "}\n"...)
}

func appendCancel(b []byte, id int64) []byte {
	b = append(b, `{"cancel":true,"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, "}\n"...)
}

func appendCredit(b []byte, id, credit int64) []byte {
	b = append(b, `{"credit":`...)
	b = strconv.AppendInt(b, credit, 10)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, "}\n"...)
}

// appendAnswer writes a result ("result") or a list item ("item").
func appendAnswer(b []byte, id int64, member string, raw []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"`...)
	b = append(b, member...)
	b = append(b, `":`...)
	b = append(b, raw...)
	return append(b, "}\n"...)
}

func appendError(b []byte, id int64, code, message string) []byte {
	b = append(b, `{"error":{"code":`...)
	b = appendString(b, code)
	b = append(b, `,"message":`...)
	b = appendString(b, message) // invalid UTF-8 becomes U+FFFD: a message is for people
	b = append(b, `},"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, "}\n"...)
}

// isBlank reports whether a line holds only white space.
func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }
