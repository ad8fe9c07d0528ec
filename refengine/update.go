package refengine

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// updateAsEnd finishes the pending tasks of saved without running them
// (UpdateState with End, pregel-semantics §6.2 item 6): the null writes and
// the writes of tasks that already finished are applied, every pending
// task's triggers are consumed, and an "update" checkpoint (ID clock
// sequence = step, metadata step+1) is put, with nothing left to run.
// applySaved is false when UpdateState already applied the saved writes.
func (l *loop) updateAsEnd(ctx context.Context, saved *spec.Tuple, cp *spec.Checkpoint, chans map[string]channel, prev spec.Versions, step int, parents map[string]any, tasks []*task, applySaved bool, values Update) (spec.Config, error) {
	if values != nil {
		return spec.Config{}, fmt.Errorf("refengine: %w: update as %q takes no values", spec.ErrInvalidArgument, End)
	}
	if saved == nil {
		return spec.Config{}, fmt.Errorf("refengine: %w: update as %q needs a checkpoint", spec.ErrInvalidArgument, End)
	}
	if applySaved {
		if err := l.g.applySaved(cp, chans, tasks, saved.PendingWrites, l.nextVersion); err != nil {
			return spec.Config{}, err
		}
	}
	aw := make([]appliedWrites, 0, len(tasks))
	for _, t := range tasks {
		aw = append(aw, appliedWrites{name: t.node.name, path: t.path, triggers: t.triggers})
	}
	if len(aw) > 0 {
		if _, err := l.g.applyWrites(cp, chans, aw, l.nextVersion); err != nil {
			return spec.Config{}, err
		}
	}
	next, err := newCheckpoint(cp, chans, l.opts.newID(step), nil)
	if err != nil {
		return spec.Config{}, err
	}
	md := l.opts.withExtras(spec.Metadata{"source": "update", "step": int64(step + 1), "parents": parents})
	out, err := l.saver.Put(ctx, saved.Config, next, md, newVersions(prev, next.ChannelVersions))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	return out, nil
}

// updateAsInput applies values as graph input on top of saved (UpdateState
// with InputTask): an "input" checkpoint, then the input write saved
// against it under a task ID derived from the previous checkpoint's ID.
func (l *loop) updateAsInput(ctx context.Context, saved *spec.Tuple, cp *spec.Checkpoint, chans map[string]channel, prev spec.Versions, step int, parents map[string]any, values Update) (spec.Config, error) {
	in, err := spec.Normalize(map[string]any(values))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	writes := []spec.Write{{Channel: Start, Value: in}}
	if _, err := l.g.applyWrites(cp, chans, []appliedWrites{{name: InputTask, writes: writes}}, l.nextVersion); err != nil {
		return spec.Config{}, err
	}
	next, parentCfg := -1, l.config("")
	if saved != nil {
		next, parentCfg = step+1, saved.Config
	}
	taskID, err := ids.UUID5(cp.ID, InputTask)
	if err != nil {
		return spec.Config{}, err
	}
	out, err := newCheckpoint(cp, chans, l.opts.newID(next), nil)
	if err != nil {
		return spec.Config{}, err
	}
	md := l.opts.withExtras(spec.Metadata{"source": "input", "step": int64(next), "parents": parents})
	cfg, err := l.saver.Put(ctx, parentCfg, out, md, newVersions(prev, out.ChannelVersions))
	if err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	if err := l.saver.PutWrites(ctx, cfg, writes, taskID, ""); err != nil {
		return spec.Config{}, fmt.Errorf("refengine: update state: %w", err)
	}
	return cfg, nil
}
