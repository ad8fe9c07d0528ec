package refengine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Reserved node names, as LangGraph spells them.
const (
	// Start is the entry pseudo-node: AddEdge(Start, x) makes x run first.
	Start = "__start__"
	// End is the terminal pseudo-node: AddEdge(x, End) ends the run after x.
	End = "__end__"
	// InputTask, given to UpdateState as the node, applies the values as
	// new graph input (source "input").
	InputTask = "__input__"
	// CopyNode, given to UpdateState as the node, forks a checkpoint
	// unchanged (source "fork").
	CopyNode = "__copy__"
)

// Reserved channel names and prefixes.
const (
	// tasksChannel is the topic holding pending Send packets.
	tasksChannel = "__pregel_tasks"
	// noWritesChannel marks a task that finished without writes.
	noWritesChannel = "__no_writes__"
	// branchPrefix starts the name of the channel that triggers a node.
	branchPrefix = "branch:to:"
)

// State holds values of state keys, as plain values: the graph input given
// to Invoke, the state a node or router receives (or a Send's argument),
// and the values Invoke returns. As an [Input] it starts a new run.
type State map[string]any

// Update is what a node returns: values for state keys. Keys the graph does
// not declare are ignored, as LangGraph ignores them.
type Update map[string]any

// NodeFunc is a node of a graph. It receives the state as of the start of
// the superstep and returns the writes it makes.
type NodeFunc func(ctx context.Context, state State) (Update, error)

// Send schedules Node as a PUSH task with Arg as its input (LangGraph's
// Send), from a [Route].
type Send struct {
	// Node is the node to run.
	Node string
	// Arg is the state the node receives instead of the graph's.
	Arg State
}

// Route is what the router of a conditional edge returns: nodes to run next
// (End is dropped) and Sends to schedule.
type Route struct {
	// Nodes run in the next superstep.
	Nodes []string
	// Sends each run their node with their own argument.
	Sends []Send
}

// StateGraph builds a graph: state keys are channels, nodes are Go
// functions, and edges become LangGraph's channel layout (branch:to:X,
// join:A+B:X, __start__, __pregel_tasks). Methods record the first error,
// which Compile returns.
type StateGraph struct {
	keys     map[string]Channel
	nodes    []*node
	byName   map[string]*node
	startOut []string
	startRt  []router
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
	cmd      CommandFunc
	sub      *Graph
	calls    []*Graph // subgraphs fn calls (AddNodeCalling), for the state APIs
	start    bool
	triggers []string // sorted
	edges    []string // static targets (not End), sorted
	joins    []string // join channels this node writes its name to
	routers  []router
}

// router decides, from the state with the source node's own writes
// applied, where to go next (a conditional edge).
type router = func(ctx context.Context, state State) (Route, error)

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

func (g *StateGraph) addNode(n *node) *StateGraph {
	name := n.name
	switch {
	case name == "" || name == Start || name == End || strings.HasPrefix(name, "__"):
		return g.fail("node name %q is empty or reserved", name)
	case strings.ContainsAny(name, "|:"):
		return g.fail("node name %q contains '|' or ':'", name)
	case g.byName[name] != nil:
		return g.fail("node %q added twice", name)
	}
	g.nodes = append(g.nodes, n)
	g.byName[name] = n
	return g
}

// AddNode adds a node running fn.
func (g *StateGraph) AddNode(name string, fn NodeFunc) *StateGraph {
	if fn == nil {
		return g.fail("node %q has a nil function", name)
	}
	return g.addNode(&node{name: name, fn: fn})
}

// AddNodeCalling adds a node running fn, which calls the compiled graphs
// subs with Graph.InvokeFromNode, in that order (the first call's
// namespace is "name:taskID", the second "name:taskID|1", and so on).
// Naming them lets GetState (with StateOptions.Subgraphs), History,
// UpdateState and BulkUpdateState address their checkpoints through
// RunConfig.Namespace, as LangGraph finds the compiled graphs a node
// function refers to (Pregel.get_subgraphs, langgraph/pregel/main.py:1154).
// Running the node does not depend on them.
func (g *StateGraph) AddNodeCalling(name string, fn NodeFunc, subs ...*Graph) *StateGraph {
	if fn == nil {
		return g.fail("node %q has a nil function", name)
	}
	for _, sub := range subs {
		if sub == nil {
			return g.fail("node %q calls a nil subgraph", name)
		}
	}
	return g.addNode(&node{name: name, fn: fn, calls: slices.Clone(subs)})
}

// stateGraph returns the graph whose checkpoints live in the namespace of
// n's task: the subgraph it runs, or the first one its function calls.
func (n *node) stateGraph() *Graph {
	if n.sub != nil {
		return n.sub
	}
	if len(n.calls) > 0 {
		return n.calls[0]
	}
	return nil
}

// CommandFunc is a node that steers the graph with the [Command] it
// returns, as a LangGraph node returning a Command does: Command.Update
// writes state keys, Command.Goto names the nodes to run next (End is
// dropped) and Command.Sends schedule PUSH tasks, written like a
// conditional edge's routes, after the updates and before the node's
// static edges. Resume and ResumeMap belong to Invoke: a node returning
// them fails with ErrInvalidUpdate.
type CommandFunc func(ctx context.Context, state State) (Command, error)

// AddCommandNode adds a node running fn, which returns a Command.
func (g *StateGraph) AddCommandNode(name string, fn CommandFunc) *StateGraph {
	if fn == nil {
		return g.fail("node %q has a nil function", name)
	}
	return g.addNode(&node{name: name, cmd: fn})
}

// AddSubgraph adds a node that runs a compiled graph. The subgraph shares
// the parent's saver and runs in namespace "name:taskID" (nested with '|');
// its input is the parent's state and its final state keys that the parent
// declares become the node's update.
func (g *StateGraph) AddSubgraph(name string, sub *Graph) *StateGraph {
	if sub == nil {
		return g.fail("subgraph %q is nil", name)
	}
	return g.addNode(&node{name: name, sub: sub})
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
// (a named-barrier channel "join:a+b:to").
func (g *StateGraph) AddJoin(from []string, to string) *StateGraph {
	if len(from) < 2 {
		return g.fail("join into %q needs at least two sources", to)
	}
	g.joins = append(g.joins, join{sources: slices.Clone(from), target: to})
	return g
}

// AddConditionalEdges adds a router evaluated after from (or Start) runs:
// route receives the state with from's own writes applied and returns the
// nodes to run next and the Sends to schedule.
func (g *StateGraph) AddConditionalEdges(from string, route func(ctx context.Context, state State) (Route, error)) *StateGraph {
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

// CompileOptions configure Compile. The zero value compiles a graph without
// a saver, which is what a subgraph needs: it uses its parent's.
type CompileOptions struct {
	// Saver persists the graph's checkpoints and writes; Invoke needs one
	// on a root graph. Subgraphs use their parent's saver whatever they
	// were compiled with.
	Saver spec.Saver
	// InterruptBefore stops a run before any of these nodes runs ("*":
	// any node).
	InterruptBefore []string
	// InterruptAfter stops a run after a superstep in which any of these
	// nodes ran ("*": any node).
	InterruptAfter []string
	// Stateful makes the graph, when used as a subgraph, keep one
	// checkpoint lineage per thread (LangGraph's checkpointer=True): it
	// runs in the recast namespace (task IDs removed, e.g. "inner" or
	// "outer|inner"), so each invocation continues from the previous
	// one's state. It has no effect on a root graph.
	Stateful bool
}

// Compile validates the graph and lays it out in LangGraph's channels.
func (g *StateGraph) Compile(opts CompileOptions) (*Graph, error) {
	if g.err != nil {
		return nil, g.err
	}
	if len(g.startOut) == 0 && len(g.startRt) == 0 {
		return nil, fmt.Errorf("%w: no edge from %s", ErrInvalidGraph, Start)
	}
	out := &Graph{channels: map[string]Channel{}, byName: map[string]*node{}, saver: opts.Saver,
		interruptBefore: slices.Clone(opts.InterruptBefore), interruptAfter: slices.Clone(opts.InterruptAfter),
		stateful: opts.Stateful}
	for k, ch := range g.keys {
		out.keys = append(out.keys, k)
		out.channels[k] = ch
	}
	slices.Sort(out.keys)
	out.channels[Start] = Ephemeral()
	out.channels[tasksChannel] = Topic()

	known := func(name string) bool { return name == End || g.byName[name] != nil }
	start := &node{name: Start, start: true, triggers: []string{Start}, routers: g.startRt}
	out.nodes = append(out.nodes, start)
	out.byName[Start] = start
	for _, n := range g.nodes {
		c := *n
		c.edges, c.joins = nil, nil
		c.triggers = []string{branchPrefix + n.name}
		out.channels[branchPrefix+n.name] = Channel{kind: kindEphemeral} // unguarded
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
		out.channels[name] = namedBarrier(j.sources...)
		target.triggers = append(target.triggers, name)
		slices.Sort(target.triggers)
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
