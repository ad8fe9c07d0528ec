package faultproxy

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// echoServer accepts connections and echoes what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func roundTrip(t *testing.T, c net.Conn, msg []byte) ([]byte, error) {
	t.Helper()
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	got := make([]byte, len(msg))
	n, err := io.ReadFull(c, got)
	return got[:n], err
}

func TestForwardsAndCounts(t *testing.T) {
	p := startProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := roundTrip(t, c, []byte("hello"))
	if err != nil || string(got) != "hello" {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	if n := p.Counts(); n != (Counts{Up: 5, Down: 5}) {
		t.Fatalf("counts %+v, want 5 each way", n)
	}
}

func TestCutAfterUpstreamBytes(t *testing.T) {
	p := startProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.BlipAfter(Upstream, 3)
	got, err := roundTrip(t, c, []byte("hello"))
	if err == nil {
		t.Fatalf("round trip through a cut succeeded: %q", got)
	}
	if !bytes.Equal(got, []byte("hel")[:len(got)]) {
		t.Fatalf("got %q after the cut, want a prefix of %q", got, "hel")
	}
	if !p.Disarm() {
		t.Fatal("the cut did not fire")
	}
	if up := p.Counts().Up; up != 3 {
		t.Fatalf("%d bytes went upstream, want exactly 3", up)
	}
	if s := p.Stats(); s.Faults != 1 || s.Dropped != 1 {
		t.Fatalf("stats %+v, want one fault, one dropped connection", s)
	}
	// The network is back at once: a new connection works.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := roundTrip(t, c2, []byte("again")); err != nil || string(got) != "again" {
		t.Fatalf("after the cut: %q, %v", got, err)
	}
}

func TestCutDoesNotFireWithinBudget(t *testing.T) {
	p := startProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.CutAfter(Downstream, 5)
	if got, err := roundTrip(t, c, []byte("hello")); err != nil || string(got) != "hello" {
		t.Fatalf("round trip within the budget: %q, %v", got, err)
	}
	if p.Disarm() {
		t.Fatal("the cut fired within its budget")
	}
}

func TestDownAndUp(t *testing.T) {
	p := startProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(t, c, []byte("x")); err != nil {
		t.Fatal(err)
	}
	p.Down()
	if _, err := roundTrip(t, c, []byte("x")); err == nil {
		t.Fatal("an open connection survived Down")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if _, err := roundTrip(t, c2, []byte("x")); err == nil {
			t.Fatal("a new connection was forwarded while down")
		}
		c2.Close()
	}
	p.Up()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(t, c3, []byte("up")); err != nil || string(got) != "up" {
		t.Fatalf("after Up: %q, %v", got, err)
	}
	if s := p.Stats(); s.Faults != 1 || s.Refused != 1 || s.Dropped != 1 {
		t.Fatalf("stats %+v, want one fault, one dropped and one refused connection", s)
	}
}

func TestCutStaysDownUntilUp(t *testing.T) {
	p := startProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.CutAfter(Downstream, 0)
	if _, err := roundTrip(t, c, []byte("x")); err == nil {
		t.Fatal("round trip through a cut succeeded")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if _, err := roundTrip(t, c2, []byte("x")); err == nil {
			t.Fatal("a new connection was forwarded after a cut, before Up")
		}
		c2.Close()
	}
	p.Up()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(t, c3, []byte("up")); err != nil || string(got) != "up" {
		t.Fatalf("after Up: %q, %v", got, err)
	}
}
