package conformance

import (
	"errors"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// opRules names the rules a diverging op of a shrunk random sequence
// points at, from the op and what differed. It is used only when no
// focused spec explains the model's failure, and the reproduction is
// printed with it.
func opRules(o op, why string) []string {
	if o.want != nil {
		return invalidOpRules(o)
	}
	switch {
	case strings.HasPrefix(why, "saver panicked"):
		return []string{opRule(o.kind)}
	case strings.Contains(why, "unexpected error"):
		return []string{opRule(o.kind)}
	}
	switch o.kind {
	case opPut:
		if strings.HasPrefix(why, "Put returned") {
			return []string{"PUT-1"}
		}
	case opGet:
		return getRules(o, why)
	case opList:
		return listRules(o, why)
	}
	return append([]string{opRule(o.kind)}, tupleRules(why)...)
}

// opRule is the rule of the basic effect of each operation.
func opRule(k opKind) string {
	return map[opKind]string{
		opPut: "PUT-4", opWrites: "WRITES-2", opGet: "GET-1", opList: "LIST-SCOPE-1",
		opDelete: "DELETE-1", opCopy: "COPY-1", opRuns: "RUNS-1", opPrune: "PRUNE-1",
	}[k]
}

// invalidOpRules maps an invalid op to the rule that says how it fails.
func invalidOpRules(o op) []string {
	switch {
	case o.kind == opPut && errors.Is(o.want, spec.ErrInvalidConfig):
		return []string{"ERR-1"}
	case o.kind == opPut && len(o.md) > 0 && o.md["bad"] != nil:
		return []string{"VALUE-5"}
	case o.kind == opPut, o.kind == opWrites && errors.Is(o.want, spec.ErrUnsupportedValue):
		return []string{"VALUE-4"}
	case o.kind == opWrites:
		return []string{"ERR-2"}
	case o.kind == opGet:
		return []string{"ERR-3"}
	}
	return []string{"ERR-4"}
}

// getRules attributes a GetTuple divergence.
func getRules(o op, why string) []string {
	switch {
	case strings.Contains(why, "want ErrNotFound"):
		return []string{"GET-3"}
	case strings.HasPrefix(why, "GetTuple: config:") && o.cfg.CheckpointID == "":
		return []string{"GET-2"}
	case strings.HasPrefix(why, "GetTuple: config:"):
		return []string{"GET-1"}
	}
	return tupleRules(why)
}

// listRules attributes a List divergence from the options left after
// shrinking.
func listRules(o op, why string) []string {
	if !strings.HasPrefix(why, "List: got [") {
		return tupleRules(why)
	}
	switch {
	case len(o.opts.Filter) > 0:
		return []string{"LIST-FILTER-1"}
	case o.opts.Before != "":
		return []string{"LIST-BEFORE-1"}
	case o.opts.Limit > 0:
		return []string{"LIST-LIMIT-1"}
	case o.opts.CheckpointID != "":
		return []string{"LIST-SCOPE-4"}
	case o.opts.ThreadID == "":
		return []string{"LIST-SCOPE-6"}
	case o.opts.AllNamespaces:
		return []string{"LIST-SCOPE-2"}
	}
	return []string{"LIST-SCOPE-3"}
}

// tupleRules attributes differences inside tuples (see diffTuple).
func tupleRules(why string) []string {
	var out []string
	for _, f := range []struct{ field, rule string }{
		{"config:", "GET-4"}, {"parent:", "GET-5"}, {"metadata (", "VALUE-6"},
		{"channel values (", "PUT-4"}, {"channel versions (", "PUT-10"}, {"checkpoint id/ts/v:", "PUT-10"},
		{"pending writes", "WRITES-2"},
	} {
		if strings.Contains(why, f.field) {
			out = append(out, f.rule)
		}
	}
	if len(out) == 0 {
		out = []string{"LIST-SCOPE-5"}
	}
	return out
}
