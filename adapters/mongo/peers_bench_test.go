package mongo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
)

// BenchmarkPeersCommands is the profile behind the MongoDB rows of
// docs/benchmarks.md. A Go CPU profile of a read on FerretDB shows a client
// waiting for the server; this shows what the server is asked and where its
// time goes. It runs the reads of the peer workload (benchmarks.PopulatePeer:
// Get latest and List(10)) at depths 10 and 300 and reports, per command
// and collection, the commands sent per call ("find.checkpoints-cmds/op"),
// the documents their replies returned ("find.checkpoints-docs/op", from
// the cursor batches) and their round-trip time as the driver measured it
// ("find.checkpoints-ms/op"), and the totals per call ("cmds/op",
// "docs/op"). One call before the count keeps the client's connecting
// out of it.
func BenchmarkPeersCommands(b *testing.B) {
	ctx := context.Background()
	log := newCommandLog()
	c := monitoredClient(b, log)
	for _, depth := range []int{10, 300} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			s, cleanup, err := newSaver(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cleanup)
			p := benchmarks.PopulatePeer(b, s, depth)
			reads := []struct {
				name string
				call func(context.Context) error
			}{
				{"Get", func(ctx context.Context) error { _, err := p.Get(ctx); return err }},
				{"List", func(ctx context.Context) error { _, err := p.List(ctx); return err }},
			}
			for _, r := range reads {
				b.Run(r.name, func(b *testing.B) {
					if err := r.call(ctx); err != nil {
						b.Fatal(err)
					}
					log.reset()
					calls := 0
					for b.Loop() {
						if err := r.call(ctx); err != nil {
							b.Fatal(err)
						}
						calls++
					}
					counts, took := log.snapshot()
					docs := log.documents()
					perCall := func(n int) float64 { return float64(n) / float64(calls) }
					cmds, returned := 0, 0
					for key, n := range counts {
						name := strings.ReplaceAll(strings.TrimSpace(key), " ", ".")
						b.ReportMetric(perCall(n), name+"-cmds/op")
						b.ReportMetric(perCall(docs[key]), name+"-docs/op")
						b.ReportMetric(float64(took[key].Microseconds())/1e3/float64(calls), name+"-ms/op")
						cmds += n
						returned += docs[key]
					}
					b.ReportMetric(perCall(cmds), "cmds/op")
					b.ReportMetric(perCall(returned), "docs/op")
				})
			}
		})
	}
}
