package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

func init() { extraGroups = append(extraGroups, maintSpecs) }

// Sizes of the maintenance races: writers put and write, readers check
// what they see, one goroutine runs maintenance; 8 goroutines in all, so
// that a pooled saver uses several connections.
const (
	maintWriters = 4
	maintReaders = 3
	maintSteps   = 10
	// maintMinRounds and maintMaxRounds bound the maintenance calls of one
	// race: at least the first, also after the writers are done, so that
	// readers see maintenance at work however the goroutines are
	// scheduled; at most the second.
	maintMinRounds = 6
	maintMaxRounds = 200
	// maintCopies is the number of rounds of CopyThread, each of which
	// copies the whole thread into a thread of its own.
	maintCopies = 3
)

// maintTasks are the tasks that write to every checkpoint of a race, one
// PutWrites call each.
var maintTasks = []string{"task-a", "task-b"}

// maintCP is checkpoint id of a maintenance race: four channel values and
// metadata all derived from id, and the run ID run-(step mod 3).
func maintCP(id string, step int) (spec.Checkpoint, spec.Metadata, spec.Versions) {
	vals := map[string]any{}
	vers := spec.Versions{}
	for c := range 4 {
		ch := fmt.Sprintf("ch%d", c)
		vals[ch] = map[string]any{"of": id, "ch": ch, "l": []any{ch, id}}
		vers[ch] = spec.Version(id)
	}
	cp := cpOf(id, vals, vers)
	cp.V = 1 + step%4
	return cp, spec.Metadata{"id": id, "step": step, "run_id": fmt.Sprintf("run-%d", step%3)}, vers
}

// maintWrites are the writes of one task to checkpoint id: three writes,
// a special one among them.
func maintWrites(id, task string) []spec.Write {
	return []spec.Write{
		{Channel: "w", Value: id + "/" + task},
		{Channel: "v", Value: map[string]any{"task": task, "of": id}},
		{Channel: spec.InterruptChannel, Value: []any{id, task}},
	}
}

// intactNeeds are the prerequisites of every spec that judges tuples with
// checkIntact: it expects every value a Put listed, each stored under its
// own version (PUT-4, PUT-9), a tuple's
// config to name its checkpoint (GET-4) and the writes of each task apart
// from the others' (WRITES-6). A saver that breaks any of them
// fails such a spec wherever the scheduler lets a reader see a checkpoint,
// run after run differently, so the spec says nothing about its own rule
// and reads "not judged" instead of naming a concurrency rule.
var intactNeeds = []string{"PUT-4", "PUT-9", "GET-4", "WRITES-6"}

// conc5Needs are CONC-5's prerequisites: besides intactNeeds, it reads the
// latest checkpoint of a namespace (GET-2) and expects Prune(KeepLatest)
// to keep it when nothing runs alongside (PRUNE-1); a saver that breaks
// either fails it run after run differently.
var conc5Needs = append(slices.Clone(intactNeeds), "GET-2", "PRUNE-1")

// checkIntact returns an error unless t is a whole maintCP checkpoint:
// all its values, its metadata, and per task all or none of the writes of
// that task's PutWrites call.
func checkIntact(t *spec.Tuple) error {
	id := t.Config.CheckpointID
	if t.Metadata["id"] != id {
		return fmt.Errorf("checkpoint %s: torn, metadata %v", id, t.Metadata)
	}
	want, _, _ := maintCP(id, 0)
	if d := diffOf(t.Checkpoint.ChannelValues, want.ChannelValues); d != "" {
		return fmt.Errorf("checkpoint %s: torn, channel values (-want +got):\n%s", id, d)
	}
	byTask := map[string][]spec.PendingWrite{}
	for _, w := range t.PendingWrites {
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
	}
	for task, got := range byTask {
		var want []spec.PendingWrite
		for _, w := range maintWrites(id, task) {
			want = append(want, pw(task, w.Channel, w.Value))
		}
		if d := diffOf(sortWrites(got), sortWrites(want)); d != "" {
			return fmt.Errorf("checkpoint %s: the writes of one PutWrites call of %s are torn (-want +got):\n%s", id, task, d)
		}
	}
	return nil
}

// race runs maintWriters writers, maintReaders readers and one maintainer
// on thread t. write(w, j) makes writer w's step j; read(r) reads once and
// checks what it sees; maintain(round) runs one maintenance call. The
// maintainer runs until every writer is done and it has run minRounds
// times (at most maxRounds), readers until the writers and the
// maintainer are done. It returns every error.
func race(write func(w, j int) error, read func(r int) error, maintain func(round int) error, minRounds, maxRounds int) error {
	var writing atomic.Int32
	writing.Store(maintWriters + 1) // the writers and the maintainer
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	run := func(fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("panic: %v", r))
					mu.Unlock()
				}
			}()
			if err := fn(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	for w := range maintWriters {
		run(func() error {
			defer writing.Add(-1)
			for j := range maintSteps {
				if err := write(w, j); err != nil {
					return fmt.Errorf("writer %d step %d: %w", w, j, err)
				}
			}
			return nil
		})
	}
	for r := range maintReaders {
		run(func() error {
			for {
				done := writing.Load() == 0
				if err := read(r); err != nil {
					return fmt.Errorf("reader %d: %w", r, err)
				}
				if done {
					return nil
				}
			}
		})
	}
	run(func() error {
		defer writing.Add(-1)
		for round := 0; round < maxRounds; round++ {
			done := writing.Load() == 1 && round >= minRounds-1
			if err := watched(round, maintain, read); err != nil {
				return err
			}
			if done {
				return nil
			}
		}
		return nil
	})
	wg.Wait()
	return errors.Join(errs...)
}

// watched runs maintenance round round on its own goroutine and, until it
// returns, reads in a loop as one more reader does, so that some reads
// surely happen while the maintenance call runs.
func watched(round int, maintain func(round int) error, read func(r int) error) error {
	res := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				res <- fmt.Errorf("panic: %v", r)
			}
		}()
		res <- maintain(round)
	}()
	for {
		select {
		case err := <-res:
			if err != nil {
				return fmt.Errorf("maintenance round %d: %w", round, err)
			}
			return nil
		default:
		}
		if err := read(maintReaders); err != nil {
			<-res
			return fmt.Errorf("reader watching maintenance round %d: %w", round, err)
		}
	}
}

// readIntact reads thread th (its latest checkpoint and a short listing)
// and checks every tuple it sees with checkIntact.
func readIntact(ctx context.Context, s spec.Saver, th string) error {
	t, err := s.GetTuple(ctx, spec.Config{ThreadID: th})
	switch {
	case err == nil:
		if err := checkIntact(t); err != nil {
			return err
		}
	case !errors.Is(err, spec.ErrNotFound):
		return err
	}
	for t, err := range s.List(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true, Limit: 4}) {
		if err != nil {
			return err
		}
		if err := checkIntact(t); err != nil {
			return err
		}
	}
	return nil
}

// maintSpecs covers maintenance running alongside writes (CONC-4, CONC-5,
// CONC-6).
func maintSpecs(e *env) {
	g.Describe("Maintenance alongside writes", func() {
		// writeStep puts writer w's step j in thread th (namespace by
		// writer), chained to its previous step, then writes once per task.
		writeStep := func(ctx context.Context, th string, id func(w, j int) string) func(w, j int) error {
			return func(w, j int) error {
				parent := ""
				if j > 0 {
					parent = id(w, j-1)
				}
				ns := []string{"", "sub:1"}[w%2]
				cp, m, nv := maintCP(id(w, j), j)
				cfg, err := e.s.Put(ctx, spec.Config{ThreadID: th, Namespace: ns, CheckpointID: parent}, cp, m, nv)
				if err != nil {
					return err
				}
				for _, task := range maintTasks {
					if err := e.s.PutWrites(ctx, cfg, maintWrites(cp.ID, task), task, taskPath); err != nil {
						return err
					}
				}
				return nil
			}
		}
		workerID := func(w, j int) string { return fmt.Sprintf("w%d-%03d", w, j) }
		expectIntact := func(ctx context.Context, threads ...string) {
			g.GinkgoHelper()
			for _, t := range e.snapshot(ctx, threads...) {
				Expect(checkIntact(t)).To(Succeed())
			}
		}

		type maintenance struct {
			name   string
			labels g.Labels
			// call runs one round; dst names the thread it writes to, if
			// any, so readers check it too.
			call func(ctx context.Context, round int) error
			dst  func(round int) string
			need func()
			// needs are prerequisites beyond intactNeeds: a copy's
			// checkpoints are judged whole only if copying keeps
			// checkpoints and writes as they are (COPY-1, COPY-2).
			needs []string
		}
		var copies atomic.Int64
		for _, m := range []maintenance{
			{name: "DeleteThread", labels: lConc, call: func(ctx context.Context, _ int) error { return e.s.DeleteThread(ctx, "t") }},
			{name: "Prune", labels: lPrune, need: func() { e.pruner() }, call: func(ctx context.Context, round int) error {
				return e.s.(spec.Pruner).Prune(ctx, []string{"t"}, []spec.PruneStrategy{spec.KeepLatest, spec.DeleteAll}[round%2])
			}},
			{name: "DeleteForRuns", labels: lRuns, need: func() { e.runDeleter() }, call: func(ctx context.Context, round int) error {
				return e.s.(spec.RunDeleter).DeleteForRuns(ctx, []string{fmt.Sprintf("run-%d", round%3)})
			}},
			{name: "CopyThread", labels: lCopy, need: func() { e.copier() }, call: func(ctx context.Context, round int) error {
				copies.Store(int64(round + 1))
				return e.s.(spec.ThreadCopier).CopyThread(ctx, "t", fmt.Sprintf("copy-%d", round))
			}, dst: func(round int) string { return fmt.Sprintf("copy-%d", round) }, needs: []string{"COPY-1", "COPY-2"}},
		} {
			checkNeeds(fmt.Sprintf("[CONC-4] never tears a checkpoint or a PutWrites call when %s runs alongside Put and PutWrites on the same thread", m.name), append(slices.Clone(intactNeeds), m.needs...), m.labels, func(ctx context.Context) {
				if m.need != nil {
					m.need()
				}
				copies.Store(0)
				read := func(int) error {
					if n := copies.Load(); m.dst != nil && n > 0 {
						if err := readIntact(ctx, e.s, m.dst(int(n-1))); err != nil {
							return err
						}
					}
					return readIntact(ctx, e.s, "t")
				}
				minRounds, maxRounds := maintMinRounds, maintMaxRounds
				if m.dst != nil {
					minRounds, maxRounds = maintCopies, maintCopies
				}
				Expect(race(writeStep(ctx, "t", workerID), read, func(round int) error { return m.call(ctx, round) }, minRounds, maxRounds)).To(Succeed())
				threads := []string{"t"}
				for i := range copies.Load() {
					threads = append(threads, m.dst(int(i)))
				}
				expectIntact(ctx, threads...)
			})
		}

		checkNeeds("[CONC-5] Prune(KeepLatest) never deletes a checkpoint newer than the one it keeps while Puts land", conc5Needs, lPrune, func(ctx context.Context) {
			p := e.pruner()
			// IDs grow across writers, so the latest checkpoint of a
			// namespace is the one with the greatest ID put there so far.
			var next atomic.Int64
			var mu sync.Mutex
			ids := map[[2]int]string{}
			newest := map[string]string{}
			id := func(w, j int) string {
				mu.Lock()
				defer mu.Unlock()
				k := [2]int{w, j}
				if ids[k] == "" {
					ids[k] = fmt.Sprintf("%06d", next.Add(1))
				}
				return ids[k]
			}
			put := writeStep(ctx, "t", id)
			write := func(w, j int) error {
				if err := put(w, j); err != nil {
					return err
				}
				ns := []string{"", "sub:1"}[w%2]
				mine := id(w, j)
				mu.Lock()
				newest[ns] = max(newest[ns], mine)
				mu.Unlock()
				// Whatever Prune did meanwhile, the latest checkpoint is at
				// least this one: Prune keeps the latest and deletes only
				// older ones.
				t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: ns})
				if err != nil {
					return fmt.Errorf("latest of %q after putting %s: %w", ns, mine, err)
				}
				if t.Config.CheckpointID < mine {
					return fmt.Errorf("latest of %q is %s after %s was put: Prune deleted a newer checkpoint than the one it kept", ns, t.Config.CheckpointID, mine)
				}
				return nil
			}
			// Readers check the same: the latest checkpoint of a namespace
			// is never older than the newest one whose Put has returned.
			read := func(int) error {
				for _, ns := range []string{"", "sub:1"} {
					mu.Lock()
					want := newest[ns]
					mu.Unlock()
					if want == "" {
						continue
					}
					t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: ns})
					if err != nil {
						return fmt.Errorf("latest of %q once %s was put: %w", ns, want, err)
					}
					if t.Config.CheckpointID < want {
						return fmt.Errorf("latest of %q is %s once %s was put: Prune deleted a newer checkpoint than the one it kept", ns, t.Config.CheckpointID, want)
					}
				}
				return readIntact(ctx, e.s, "t")
			}
			Expect(race(write, read, func(int) error { return p.Prune(ctx, []string{"t"}, spec.KeepLatest) }, maintMinRounds, maintMaxRounds)).To(Succeed())
			for ns, want := range newest {
				Expect(e.get(ctx, "t", ns, "").Config.CheckpointID).To(Equal(want), "latest of namespace %q after the race", ns)
			}
			expectIntact(ctx, "t")
		})

		checkNeeds("[CONC-6] DeleteThread removes every checkpoint put before it was called and leaves concurrent Puts whole or absent", intactNeeds, lConc, func(ctx context.Context) {
			var mu sync.Mutex
			var done []spec.Config // Puts that returned since the last DeleteThread call
			put := writeStep(ctx, "t", workerID)
			write := func(w, j int) error {
				if err := put(w, j); err != nil {
					return err
				}
				mu.Lock()
				done = append(done, spec.Config{ThreadID: "t", Namespace: []string{"", "sub:1"}[w%2], CheckpointID: workerID(w, j)})
				mu.Unlock()
				return nil
			}
			read := func(int) error { return readIntact(ctx, e.s, "t") }
			deleteThread := func(int) error {
				mu.Lock()
				before := done
				done = nil
				mu.Unlock()
				if err := e.s.DeleteThread(ctx, "t"); err != nil {
					return err
				}
				for _, cfg := range before {
					t, err := e.s.GetTuple(ctx, cfg)
					if err == nil {
						return fmt.Errorf("checkpoint %s survived a DeleteThread called after its Put returned", keyString(t.Config))
					}
					if !errors.Is(err, spec.ErrNotFound) {
						return err
					}
				}
				return nil
			}
			Expect(race(write, read, deleteThread, maintMinRounds, maintMaxRounds)).To(Succeed())
			expectIntact(ctx, "t")
		})
	})
}
