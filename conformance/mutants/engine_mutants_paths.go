package mutants

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// More engine-driven mutants, one per ENGINE-* rule. Each breaks its rule
// the way a real saver plausibly would, and only on data that the engine
// produces and the method-by-method specs never write: task paths starting
// with "~__pregel_", checkpoints whose versions_seen holds "__input__",
// subgraph namespaces "node:<task UUID>", the engine's special channels.
// So only the engine group (the scenario citing the rule, and the golden
// traces) catches them.

// enginePath reports whether a task path is one the engine writes.
func enginePath(taskPath string) bool { return strings.HasPrefix(taskPath, "~__pregel_") }

// engineCP reports whether a checkpoint was made by an engine: LangGraph's
// runtime records the "__input__" pseudo-node in every versions_seen.
func engineCP(cp *spec.Checkpoint) bool {
	_, ok := cp.VersionsSeen["__input__"]
	return ok
}

// taskNamespace matches a namespace whose last level is a subgraph task's
// "node:<task UUID>".
var taskNamespace = regexp.MustCompile(`(^|\|)[^|:]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// noWritesChannel is the channel of the marker a task that wrote nothing
// saves.
const noWritesChannel = "__no_writes__"

const (
	// witness UUIDs, shaped like engine task IDs.
	witnessTask  = "1ef0d7a4-0000-6000-8000-00000000000a"
	witnessTask2 = "1ef0d7a4-0000-6000-8000-00000000000b"
)

// hasWrite reports whether a tuple holds a pending write of task on
// channel.
func hasWrite(t *spec.Tuple, task, channel string) bool {
	return slices.ContainsFunc(t.PendingWrites, func(w spec.PendingWrite) bool { return w.TaskID == task && w.Channel == channel })
}

// engineCheckpoint is a checkpoint as the engine puts it, for witnesses.
func engineCheckpoint(id string, vals map[string]any, seen map[string]spec.Versions) spec.Checkpoint {
	vers := spec.Versions{}
	for ch := range vals {
		vers[ch] = spec.Version("v" + id)
	}
	if seen == nil {
		seen = map[string]spec.Versions{}
	}
	seen["__input__"] = spec.Versions{}
	return spec.Checkpoint{V: 4, ID: id, ChannelValues: vals, ChannelVersions: vers, VersionsSeen: seen}
}

func init() {
	register(Mutant{
		Name: "engine-early-writes-one-thread", Rule: "ENGINE-ASYNC-2",
		Description: "Engine writes that arrive before their checkpoint are parked in one saver-wide buffer until it is put, and the buffer serves one thread at a time: early writes of another thread evict the parked ones.",
		New:         newOneThreadParking,
		Witness: func(ctx context.Context, s spec.Saver) any {
			for _, th := range []string{"t1", "t2"} {
				_ = s.PutWrites(ctx, spec.Config{ThreadID: th, CheckpointID: "a"}, []spec.Write{wr("c", th)}, witnessTask, "~__pregel_pull, n")
			}
			_ = putCP(ctx, s, "t1", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t2", "", "a", "", nil, nil)
			return [][]string{writesOf(ctx, s, "t1", "", "a"), writesOf(ctx, s, "t2", "", "a")}
		},
	})
	register(Mutant{
		Name: "engine-resume-list-first-wins", Rule: "ENGINE-INTERRUPT-2",
		Description: "A task's __resume__ write is kept first-wins like a regular write, so the list of answers saved after the first resume never grows.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if enginePath(taskPath) && taskID != spec.NullTaskID && slices.ContainsFunc(writes, func(x spec.Write) bool { return x.Channel == spec.ResumeChannel }) {
					if t, err := w.Inner.GetTuple(ctx, cfg); err == nil && hasWrite(t, taskID, spec.ResumeChannel) {
						writes = slices.DeleteFunc(slices.Clone(writes), func(x spec.Write) bool { return x.Channel == spec.ResumeChannel })
					}
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			cfg := spec.Config{ThreadID: "t", CheckpointID: "a"}
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr(spec.ResumeChannel, []any{"x"})}, witnessTask, "~__pregel_pull, ask")
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr(spec.ResumeChannel, []any{"x", "y"})}, witnessTask, "~__pregel_pull, ask")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-answered-send-writes-dropped", Rule: "ENGINE-INTERRUPT-3",
		Description: "The rows of a Send (PUSH) task that has an __interrupt__ row are treated as final: its later writes, the result of its answered interrupt, are dropped.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if strings.HasPrefix(taskPath, "~__pregel_push") {
					if t, err := w.Inner.GetTuple(ctx, cfg); err == nil && hasWrite(t, taskID, spec.InterruptChannel) {
						return nil
					}
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			cfg := spec.Config{ThreadID: "t", CheckpointID: "a"}
			path := "~__pregel_push, 0000000000, 0000000000"
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr(spec.InterruptChannel, []any{"q"})}, witnessTask, path)
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr("answers", []any{"A:a"})}, witnessTask, path)
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-failure-hides-siblings", Rule: "ENGINE-FAILURE-1",
		Description: "Once a task of a step has saved an __error__ write, reads return only the failed task's (and null-task) writes of that checkpoint, as if the step were rolled back, so the successful sibling runs again.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			failed := map[ckey]map[string]bool{}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if err := w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath); err != nil {
					return err
				}
				if enginePath(taskPath) && slices.ContainsFunc(writes, func(x spec.Write) bool { return x.Channel == spec.ErrorChannel }) {
					mu.Lock()
					k := ckey{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}
					if failed[k] == nil {
						failed[k] = map[string]bool{}
					}
					failed[k][taskID] = true
					mu.Unlock()
				}
				return nil
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				tasks := failed[keyOf(t)]
				mu.Unlock()
				if len(tasks) > 0 {
					t.PendingWrites = slices.DeleteFunc(t.PendingWrites, func(pw spec.PendingWrite) bool {
						return pw.TaskID != spec.NullTaskID && !tasks[pw.TaskID]
					})
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			cfg := spec.Config{ThreadID: "t", CheckpointID: "a"}
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr("value", 2)}, witnessTask, "~__pregel_pull, one")
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr(spec.ErrorChannel, "boom")}, witnessTask2, "~__pregel_pull, two")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-no-writes-marker-dropped", Rule: "ENGINE-STATIC-1",
		Description: "A write batch holding only the __no_writes__ marker is skipped as empty, so a task that wrote nothing leaves no trace.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if enginePath(taskPath) && onlyMarkers(writes) {
					return nil
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr(noWritesChannel, nil)}, witnessTask, "~__pregel_pull, s3")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-early-marker-to-latest", Rule: "ENGINE-STATIC-2",
		Description: "A __no_writes__ marker for a checkpoint not stored yet is filed under the thread's latest stored checkpoint, so a checkpoint interrupted before a node gains a write it never had.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if enginePath(taskPath) && onlyMarkers(writes) {
					if _, err := w.Inner.GetTuple(ctx, cfg); errors.Is(err, spec.ErrNotFound) {
						if latest, err := w.Inner.GetTuple(ctx, spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace}); err == nil {
							cfg = latest.Config
						}
					}
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "b"}, []spec.Write{wr(noWritesChannel, nil)}, witnessTask, "~__pregel_pull, s3")
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			return [][]string{writesOf(ctx, s, "t", "", "a"), writesOf(ctx, s, "t", "", "b")}
		},
	})
	register(Mutant{
		Name: "engine-send-packets-unordered", Rule: "ENGINE-SEND-1",
		Description: "The Send packets of __pregel_tasks are stored as a set and read back in hash order instead of Send order.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if l, ok := t.Checkpoint.ChannelValues["__pregel_tasks"].([]any); ok && len(l) > 1 {
					l = slices.Clone(l)
					slices.SortStableFunc(l, func(a, b any) int { return int(hashOf(a)>>1) - int(hashOf(b)>>1) })
					t.Checkpoint.ChannelValues["__pregel_tasks"] = l
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			var sends []any
			for i := range 5 {
				sends = append(sends, map[string]any{"node": "w", "arg": map[string]any{"item": i}})
			}
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"__pregel_tasks": sends})
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
			if err != nil {
				return errKind(err)
			}
			return fmt.Sprint(t.Checkpoint.ChannelValues["__pregel_tasks"])
		},
	})
	register(Mutant{
		Name: "engine-subgraph-parents-dropped", Rule: "ENGINE-SUBGRAPH-1",
		Description: "The parents metadata of checkpoints in a subgraph task's namespace (\"node:<task ID>\") is not stored, so a subgraph checkpoint no longer names its parent checkpoint.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if _, ok := md["parents"]; ok && taskNamespace.MatchString(cfg.Namespace) {
					md = copyMeta(md)
					delete(md, "parents")
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			ns := "bar:" + witnessTask
			_ = putCP(ctx, s, "t", ns, "a", "", spec.Metadata{"source": "input", "parents": map[string]any{"": "root"}}, nil)
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: ns, CheckpointID: "a"})
			if err != nil {
				return errKind(err)
			}
			return typed(t.Metadata)
		},
	})
	register(Mutant{
		Name: "engine-update-rewrites-task-writes", Rule: "ENGINE-UPDATE-1",
		Description: "Writes re-sent under an update's task path (\"~__interrupt__, <i>\", or none) and a task ID that already has writes on the checkpoint (as UpdateState sends them) replace that task's regular writes instead of leaving the original rows untouched.",
		New:         newUpdateRewrites,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			cfg := spec.Config{ThreadID: "t", CheckpointID: "a"}
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr("value", 10), wr("branch:to:b", nil)}, witnessTask, "~__pregel_pull, node_a")
			_ = s.PutWrites(ctx, cfg, []spec.Write{wr("value", 20), wr("branch:to:b", nil)}, witnessTask, "~__interrupt__, 0000000000")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-sibling-updates-collapse", Rule: "ENGINE-UPDATE-2",
		Description: "A second update of the same checkpoint at the same step is taken for a retry of the first: both update checkpoints read back the values of the latest one.",
		New:         newSiblingCollapse,
		Witness: func(ctx context.Context, s spec.Saver) any {
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, engineCheckpoint("a", map[string]any{"value": 1}, nil), spec.Metadata{"source": "loop", "step": 0}, spec.Versions{"value": "va"})
			for _, u := range []struct {
				id string
				v  int
			}{{"b", 21}, {"c", 31}} {
				_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, engineCheckpoint(u.id, map[string]any{"value": u.v}, nil), spec.Metadata{"source": "update", "step": 1}, spec.Versions{"value": spec.Version("v" + u.id)})
			}
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "b"})
			if err != nil {
				return errKind(err)
			}
			return typed(t.Checkpoint.ChannelValues["value"])
		},
	})
	register(Mutant{
		Name: "engine-input-forgets-seen", Rule: "ENGINE-INPUT-1",
		Description: "An input checkpoint that continues a thread is stored as a fresh start: its versions_seen keeps only __input__, so a pending node's trigger is no longer recorded as seen.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if md["source"] == "input" && cfg.CheckpointID != "" && engineCP(&cp) {
					cp.VersionsSeen = map[string]spec.Versions{"__input__": cp.VersionsSeen["__input__"]}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			cp := engineCheckpoint("b", nil, map[string]spec.Versions{"b": {"branch:to:b": "v3"}})
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, cp, spec.Metadata{"source": "input", "step": 2}, spec.Versions{})
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "b"})
			if err != nil {
				return errKind(err)
			}
			return fmt.Sprint(t.Checkpoint.VersionsSeen)
		},
	})
	register(Mutant{
		Name: "engine-command-writes-reversed", Rule: "ENGINE-COMMAND-1",
		Description: "A batch of null-task writes without a task path (a Command's goto and update) is stored back to front, as if prepended one by one, so its write indices run backwards.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if taskID == spec.NullTaskID && taskPath == "" && len(writes) > 1 {
					writes = slices.Clone(writes)
					slices.Reverse(writes)
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", spec.NullTaskID, wr("branch:to:b", "__start__"), wr("q", "again"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-fork-not-latest", Rule: "ENGINE-REPLAY-1",
		Description: "The latest-checkpoint lookup skips checkpoints with source fork (treating forks as side branches), so after a replay the thread's latest checkpoint is still the old branch's.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				t, err := w.Inner.GetTuple(ctx, cfg)
				if err != nil || cfg.CheckpointID != "" || t.Metadata["source"] != "fork" || !engineCP(&t.Checkpoint) {
					return t, err
				}
				for o, lerr := range w.Inner.List(ctx, spec.ListOptions{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace}) {
					if lerr != nil {
						return nil, lerr
					}
					if o.Metadata["source"] != "fork" {
						return o, nil
					}
				}
				return t, nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, engineCheckpoint("a", nil, nil), spec.Metadata{"source": "loop", "step": 1}, spec.Versions{})
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, engineCheckpoint("b", nil, nil), spec.Metadata{"source": "fork", "step": 2}, spec.Versions{})
			return describe(s.GetTuple(ctx, spec.Config{ThreadID: "t"}))
		},
	})
	register(Mutant{
		Name: "engine-exit-orphan-writes-dropped", Rule: "ENGINE-EXIT-1",
		Description: "Engine writes against a loop checkpoint without a parent are dropped: the saver expects every lineage to start with an input checkpoint, which exit durability never stores.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if enginePath(taskPath) {
					if t, err := w.Inner.GetTuple(ctx, cfg); err == nil && t.Parent == nil && t.Metadata["source"] == "loop" {
						return nil
					}
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"source": "loop", "step": 0}, nil)
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr("value", 2)}, witnessTask, "~__pregel_pull, one")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-channel-plus-decoded", Rule: "ENGINE-TRACE-1",
		Description: "Channel names are form-decoded on read, as by a saver keeping them in URL-encoded keys: a '+' (as in LangGraph's join channels \"join:b+c:d\") reads back as a space.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				dec := func(s string) string { return strings.ReplaceAll(s, "+", " ") }
				cp := &t.Checkpoint
				for k, v := range cp.ChannelValues {
					if strings.Contains(k, "+") {
						delete(cp.ChannelValues, k)
						cp.ChannelValues[dec(k)] = v
					}
				}
				for k, v := range cp.ChannelVersions {
					if strings.Contains(k, "+") {
						delete(cp.ChannelVersions, k)
						cp.ChannelVersions[dec(k)] = v
					}
				}
				for _, seen := range cp.VersionsSeen {
					for k, v := range seen {
						if strings.Contains(k, "+") {
							delete(seen, k)
							seen[dec(k)] = v
						}
					}
				}
				for i := range t.PendingWrites {
					t.PendingWrites[i].Channel = dec(t.PendingWrites[i].Channel)
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"join:b+c:d": []any{"b"}})
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr("join:b+c:d", "c")}, witnessTask, "~__pregel_pull, c")
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
			if err != nil {
				return errKind(err)
			}
			return fmt.Sprint(t.Checkpoint.ChannelValues, t.Checkpoint.ChannelVersions, writesOf(ctx, s, "t", "", "a"))
		},
	})
}
