package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Maintenance that removes checkpoints keeps the ancestors that the delta
// channels of the checkpoints it keeps need (SPEC.md DELTA-12, DELTA-13).
// A checkpoint's delta channels are the keys of its metadata's
// spec.DeltaCountersKey map; a thread whose checkpoints name none costs
// nothing more than before.

// latestDeltaSQL selects the latest checkpoint of each namespace of a
// thread, with its metadata, when that metadata names delta channels.
const latestDeltaSQL = `SELECT c.checkpoint_ns, c.checkpoint_id, c.metadata FROM checkpoints c
	WHERE c.thread_id = ?1 AND c.checkpoint_id = (
		SELECT max(l.checkpoint_id) FROM checkpoints l
		WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)
	AND json_type(c.metadata, '$.` + spec.DeltaCountersKey + `') = 'object'`

// pruneKeep returns the keys (hexKey of namespace and ID) of the
// checkpoints of threadID that Prune(KeepLatest) keeps besides the latest
// of each namespace: the ancestors its delta channels need back to their
// seeds. Two statements per namespace whose latest checkpoint names delta
// channels.
func pruneKeep(ctx context.Context, q querier, threadID string) ([]string, error) {
	type latest struct {
		ns, id   string
		channels []string
	}
	var heads []latest
	rows, err := q.QueryContext(ctx, latestDeltaSQL, threadID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var l latest
		var text string
		if err := rows.Scan(&l.ns, &l.id, &text); err != nil {
			rows.Close()
			return nil, err
		}
		md, err := decodeMetadata(text)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("checkpoint %q: %w", l.id, err)
		}
		if l.channels = spec.DeltaChannels(md); len(l.channels) > 0 {
			heads = append(heads, l)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, err
	}
	keep := []string{}
	for _, l := range heads {
		w, err := walkDelta(ctx, sqlRows{q}, spec.Config{ThreadID: threadID, Namespace: l.ns, CheckpointID: l.id}, l.channels)
		if err != nil {
			return nil, err
		}
		for _, id := range w.needed(l.channels) {
			keep = append(keep, hexKey(l.ns, id))
		}
	}
	return keep, nil
}

// runsGraphSQL selects every checkpoint of each (thread, namespace) that
// holds a checkpoint of the runs in ?1 (a JSON array) and a checkpoint
// whose metadata names delta channels, with whether it belongs to the runs.
// runsValuesSQL selects the value keys of those namespaces for the channels
// in ?2.
const (
	runsGroupsCTE = `WITH hit(thread_id, checkpoint_ns) AS (
			SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints
			WHERE ` + runIDExpr + ` IN (SELECT value FROM json_each(?1))),
		grp(thread_id, checkpoint_ns) AS (
			SELECT h.thread_id, h.checkpoint_ns FROM hit h WHERE EXISTS (
				SELECT 1 FROM checkpoints d
				WHERE d.thread_id = h.thread_id AND d.checkpoint_ns = h.checkpoint_ns
				AND json_type(d.metadata, '$.` + spec.DeltaCountersKey + `') = 'object'))`
	runsGraphSQL = runsGroupsCTE + `
		SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
			coalesce(json_extract(c.metadata, '$.run_id') IN (SELECT value FROM json_each(?1)), 0)
		FROM grp g CROSS JOIN checkpoints c
		WHERE c.thread_id = g.thread_id AND c.checkpoint_ns = g.checkpoint_ns`
	runsValuesSQL = runsGroupsCTE + `
		SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version
		FROM grp g CROSS JOIN blobs b
		WHERE b.thread_id = g.thread_id AND b.checkpoint_ns = g.checkpoint_ns
		AND b.channel IN (SELECT value FROM json_each(?2)) AND b.kind = 'value'`
)

// graphNode is one checkpoint of a namespace loaded by runsKeep.
type graphNode struct {
	parent   string
	versions spec.Versions
	channels []string // delta channels its metadata names
	run      bool     // it belongs to a run being deleted
}

// runsKeep returns the keys (hexKey of thread, namespace and ID) of the
// checkpoints of runIDs that DeleteForRuns keeps because the delta chain of
// a surviving checkpoint needs them; a kept checkpoint survives too, so the
// chains its own delta channels need are kept in turn. It reads each
// namespace concerned whole, in two statements for all of them.
func runsKeep(ctx context.Context, q querier, runIDs []string) ([]string, error) {
	runs, err := jsonList(runIDs)
	if err != nil {
		return nil, err
	}
	type nsKey struct{ thread, ns string }
	graphs := map[nsKey]map[string]*graphNode{}
	deltaChannels := map[string]bool{}
	rows, err := q.QueryContext(ctx, runsGraphSQL, runs)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k nsKey
		var id, mdText string
		var parent *string
		var body []byte
		var run bool
		if err := rows.Scan(&k.thread, &k.ns, &id, &parent, &body, &mdText, &run); err != nil {
			rows.Close()
			return nil, err
		}
		cp, err := decodeBody(id, body)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("checkpoint %q: %w", id, err)
		}
		md, err := decodeMetadata(mdText)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("checkpoint %q: %w", id, err)
		}
		n := &graphNode{versions: cp.ChannelVersions, channels: spec.DeltaChannels(md), run: run}
		if parent != nil {
			n.parent = *parent
		}
		for _, ch := range n.channels {
			deltaChannels[ch] = true
		}
		if graphs[k] == nil {
			graphs[k] = map[string]*graphNode{}
		}
		graphs[k][id] = n
	}
	err = rows.Err()
	rows.Close()
	if err != nil || len(graphs) == 0 {
		return nil, err
	}
	chs := make([]string, 0, len(deltaChannels))
	for ch := range deltaChannels {
		chs = append(chs, ch)
	}
	chList, err := jsonList(chs)
	if err != nil {
		return nil, err
	}
	type valueKey struct {
		nsKey
		ch, ver string
	}
	values := map[valueKey]bool{}
	err = sqlRows{q}.queryRows(ctx, runsValuesSQL, []any{runs, chList}, 4, func(cols []driver.Value) error {
		values[valueKey{nsKey{asString(cols[0]), asString(cols[1])}, asString(cols[2]), asString(cols[3])}] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	keep := []string{}
	for k, g := range graphs {
		hasValue := func(ch string, ver spec.Version) bool { return values[valueKey{k, ch, string(ver)}] }
		var work []string
		for id, n := range g {
			if !n.run {
				work = append(work, id)
			}
		}
		for len(work) > 0 {
			id := work[len(work)-1]
			work = work[:len(work)-1]
			for _, a := range graphNeeds(g, hasValue, id) {
				if n := g[a]; n.run {
					n.run = false
					keep = append(keep, hexKey(k.thread, k.ns, a))
					work = append(work, a)
				}
			}
		}
	}
	return keep, nil
}

// graphNeeds is the ancestors of checkpoint id in g that its delta channels
// need: the chain back to the seed of each, or to the chain's end.
func graphNeeds(g map[string]*graphNode, hasValue func(string, spec.Version) bool, id string) []string {
	channels := g[id].channels
	if len(channels) == 0 {
		return nil
	}
	seeded := map[string]bool{}
	seen := map[string]bool{id: true}
	var chain []string
	for cur := g[id]; cur.parent != "" && len(seeded) < len(channels); {
		next := g[cur.parent]
		if next == nil || seen[cur.parent] {
			break
		}
		seen[cur.parent] = true
		chain = append(chain, cur.parent)
		for _, ch := range channels {
			if ver, ok := next.versions[ch]; ok && !seeded[ch] && hasValue(ch, ver) {
				seeded[ch] = true
			}
		}
		cur = next
	}
	return chain
}
