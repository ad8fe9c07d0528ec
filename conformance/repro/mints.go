package repro

import (
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// distinctMints gives every version a recorded NextVersion call minted an
// identity of its own, when the recording saver minted one version twice.
//
// A replay mints versions on the saver it replays on and uses them wherever
// the trace used the recorded ones (trace.Replayer). That needs the
// recorded versions to say which mint each use refers to, and a saver whose
// versions collide (two forks of one checkpoint both minting "2", the
// VERSION-2 bug) recorded the same string for two mints: replayed as is,
// the reference would put both forks with one version and collide too. So
// the second and later mints of a string are renamed "<version>~<n>", and
// each use of the string is resolved as an engine's Put uses versions: a
// channel's entry in new_versions is the oldest mint of that string not yet
// put; an entry in channel_versions or versions_seen is the same version as
// the Put's new one for that channel, else the one the parent checkpoint
// had, else the newest mint. A trace without a repeated mint is returned
// as it is.
func distinctMints(calls []trace.Call) []trace.Call {
	seen := map[spec.Version]int{}
	repeated := false
	for _, c := range calls {
		if c.Method == trace.MethodNextVersion {
			seen[c.Version]++
			repeated = repeated || seen[c.Version] > 1
		}
	}
	if !repeated {
		return calls
	}
	m := minting{
		unused:  map[spec.Version][]spec.Version{},
		newest:  map[spec.Version]spec.Version{},
		minted:  map[spec.Version]int{},
		rawOf:   map[spec.Version]spec.Version{},
		history: map[spec.Config]*spec.Checkpoint{},
	}
	out := make([]trace.Call, len(calls))
	for i, c := range calls {
		switch c.Method {
		case trace.MethodNextVersion:
			c.Current = m.newestOf(c.Current)
			c.Version = m.mint(c.Version)
		case trace.MethodPut:
			if c.Checkpoint != nil {
				c.Checkpoint, c.NewVersions = m.put(c.Config, c.Checkpoint, c.NewVersions)
			}
		}
		out[i] = c
	}
	return out
}

// minting is distinctMints' state.
type minting struct {
	// unused are the renamed mints of each recorded version not yet put,
	// oldest first; newest is the latest mint of each; minted counts them.
	unused map[spec.Version][]spec.Version
	newest map[spec.Version]spec.Version
	minted map[spec.Version]int
	// rawOf is the recorded version each renamed mint stands for.
	rawOf map[spec.Version]spec.Version
	// history is each put checkpoint, with its versions renamed.
	history map[spec.Config]*spec.Checkpoint
}

// raw returns the recorded version a renamed one stands for.
func (m *minting) raw(v spec.Version) spec.Version {
	if r, ok := m.rawOf[v]; ok {
		return r
	}
	return v
}

func renamed(v spec.Version, n int) spec.Version {
	return spec.Version(fmt.Sprintf("%s~%d", v, n))
}

func (m *minting) mint(v spec.Version) spec.Version {
	m.minted[v]++
	name := v
	if n := m.minted[v]; n > 1 {
		name = renamed(v, n)
	}
	m.rawOf[name] = v
	m.unused[v] = append(m.unused[v], name)
	m.newest[v] = name
	return name
}

// newestOf returns the latest mint of the recorded version v, or v.
func (m *minting) newestOf(v spec.Version) spec.Version {
	if n, ok := m.newest[v]; ok {
		return n
	}
	return v
}

// put renames the versions of a Put's checkpoint and new versions.
func (m *minting) put(cfg spec.Config, cp *spec.Checkpoint, nv spec.Versions) (*spec.Checkpoint, spec.Versions) {
	parent := m.history[cfg]
	out := *cp
	news := make(spec.Versions, len(nv))
	for ch, v := range nv {
		if q := m.unused[v]; len(q) > 0 {
			news[ch], m.unused[v] = q[0], q[1:]
			continue
		}
		news[ch] = m.carried(v, parent, ch, "")
	}
	out.ChannelVersions = make(spec.Versions, len(cp.ChannelVersions))
	for ch, v := range cp.ChannelVersions {
		if n, ok := news[ch]; ok && m.raw(n) == v {
			out.ChannelVersions[ch] = n
			continue
		}
		out.ChannelVersions[ch] = m.carried(v, parent, ch, "")
	}
	if cp.VersionsSeen != nil {
		out.VersionsSeen = make(map[string]spec.Versions, len(cp.VersionsSeen))
		for node, vs := range cp.VersionsSeen {
			rvs := make(spec.Versions, len(vs))
			for ch, v := range vs {
				if n, ok := out.ChannelVersions[ch]; ok && m.raw(n) == v {
					rvs[ch] = n
					continue
				}
				rvs[ch] = m.carried(v, parent, ch, node)
			}
			out.VersionsSeen[node] = rvs
		}
	}
	m.history[spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}] = &out
	return &out, news
}

// carried resolves the recorded version v of channel ch (in versions_seen
// of node, when node is not ""): the parent checkpoint's version of that
// string, else the newest mint.
func (m *minting) carried(v spec.Version, parent *spec.Checkpoint, ch, node string) spec.Version {
	if parent != nil {
		if node != "" {
			if p, ok := parent.VersionsSeen[node][ch]; ok && m.raw(p) == v {
				return p
			}
		}
		if p, ok := parent.ChannelVersions[ch]; ok && m.raw(p) == v {
			return p
		}
	}
	return m.newestOf(v)
}

// mintedVersions returns the versions calls' NextVersion calls minted.
func mintedVersions(calls []trace.Call) map[spec.Version]bool {
	out := map[spec.Version]bool{}
	for _, c := range calls {
		if c.Method == trace.MethodNextVersion {
			out[c.Version] = true
		}
	}
	return out
}

// keepsMints reports whether every minted version that cand uses is minted
// in cand. Shrinking keeps a NextVersion call while its version is used: a
// recorded version replayed as a literal is the recording saver's mint, and
// a reproduction that needs it to equal a later mint (the saver's "2"
// colliding with a literal "2") hides what the saver did.
func keepsMints(cand []trace.Call, minted map[spec.Version]bool) bool {
	if len(minted) == 0 {
		return true
	}
	have := map[spec.Version]bool{}
	uses := func(vs spec.Versions) bool {
		for _, v := range vs {
			if minted[v] && !have[v] {
				return false
			}
		}
		return true
	}
	for _, c := range cand {
		switch c.Method {
		case trace.MethodNextVersion:
			if c.Current != "" && minted[c.Current] && !have[c.Current] {
				return false
			}
			have[c.Version] = true
		case trace.MethodPut:
			if !uses(c.NewVersions) || c.Checkpoint != nil && !uses(c.Checkpoint.ChannelVersions) {
				return false
			}
			if c.Checkpoint != nil {
				for _, vs := range c.Checkpoint.VersionsSeen {
					if !uses(vs) {
						return false
					}
				}
			}
		}
	}
	return true
}
