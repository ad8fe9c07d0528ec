package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// BenchmarkDepthRatio measures how read cost depends on history depth in a
// way that survives a noisy machine: a thread of depth 10 and one of depth
// 10,000 live in the same schema (bulk-loaded with COPY), and each round
// times one call against each, alternately, so that load from other
// processes hits both alike. It reports the median latency at each depth
// and their ratio (target: under 2).
func BenchmarkDepthRatio(b *testing.B) {
	s := newTestSaver(b)
	ctx := context.Background()
	shallow := seedHistory(b, s, "shallow", "", 10)
	deep := seedHistory(b, s, "deep", "", 10_000)
	analyze(b, s)
	type op struct {
		name string
		run  func(thread string, ids []string) error
	}
	list := func(opts spec.ListOptions, want int) error {
		n := 0
		for _, err := range s.List(ctx, opts) {
			if err != nil {
				return err
			}
			n++
		}
		if n != want {
			b.Fatalf("list %+v: %d tuples, want %d", opts, n, want)
		}
		return nil
	}
	ops := []op{
		{"GetTuple/latest", func(th string, _ []string) error {
			_, err := s.GetTuple(ctx, spec.Config{ThreadID: th})
			return err
		}},
		{"GetTuple/by-id", func(th string, ids []string) error {
			_, err := s.GetTuple(ctx, spec.Config{ThreadID: th, CheckpointID: ids[len(ids)/2]})
			return err
		}},
		{"List/limit=10", func(th string, _ []string) error {
			return list(spec.ListOptions{ThreadID: th, Limit: 10}, 10)
		}},
		{"List/before", func(th string, ids []string) error {
			return list(spec.ListOptions{ThreadID: th, Before: ids[len(ids)/2], Limit: 5}, 5)
		}},
		{"List/filter", func(th string, _ []string) error {
			return list(spec.ListOptions{ThreadID: th, Filter: spec.Metadata{"source": "loop", "parity": "even"}, Limit: 5}, 5)
		}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			var at10, at10k []time.Duration
			timed := func(th string, ids []string) time.Duration {
				start := time.Now()
				if err := o.run(th, ids); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					at10 = append(at10, timed("shallow", shallow))
					at10k = append(at10k, timed("deep", deep))
				} else {
					at10k = append(at10k, timed("deep", deep))
					at10 = append(at10, timed("shallow", shallow))
				}
			}
			m10, m10k := median(at10), median(at10k)
			b.ReportMetric(float64(m10.Microseconds()), "µs@depth10")
			b.ReportMetric(float64(m10k.Microseconds()), "µs@depth10k")
			b.ReportMetric(float64(m10k)/float64(m10), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
