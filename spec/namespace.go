package spec

import "strings"

// Namespace separators: NSSep separates the levels of a subgraph namespace,
// NSEnd separates a node name from its task ID within a level.
const (
	NSSep = "|"
	NSEnd = ":"
)

// ChildNamespace returns the namespace of a subgraph run by node as task
// taskID inside a graph with namespace parent: parent, then NSSep unless the
// parent is the root, then node:taskID.
func ChildNamespace(parent, node, taskID string) string {
	level := node + NSEnd + taskID
	if parent == "" {
		return level
	}
	return parent + NSSep + level
}

// SplitNamespace returns the levels of ns; the root namespace has none.
func SplitNamespace(ns string) []string {
	if ns == "" {
		return nil
	}
	return strings.Split(ns, NSSep)
}

// RecastNamespace removes task IDs from ns: it drops every ":taskID" suffix
// and every purely numeric level, so "parent:1f2a|child:9b|3" becomes
// "parent|child". Engines compare recast namespaces; savers store full ones.
func RecastNamespace(ns string) string {
	var kept []string
	for _, part := range SplitNamespace(ns) {
		if isDigits(part) {
			continue
		}
		name, _, _ := strings.Cut(part, NSEnd)
		kept = append(kept, name)
	}
	return strings.Join(kept, NSSep)
}

// ParentNamespaces returns every ancestor namespace of ns, root first and
// excluding ns itself: for "a:1|b:2|c:3" that is "", "a:1", "a:1|b:2".
func ParentNamespaces(ns string) []string {
	parts := SplitNamespace(ns)
	if len(parts) == 0 {
		return nil
	}
	out := []string{""}
	for i := 1; i < len(parts); i++ {
		out = append(out, strings.Join(parts[:i], NSSep))
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
