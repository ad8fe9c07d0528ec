package refengine

import (
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Snapshot bumps: a delta channel snapshotted in a checkpoint that does not
// write it gets a new version only so that Put stores the snapshot. That is
// no write, and the versions_seen entries record it as such.

// snapshotBumps is LangGraph's SNAPSHOT_BUMPS: the versions_seen entry that
// records, for each entry a snapshot bump advanced, the new version under
// "<node>|<channel>" and the version the node really read under
// "<node>:<channel>".
const snapshotBumps = "__snapshot_bumps__"

// versionBump is a delta channel's version moved only to store a snapshot
// (old is "" for a channel that had no version).
type versionBump struct {
	channel  string
	old, new spec.Version
}

// markBumpsSeen advances every versions_seen entry of out that had seen a
// bumped channel at its old version to the new one, so that the bump
// neither re-fires a static interrupt nor reruns a subscriber, and records
// the advance under [snapshotBumps] (LangGraph's _mark_bumps_seen,
// langgraph/pregel/_checkpoint.py:344). A channel bumped from no version
// also gives an entry to the nodes it triggers that have none; like every
// other entry without the channel, it is advanced to the new version.
func (g *Graph) markBumpsSeen(out *spec.Checkpoint, bumps []versionBump) {
	if len(bumps) == 0 {
		return
	}
	if out.VersionsSeen == nil {
		out.VersionsSeen = map[string]spec.Versions{}
	}
	for _, b := range bumps {
		if b.old != "" {
			continue
		}
		for _, n := range g.nodes {
			if _, ok := out.VersionsSeen[n.name]; !ok && slices.Contains(n.triggers, b.channel) {
				out.VersionsSeen[n.name] = spec.Versions{}
			}
		}
	}
	marks := maps.Clone(out.VersionsSeen[snapshotBumps])
	if marks == nil {
		marks = spec.Versions{}
	}
	for _, node := range slices.Sorted(maps.Keys(out.VersionsSeen)) {
		if node == snapshotBumps {
			continue
		}
		seen := maps.Clone(out.VersionsSeen[node])
		if seen == nil {
			seen = spec.Versions{}
		}
		for _, b := range bumps {
			if seen[b.channel] != b.old {
				continue
			}
			advanced, read := node+"|"+b.channel, node+":"+b.channel
			// An earlier bump to old already recorded the real read.
			if b.old != "" && marks[advanced] != b.old {
				marks[read] = b.old
			}
			marks[advanced] = b.new
			seen[b.channel] = b.new
		}
		out.VersionsSeen[node] = seen
	}
	if len(marks) > 0 {
		out.VersionsSeen[snapshotBumps] = marks
	}
}

// versionsSeenWithoutBumps returns seen as its nodes read it (LangGraph's
// versions_seen_without_bumps, langgraph/pregel/_checkpoint.py:389): an
// entry a snapshot bump advanced goes back to the version the node read,
// or away when it read none; the [snapshotBumps] entry is left out.
func versionsSeenWithoutBumps(seen map[string]spec.Versions) map[string]spec.Versions {
	marks := seen[snapshotBumps]
	if len(marks) == 0 {
		return seen
	}
	out := make(map[string]spec.Versions, len(seen))
	for node, vs := range seen {
		if node == snapshotBumps {
			continue
		}
		o := spec.Versions{}
		for ch, v := range vs {
			advanced, read := node+"|"+ch, node+":"+ch
			switch r, ok := marks[read]; {
			case marks[advanced] != v:
				o[ch] = v
			case ok:
				o[ch] = r
			}
		}
		out[node] = o
	}
	return out
}
