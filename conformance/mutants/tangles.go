package mutants

import (
	"context"
	"fmt"
	"iter"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants modelled on how savers written without checkpointkit in mind
// fail: one behaviour that differs between two read paths, and LangGraph's
// own list(None). TestRootCauses stacks them with others the way such
// savers tangle.

func init() {
	register(Mutant{
		Name: "list-none-ignores-id", Rule: "LIST-SCOPE-6",
		Description: "A List of every thread ignores Namespace and CheckpointID, as LangGraph's list(None) does.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.ThreadID == "" {
					o.AllNamespaces, o.CheckpointID = true, ""
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "b", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{CheckpointID: "a"})
		},
	})
	register(Mutant{
		Name: "list-metadata-nul-kept", Rule: "VALUE-7",
		Description: "GetTuple returns metadata with NULs removed, List with the NULs the caller put: two read paths that disagree.",
		New: func() spec.Saver {
			w := wrap()
			n := &nulKeeper{}
			n.install(w)
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					for t, err := range w.Inner.List(ctx, o) {
						if t != nil {
							t.Metadata = n.restored(keyOf(t), t.Metadata)
						}
						if !yield(t, err) {
							return
						}
					}
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"s": "a\x00b"}, nil)
			for t, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
				if err != nil {
					return errKind(err)
				}
				return fmt.Sprintf("%q", t.Metadata["s"])
			}
			return "none"
		},
	})
}
