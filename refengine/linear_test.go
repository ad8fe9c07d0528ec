package refengine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

func linearGraph(t testing.TB, s spec.Saver, c *counter, opts ...refengine.Option) *refengine.Graph {
	g := refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", c.logNode("a")).
		AddNode("b", c.logNode("b")).
		AddEdge(refengine.Start, "a").
		AddEdge("a", "b").
		AddEdge("b", refengine.End)
	cg, err := g.Compile(append([]refengine.Option{refengine.WithSaver(s)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cg
}

func TestLinearDump(t *testing.T) {
	s := newSaver()
	c := newCounter("a", "b")
	g := linearGraph(t, s, c)
	res, err := g.Invoke(context.Background(), refengine.State{"q": "hi", "log": []any{}}, refengine.RunConfig{ThreadID: "t1", Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%+v\n", res)
	for _, tup := range history(t, s, "t1", "") {
		fmt.Printf("%s %v parent=%v\n  values=%v\n  versions=%v\n  seen=%v\n  updated=%v\n  writes=%v\n", tup.Config.CheckpointID, tup.Metadata, tup.Parent, tup.Checkpoint.ChannelValues, tup.Checkpoint.ChannelVersions, tup.Checkpoint.VersionsSeen, tup.Checkpoint.UpdatedChannels, tup.PendingWrites)
	}
}
