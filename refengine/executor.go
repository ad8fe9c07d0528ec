package refengine

import "sync"

// Durability selects when a run's checkpoints and writes reach the saver.
type Durability string

const (
	// DurabilityAsync submits every Put and PutWrites in the background:
	// Puts are chained, writes are not ordered against them (the default).
	DurabilityAsync Durability = "async"
	// DurabilitySync is like async but waits for each superstep's Put
	// before starting the next superstep.
	DurabilitySync Durability = "sync"
	// DurabilityExit writes one checkpoint (and the pending writes of an
	// unfinished superstep) when the run ends.
	DurabilityExit Durability = "exit"
)

// executor runs a loop's saver calls the way LangGraph's background
// executor does. In deterministic mode every call runs on the caller's
// goroutine; async durability then lags each Put behind the writes of the
// following superstep, a legal LangGraph interleaving that makes adapters
// receive writes for checkpoints they have not stored yet.
type executor struct {
	deterministic bool
	durability    Durability

	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	prevPut  chan struct{}
	deferred func() error
}

func (e *executor) record(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
}

// failed returns the first error of a saver call so far.
func (e *executor) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// put submits a Put. The returned function waits for it.
func (e *executor) put(fn func() error) (wait func() error) {
	if e.deterministic {
		if e.durability == DurabilityAsync {
			prev := e.deferred
			e.deferred = fn
			if prev != nil {
				e.record(prev())
			}
			return e.failed
		}
		e.record(fn())
		return e.failed
	}
	prev, done := e.prevPut, make(chan struct{})
	e.prevPut = done
	e.wg.Go(func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		e.record(fn())
	})
	return func() error { <-done; return e.failed() }
}

// putWrites submits a PutWrites.
func (e *executor) putWrites(fn func() error) {
	if e.deterministic {
		e.record(fn())
		return
	}
	e.wg.Go(func() { e.record(fn()) })
}

// drain runs what is deferred, waits for everything and returns the first
// error.
func (e *executor) drain() error {
	if d := e.deferred; d != nil {
		e.deferred = nil
		e.record(d())
	}
	e.wg.Wait()
	return e.failed()
}
