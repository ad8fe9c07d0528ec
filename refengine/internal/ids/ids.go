// Package ids computes the identifiers LangGraph's runtime derives instead of
// drawing at random: task IDs, interrupt IDs and UUIDv5 names, plus
// reproducible checkpoint IDs for tests. It is shared by refengine, its
// trace package and its scenarios.
package ids

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
	"github.com/zeebo/xxh3"
)

// Task kinds, as they appear in task IDs and task paths.
const (
	// Pull is the kind of an edge-triggered task.
	Pull = "__pregel_pull"
	// Push is the kind of a task created by a Send.
	Push = "__pregel_push"
)

// Task computes the ID LangGraph gives a task: xxh3-128 (seed 0) over the
// 16 raw bytes of the checkpoint the task is prepared from followed by the
// parts concatenated without separators, formatted 8-4-4-4-12. For a PULL
// task the parts are the node namespace, the step, the node name, [Pull]
// and the node's sorted trigger channels; for a Send task they are the node
// namespace, the step, the node name, [Push] and the Send's index.
func Task(checkpointID string, parts ...string) (string, error) {
	raw, err := uuidBytes(checkpointID)
	if err != nil {
		return "", err
	}
	n := len(raw)
	for _, p := range parts {
		n += len(p)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, raw[:]...)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	return formatUUID(xxh3.Hash128(buf).Bytes()), nil
}

// PullTask is [Task] for the edge-triggered task of node in the graph whose
// checkpoint namespace is ns; triggers must be sorted.
func PullTask(checkpointID, ns string, step int, node string, triggers []string) (string, error) {
	parts := make([]string, 0, 4+len(triggers))
	parts = append(parts, NodeNamespace(ns, node), strconv.Itoa(step), node, Pull)
	parts = append(parts, triggers...)
	return Task(checkpointID, parts...)
}

// PushTask is [Task] for the task created by the Send at index idx of the
// tasks topic of the graph whose checkpoint namespace is ns.
func PushTask(checkpointID, ns string, step int, node string, idx int) (string, error) {
	return Task(checkpointID, NodeNamespace(ns, node), strconv.Itoa(step), node, Push, strconv.Itoa(idx))
}

// NodeNamespace is the node part of a task ID's input: ns and node joined
// with [spec.NSSep], or node alone at the root (LangGraph's
// "checkpoint_ns|node"). It names no checkpoint namespace: a task's
// namespace is spec.ChildNamespace(ns, node, taskID).
func NodeNamespace(ns, node string) string {
	if ns == "" {
		return node
	}
	return ns + spec.NSSep + node
}

// Interrupt returns the ID of an interrupt raised by the task whose
// checkpoint namespace is taskNS: the xxh3-128 hex digest of taskNS.
// Resume maps are keyed by it.
func Interrupt(taskNS string) string {
	b := xxh3.HashString128(taskNS).Bytes()
	return hex.EncodeToString(b[:])
}

// InterruptAt returns the ID of the interrupt a task raises after it has
// been answered answered times: Interrupt(taskNS) for the first, the digest
// of taskNS + "|" + answered after that, as LangGraph Python's
// _interrupt_id (langgraph/types.py:583) derives it.
func InterruptAt(taskNS string, answered int) string {
	if answered == 0 {
		return Interrupt(taskNS)
	}
	return Interrupt(taskNS + "|" + strconv.Itoa(answered))
}

// UUID5 is RFC 4122 UUIDv5 (SHA-1) of name in namespace ns, as Python's
// uuid.uuid5 computes it.
func UUID5(ns, name string) (string, error) {
	raw, err := uuidBytes(ns)
	if err != nil {
		return "", err
	}
	h := sha1.New()
	h.Write(raw[:])
	h.Write([]byte(name))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b), nil
}

// Sequential returns a checkpoint-ID generator for reproducible tests: IDs
// in the layout of spec.NewCheckpointID (UUIDv6, clock sequence = step)
// whose timestamps start at start and advance by one 100-ns tick per ID,
// and whose random bits are zero. It is safe for concurrent use.
func Sequential(start time.Time) func(step int) string {
	var mu sync.Mutex
	tick := uint64(start.UnixNano()/100) + 0x01B21DD213814000
	return func(step int) string {
		mu.Lock()
		tick++
		ts := tick & (1<<60 - 1)
		mu.Unlock()
		var b [16]byte
		for i := range 6 {
			b[i] = byte(ts >> (52 - 8*i))
		}
		b[6] = 0x60 | byte(ts>>8)&0x0f
		b[7] = byte(ts)
		seq := uint16(step) & 0x3fff
		b[8] = 0x80 | byte(seq>>8)
		b[9] = byte(seq)
		return formatUUID(b)
	}
}

func uuidBytes(id string) ([16]byte, error) {
	var raw [16]byte
	h := strings.ReplaceAll(id, "-", "")
	if len(h) != 32 {
		return raw, fmt.Errorf("refengine: checkpoint ID %q is not a 32-hex-digit UUID", id)
	}
	if _, err := hex.Decode(raw[:], []byte(h)); err != nil {
		return raw, fmt.Errorf("refengine: checkpoint ID %q is not a UUID: %w", id, err)
	}
	return raw, nil
}

func formatUUID(b [16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
