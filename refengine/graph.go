package refengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Reserved node and channel names, as LangGraph spells them.
const (
	// Start is the entry pseudo-node; its channel receives the graph input.
	Start = "__start__"
	// End is the terminal pseudo-node.
	End = "__end__"
	// TasksChannel is the topic holding pending Send packets.
	TasksChannel = "__pregel_tasks"
	// InputTask is the name of the pseudo-task applying input and null writes.
	InputTask = "__input__"
	// NoWritesChannel marks a task that finished without writes.
	NoWritesChannel = "__no_writes__"
	// CopyNode, given to UpdateState as the node, forks a checkpoint.
	CopyNode = "__copy__"
	// branchPrefix starts the name of the channel that triggers a node.
	branchPrefix = "branch:to:"
)

// ErrInvalidGraph reports a graph definition that cannot be compiled.
var ErrInvalidGraph = errors.New("refengine: invalid graph")

// State is the input of a node: the graph's state keys (or a Send's
// argument), as plain values.
type State map[string]any

// Update is what a node returns: values for state keys. Keys the graph does
// not declare are ignored, as LangGraph ignores them.
type Update map[string]any

// NodeFunc is a node of a graph. It receives the state as of the start of
// the superstep and returns the writes it makes.
type NodeFunc func(ctx context.Context, state State) (Update, error)

// Send schedules node as a PUSH task with Arg as its input.
type Send struct {
	Node string
	Arg  State
}

// Route is the result of a [Router]: nodes to run next (End is dropped) and
// Sends to schedule.
type Route struct {
	Nodes []string
	Sends []Send
}

// To is a Route to nodes.
func To(nodes ...string) Route { return Route{Nodes: nodes} }

// Router decides, from the state with the source node's own writes applied,
// where to go next (a conditional edge).
type Router func(ctx context.Context, state State) (Route, error)

// StateGraph builds a graph: state keys are channels, nodes are Go
// functions, and edges become LangGraph's channel layout (branch:to:X,
// join:A+B:X, __start__, __pregel_tasks). Methods record the first error,
// which Compile returns.
type StateGraph struct {
	keys     map[string]Channel
	nodes    []*node
	byName   map[string]*node
	startOut []string
	startRt  []Router
	joins    []join
	err      error
}

type join struct {
	sources []string
	target  string
}

type node struct {
	name     string
	fn       NodeFunc
	sub      *Graph
	start    bool
	triggers []string // sorted
	edges    []string // static targets (not End), sorted
	joins    []string // join channels this node writes its name to
	routers  []Router
}

// NewStateGraph returns an empty graph builder.
func NewStateGraph() *StateGraph {
	return &StateGraph{keys: map[string]Channel{}, byName: map[string]*node{}}
}

func (g *StateGraph) fail(format string, args ...any) *StateGraph {
	if g.err == nil {
		g.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidGraph}, args...)...)
	}
	return g
}

// AddKey declares a state key stored in a channel of kind ch.
func (g *StateGraph) AddKey(name string, ch Channel) *StateGraph {
	switch {
	case name == "" || strings.HasPrefix(name, "__") || strings.HasPrefix(name, branchPrefix) || strings.HasPrefix(name, "join:"):
		return g.fail("state key %q is empty or reserved", name)
	case ch.kind == kindReducer && ch.reduce == nil:
		return g.fail("state key %q: reducer without a function", name)
	}
	if _, dup := g.keys[name]; dup {
		return g.fail("state key %q declared twice", name)
	}
	g.keys[name] = ch
	return g
}

func (g *StateGraph) addNode(name string, fn NodeFunc, sub *Graph) *StateGraph {
	switch {
	case name == "" || name == Start || name == End || strings.HasPrefix(name, "__"):
		return g.fail("node name %q is empty or reserved", name)
	case strings.ContainsAny(name, "|:"):
		return g.fail("node name %q contains '|' or ':'", name)
	case g.byName[name] != nil:
		return g.fail("node %q added twice", name)
	}
	n := &node{name: name, fn: fn, sub: sub}
	g.nodes = append(g.nodes, n)
	g.byName[name] = n
	return g
}

// AddNode adds a node running fn.
func (g *StateGraph) AddNode(name string, fn NodeFunc) *StateGraph {
	if fn == nil {
		return g.fail("node %q has a nil function", name)
	}
	return g.addNode(name, fn, nil)
}

// AddSubgraph adds a node that runs a compiled graph. The subgraph shares
// the parent's saver and runs in namespace "name:taskID" (nested with '|');
// its input is the parent's state and its final state keys that the parent
// declares become the node's update.
func (g *StateGraph) AddSubgraph(name string, sub *Graph) *StateGraph {
	if sub == nil {
		return g.fail("subgraph %q is nil", name)
	}
	return g.addNode(name, nil, sub)
}

// AddEdge adds a static edge; from may be Start and to may be End.
func (g *StateGraph) AddEdge(from, to string) *StateGraph {
	if from == End || to == Start {
		return g.fail("edge %s -> %s goes the wrong way", from, to)
	}
	if from == Start {
		g.startOut = append(g.startOut, to)
		return g
	}
	n := g.byName[from]
	if n == nil {
		return g.fail("edge from unknown node %q", from)
	}
	n.edges = append(n.edges, to)
	return g
}

// AddJoin adds a waiting edge: to runs once every node in from has run
// (a NamedBarrier channel "join:a+b:to").
func (g *StateGraph) AddJoin(from []string, to string) *StateGraph {
	if len(from) < 2 {
		return g.fail("join into %q needs at least two sources", to)
	}
	g.joins = append(g.joins, join{sources: slices.Clone(from), target: to})
	return g
}

// AddConditionalEdges adds a router evaluated after from (or Start) runs.
func (g *StateGraph) AddConditionalEdges(from string, route Router) *StateGraph {
	if route == nil {
		return g.fail("nil router from %q", from)
	}
	if from == Start {
		g.startRt = append(g.startRt, route)
		return g
	}
	n := g.byName[from]
	if n == nil {
		return g.fail("conditional edge from unknown node %q", from)
	}
	n.routers = append(n.routers, route)
	return g
}

// Graph is a compiled graph. It is immutable and safe for concurrent use;
// run it with Invoke, read it with GetState and History, and change its
// state with UpdateState.
type Graph struct {
	keys            []string // sorted state keys
	channels        map[string]Channel
	nodes           []*node // graph order: __start__ first
	byName          map[string]*node
	saver           spec.Saver
	interruptBefore []string
	interruptAfter  []string
	stateful        bool
}

// Option configures Compile.
type Option func(*Graph)

// WithSaver makes the graph persist through s. Subgraphs use their
// parent's saver whatever they were compiled with.
func WithSaver(s spec.Saver) Option { return func(g *Graph) { g.saver = s } }

// WithInterruptBefore stops a run before any of nodes runs ("*": any node).
func WithInterruptBefore(nodes ...string) Option {
	return func(g *Graph) { g.interruptBefore = slices.Clone(nodes) }
}

// Stateful makes the graph, when used as a subgraph, keep one checkpoint
// lineage per thread (LangGraph's checkpointer=True): it runs in the recast
// namespace (task IDs removed, e.g. "inner" or "outer|inner"), so each
// invocation continues from the previous one's state. It has no effect on a
// root graph.
func Stateful() Option { return func(g *Graph) { g.stateful = true } }

// WithInterruptAfter stops a run after a superstep in which any of nodes ran
// ("*": any node but the hidden start node).
func WithInterruptAfter(nodes ...string) Option {
	return func(g *Graph) { g.interruptAfter = slices.Clone(nodes) }
}

// Compile validates the graph and lays it out in LangGraph's channels.
func (g *StateGraph) Compile(opts ...Option) (*Graph, error) {
	if g.err != nil {
		return nil, g.err
	}
	if len(g.startOut) == 0 && len(g.startRt) == 0 {
		return nil, fmt.Errorf("%w: no edge from %s", ErrInvalidGraph, Start)
	}
	out := &Graph{channels: map[string]Channel{}, byName: map[string]*node{}}
	for k, ch := range g.keys {
		out.keys = append(out.keys, k)
		out.channels[k] = ch
	}
	slices.Sort(out.keys)
	out.channels[Start] = Ephemeral(true)
	out.channels[TasksChannel] = Topic(false)

	known := func(name string) bool { return name == End || g.byName[name] != nil }
	start := &node{name: Start, start: true, triggers: []string{Start}, routers: g.startRt}
	out.nodes = append(out.nodes, start)
	out.byName[Start] = start
	for _, n := range g.nodes {
		c := *n
		c.edges, c.joins = nil, nil
		c.triggers = []string{branchPrefix + n.name}
		out.channels[branchPrefix+n.name] = Ephemeral(false)
		out.nodes = append(out.nodes, &c)
		out.byName[n.name] = &c
	}
	addEdges := func(dst *node, targets []string) error {
		for _, t := range targets {
			if !known(t) {
				return fmt.Errorf("%w: edge from %q to unknown node %q", ErrInvalidGraph, dst.name, t)
			}
			if t != End && !slices.Contains(dst.edges, t) {
				dst.edges = append(dst.edges, t)
			}
		}
		slices.Sort(dst.edges)
		return nil
	}
	if err := addEdges(start, g.startOut); err != nil {
		return nil, err
	}
	for _, n := range g.nodes {
		if err := addEdges(out.byName[n.name], n.edges); err != nil {
			return nil, err
		}
	}
	for _, j := range g.joins {
		target := out.byName[j.target]
		if target == nil {
			return nil, fmt.Errorf("%w: join into unknown node %q", ErrInvalidGraph, j.target)
		}
		name := "join:" + strings.Join(j.sources, "+") + ":" + j.target
		for _, s := range j.sources {
			src := out.byName[s]
			if src == nil || src.start {
				return nil, fmt.Errorf("%w: join %s from unknown node %q", ErrInvalidGraph, name, s)
			}
			src.joins = append(src.joins, name)
		}
		out.channels[name] = NamedBarrier(j.sources...)
		target.triggers = append(target.triggers, name)
		slices.Sort(target.triggers)
	}
	for _, opt := range opts {
		opt(out)
	}
	for _, list := range [][]string{out.interruptBefore, out.interruptAfter} {
		for _, name := range list {
			if name != "*" && (out.byName[name] == nil || name == Start) {
				return nil, fmt.Errorf("%w: interrupt on unknown node %q", ErrInvalidGraph, name)
			}
		}
	}
	return out, nil
}

// isKey reports whether name is a state key of g.
func (g *Graph) isKey(name string) bool {
	_, ok := slices.BinarySearch(g.keys, name)
	return ok
}
