package sqlite

import "sync"

// pageLoad is the scratch space of one loadContents: key lists, argument
// lists, write runs. Nothing in it outlives the call (the tuples get fresh
// maps and slices), so it is recycled (pageLoads), with its buffers.
type pageLoad struct {
	vs    valueSet
	ws    writeSet
	args  []any
	boxes []boxedString
	recs  []pageWrite
}

// boxedString is a string and the interface value holding it.
type boxedString struct {
	s string
	v any
}

// maxBoxes bounds the strings a pageLoad keeps boxed.
const maxBoxes = 8

// box returns s as an interface value. Boxing a string allocates, so the
// strings a page's statements bind again and again (thread, namespace,
// channel names) are boxed once.
func (l *pageLoad) box(s string) any {
	for _, b := range l.boxes {
		if b.s == s {
			return b.v
		}
	}
	v := any(s)
	if len(l.boxes) < maxBoxes {
		l.boxes = append(l.boxes, boxedString{s, v})
	}
	return v
}

var pageLoads = sync.Pool{New: func() any { return new(pageLoad) }}

// maxPooledKeys bounds the key lists a recycled pageLoad keeps; one used
// for a larger page is left to the collector.
const maxPooledKeys = 1024

// release drops every reference l holds (values, tuples, strings sharing
// row buffers) and returns it to pageLoads.
func (l *pageLoad) release() {
	if cap(l.vs.keys) > maxPooledKeys || cap(l.vs.refs) > 4*maxPooledKeys || cap(l.ws.runs) > maxPooledKeys || cap(l.args) > 4*maxPooledKeys ||
		cap(l.recs) > 4*maxPooledKeys {
		return
	}
	clear(l.vs.keys[:cap(l.vs.keys)])
	clear(l.vs.vals[:cap(l.vs.vals)])
	clear(l.vs.pos)
	clear(l.vs.refs[:cap(l.vs.refs)])
	clear(l.args[:cap(l.args)])
	clear(l.boxes[:cap(l.boxes)])
	clear(l.ws.runs[:cap(l.ws.runs)])
	clear(l.ws.byKey)
	clear(l.recs[:cap(l.recs)])
	l.recs = l.recs[:0]
	l.vs = valueSet{keys: l.vs.keys[:0], vals: l.vs.vals[:0], pos: l.vs.pos, refs: l.vs.refs[:0]}
	l.ws = writeSet{runs: l.ws.runs[:0], byKey: l.ws.byKey}
	l.args = l.args[:0]
	l.boxes = l.boxes[:0]
	pageLoads.Put(l)
}
