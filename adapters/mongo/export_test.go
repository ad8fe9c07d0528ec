package mongo

import "github.com/checkpointkit/checkpointkit/spec"

// Test hooks.

// ListQuery exposes the filter and sort List sends to the server.
var ListQuery = listQuery

// NormalizeFilterForTest normalises a filter the way List does.
func NormalizeFilterForTest(f spec.Metadata) spec.Metadata {
	nf, err := spec.NormalizeFilter(f)
	if err != nil {
		panic(err)
	}
	return nf
}

// CheckpointKey exposes the _id of a checkpoint document.
var CheckpointKey = checkpointKey

// SetChunking sets the inline limit and chunk size of large payloads and
// returns a function restoring the previous values. Tests using it must not
// run in parallel.
func SetChunking(inline, chunk int) (restore func()) {
	oldInline, oldChunk := inlineMax, chunkSize
	inlineMax, chunkSize = inline, chunk
	return func() { inlineMax, chunkSize = oldInline, oldChunk }
}

// Canonical exposes the canonical encoding behind filter tokens.
func Canonical(v any) []byte { return canonical(nil, v) }

// LatestQuery exposes the filter and sort of GetTuple without an ID.
var LatestQuery = latestQuery

// SetHook installs fn as s's test hook: every operation calls it with the
// name of each point it reaches (the Hook* constants). Set it before s is
// shared between goroutines.
func SetHook(s *Saver, fn func(point string)) { s.hook = fn }

// Points passed to the test hook.
const (
	HookPutCheckpoint     = hookPutCheckpoint
	HookPutValues         = hookPutValues
	HookWritesBatch       = hookWritesBatch
	HookListPage          = hookListPage
	HookDeleteCheckpoints = hookDeleteCheckpoints
	HookPruneLatest       = hookPruneLatest
	HookGCCandidates      = hookGCCandidates
	HookGCRefs            = hookGCRefs
	HookRunsHeld          = hookRunsHeld
	HookCopyHeld          = hookCopyHeld
	HookFenced            = hookFenced
)
