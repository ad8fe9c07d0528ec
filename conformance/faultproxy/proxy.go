// Package faultproxy is a small TCP proxy that injects network faults on
// demand, deterministically: it cuts every connection once a given number
// of bytes has passed in one direction, and it can go down (drop every
// connection and reset new ones) and come back up. The conformance suite's
// faults group routes a saver's connections through it (SPEC.md FAULT-1,
// FAULT-2, FAULT-3).
//
// Cuts are driven by byte counts, never by time: CutAfter(Upstream, n)
// forwards exactly n more bytes from clients to the server, then closes
// every connection, so a test can sweep n across the bytes a call sends
// and receives and land a cut at each point of its exchange, including
// after the server got the whole request but before the client got the
// answer.
//
// It uses the standard library only, so importing the suite adds no
// dependency to an adapter's module.
package faultproxy

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Direction is the direction bytes travel through the proxy.
type Direction int

const (
	// Upstream is from the client (the saver) to the server.
	Upstream Direction = iota
	// Downstream is from the server to the client.
	Downstream
)

// String returns "upstream" or "downstream".
func (d Direction) String() string {
	if d == Upstream {
		return "upstream"
	}
	return "downstream"
}

// Counts are byte totals forwarded through a proxy since it started.
type Counts struct {
	Up, Down int64
}

// Of returns the count of direction d.
func (c Counts) Of(d Direction) int64 {
	if d == Upstream {
		return c.Up
	}
	return c.Down
}

// Sub returns c minus o, direction by direction.
func (c Counts) Sub(o Counts) Counts { return Counts{Up: c.Up - o.Up, Down: c.Down - o.Down} }

// Stats count what a proxy did to its connections.
type Stats struct {
	// Faults is the number of faults injected: cuts that fired plus the
	// times the proxy went down.
	Faults int
	// Dropped is the number of connections the proxy closed: by a fault,
	// by DropAll or by Close.
	Dropped int
	// Refused is the number of connections reset on arrival while down.
	Refused int
	// Accepted is the number of connections forwarded to the server.
	Accepted int
}

// dialTimeout bounds the proxy's dial to the server.
const dialTimeout = 10 * time.Second

// Proxy forwards TCP connections from its own address to a server's,
// injecting faults on demand. It is safe for concurrent use.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	links  map[*link]struct{}
	down   bool
	armed  bool
	cutDir Direction
	budget int64 // bytes still allowed in cutDir before the cut fires
	fired  bool  // the armed cut has fired
	stay   bool  // the armed cut leaves the proxy down
	counts Counts
	stats  Stats
	closed bool
	wg     sync.WaitGroup
}

// link is one proxied connection: the client's and the server's side.
type link struct {
	client, server net.Conn
	once           sync.Once
}

func (l *link) close() {
	l.once.Do(func() {
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

// Start listens on a free port of 127.0.0.1 and forwards every connection
// to upstream (host:port).
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the host:port clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstream returns the server's host:port.
func (p *Proxy) Upstream() string { return p.upstream }

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.dropAll()
	p.wg.Wait()
	return err
}

// Counts returns the bytes forwarded so far, per direction.
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// Stats returns what the proxy did to connections so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// CutAfter arms a cut: once n more bytes have been forwarded in direction
// d, counted over every connection, the next byte in that direction is
// not forwarded, every open connection is closed and the proxy goes down,
// resetting new connections until Up is called: the server is out of
// reach until the test says otherwise. A cut stays armed until it fires or
// Disarm is called; arming replaces a pending cut.
func (p *Proxy) CutAfter(d Direction, n int64) { p.arm(d, n, true) }

// BlipAfter arms a cut like CutAfter, except that the proxy accepts new
// connections again at once, as after a short network blip.
func (p *Proxy) BlipAfter(d Direction, n int64) { p.arm(d, n, false) }

func (p *Proxy) arm(d Direction, n int64, stay bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.cutDir, p.budget, p.fired, p.stay = true, d, max(n, 0), false, stay
}

// Disarm cancels a pending cut and reports whether the last armed cut
// fired.
func (p *Proxy) Disarm() (fired bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	return p.fired
}

// Down simulates a server that went away: every open connection is
// closed, and connections that arrive until Up are reset at once.
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	p.stats.Faults++
	p.mu.Unlock()
	p.dropAll()
}

// Up makes the proxy forward new connections again after Down.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// DropAll closes every open connection without counting a fault; new
// connections are accepted as usual. Use it to make sure a saver's pool
// holds no connection that saw an earlier fault.
func (p *Proxy) DropAll() { p.dropAll() }

// dropAll closes every open connection and returns how many there were.
func (p *Proxy) dropAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	clear(p.links)
	p.stats.Dropped += len(links)
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	return len(links)
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.mu.Lock()
		refuse := p.down || p.closed
		if refuse {
			p.stats.Refused++
		}
		p.mu.Unlock()
		if refuse {
			reset(c)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// reset closes c with an RST rather than a FIN, as a server that is not
// there does.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.upstream, dialTimeout)
	if err != nil {
		reset(client)
		return
	}
	l := &link{client: client, server: server}
	p.mu.Lock()
	if p.down || p.closed {
		p.stats.Refused++
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = struct{}{}
	p.stats.Accepted++
	p.mu.Unlock()

	done := make(chan struct{})
	go func() {
		p.pump(l, Downstream, server, client)
		close(done)
	}()
	p.pump(l, Upstream, client, server)
	<-done
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// pump copies src to dst in direction d until either side fails or a cut
// fires; then it closes both sides of the link.
func (p *Proxy) pump(l *link, d Direction, src, dst net.Conn) {
	defer l.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			k, cut := p.admit(d, n)
			if k > 0 {
				if _, werr := dst.Write(buf[:k]); werr != nil {
					return
				}
			}
			if cut {
				p.dropAll()
				return
			}
		}
		if err != nil {
			return // io.EOF or a closed connection: either way the link ends
		}
	}
}

// admit accounts for n bytes read in direction d and returns how many of
// them to forward, and whether the armed cut fires now.
func (p *Proxy) admit(d Direction, n int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := int64(n)
	cut := false
	if p.armed && p.cutDir == d {
		if k > p.budget {
			k, cut = p.budget, true
			p.armed, p.fired = false, true
			p.stats.Faults++
			if p.stay {
				p.down = true
			}
		} else {
			p.budget -= k
		}
	}
	if d == Upstream {
		p.counts.Up += k
	} else {
		p.counts.Down += k
	}
	return int(k), cut
}
