package ids

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
	"github.com/zeebo/xxh3"
)

// Vectors from pregel-semantics.md Appendix A (observed in LangGraph's own
// recorded test data, plus computed regression values).
func TestTaskVectors(t *testing.T) {
	cases := []struct {
		name  string
		cp    string
		parts []string
		want  string
	}{
		{"start", "1f00fd5f-2036-6ce4-bfff-ac42e9890362", []string{"__start__", "0", "__start__", Pull, "__start__"}, "a9e2a749-9870-1952-0a6c-b23b6729ffda"},
		{"rewrite_query", "1f00fd5f-2038-613e-8000-ce5ebe65eb97", []string{"rewrite_query", "1", "rewrite_query", Pull, "branch:to:rewrite_query"}, "d1c3a2d6-5ca2-d4c5-5217-35d86cce48a4"},
		{"analyzer_one", "1f00fd5f-2039-6354-8001-2c508c8dffd9", []string{"analyzer_one", "2", "analyzer_one", Pull, "branch:to:analyzer_one"}, "4e7cb70b-7e0f-52d0-d8aa-5439bd3f84de"},
		{"retriever_two", "1f00fd5f-2039-6354-8001-2c508c8dffd9", []string{"retriever_two", "2", "retriever_two", Pull, "branch:to:retriever_two"}, "abcbc448-cfba-ac2b-2e39-346808f20add"},
		{"qa", "1f00fd5f-2140-6fd6-8003-2051ce36b79c", []string{"qa", "4", "qa", Pull, "branch:to:qa"}, "2430f303-da9f-2e3e-738c-2e8ea28e8973"},
		{"push", "1f00fd5f-2038-613e-8000-ce5ebe65eb97", []string{"worker", "1", "worker", Push, "0"}, "dfcc433d-3273-2f3e-4cf8-6161f760d1bb"},
		{"nested", "1f00fd5f-2038-613e-8000-ce5ebe65eb97", []string{"sub:abc|x", "1", "x", Pull, "branch:to:x"}, "19dd5c84-1089-48fa-265f-d4bd2e111c81"},
	}
	for _, c := range cases {
		got, err := Task(c.cp, c.parts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: Task = %s, want %s", c.name, got, c.want)
		}
	}
	// The helpers the loop uses produce the same IDs.
	if got, _ := PullTask("1f00fd5f-2036-6ce4-bfff-ac42e9890362", "", 0, "__start__", []string{"__start__"}); got != "a9e2a749-9870-1952-0a6c-b23b6729ffda" {
		t.Errorf("PullTask = %s", got)
	}
	if got, _ := PushTask("1f00fd5f-2038-613e-8000-ce5ebe65eb97", "", 1, "worker", 0); got != "dfcc433d-3273-2f3e-4cf8-6161f760d1bb" {
		t.Errorf("PushTask = %s", got)
	}
	if got, _ := PullTask("1f00fd5f-2038-613e-8000-ce5ebe65eb97", "sub:abc", 1, "x", []string{"branch:to:x"}); got != "19dd5c84-1089-48fa-265f-d4bd2e111c81" {
		t.Errorf("nested PullTask = %s", got)
	}
}

func TestInterruptVector(t *testing.T) {
	if got := Interrupt("qa:2430f303-da9f-2e3e-738c-2e8ea28e8973"); got != "eff2fff5767e8a3390aad908ad68e1a5" {
		t.Errorf("Interrupt = %s", got)
	}
	b := xxh3.HashString128("abc").Bytes()
	if got := hex.EncodeToString(b[:]); got != "06b05ab6733a618578af5f94892f3950" {
		t.Errorf("xxh3(abc) = %s", got)
	}
}

func TestTaskRejectsBadCheckpointID(t *testing.T) {
	if _, err := Task("not-a-uuid", "x"); err == nil {
		t.Fatal("want error for a malformed checkpoint ID")
	}
	if _, err := Task("zz000000-0000-0000-0000-000000000000", "x"); err == nil {
		t.Fatal("want error for a non-hex checkpoint ID")
	}
}

func TestNodeNamespace(t *testing.T) {
	if got := NodeNamespace("", "a"); got != "a" {
		t.Errorf("root node namespace = %q", got)
	}
	if got := NodeNamespace("sub:1", "a"); got != "sub:1|a" {
		t.Errorf("nested node namespace = %q", got)
	}
}

func TestUUID5(t *testing.T) {
	// Python: str(uuid.uuid5(uuid.NAMESPACE_DNS, "python.org"))
	got, err := UUID5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org")
	if err != nil {
		t.Fatal(err)
	}
	if got != "886313e1-3b8a-5372-9b90-0c9aee199e5d" {
		t.Errorf("UUID5 = %s", got)
	}
}

func TestSequential(t *testing.T) {
	start := time.Date(2025, 4, 2, 15, 20, 1, 0, time.UTC)
	gen := Sequential(start)
	a, b := gen(-1), gen(0)
	if a >= b {
		t.Fatalf("IDs not increasing: %s, %s", a, b)
	}
	if a[19:23] != "bfff" || b[19:23] != "8000" {
		t.Errorf("clock sequence does not carry the step: %s %s", a, b)
	}
	ts, ok := spec.CheckpointIDTime(a)
	if !ok || ts.Sub(start) <= 0 || ts.Sub(start) > time.Microsecond {
		t.Errorf("embedded time %v (ok=%v), want just after %v", ts, ok, start)
	}
	if again := Sequential(start)(-1); again != a {
		t.Errorf("not reproducible: %s vs %s", again, a)
	}
}

// Vectors from LangGraph Python 1.2.24's _interrupt_id.
func TestInterruptAtVector(t *testing.T) {
	for _, c := range []struct {
		answered int
		want     string
	}{{0, "cd5e126d9acdae262744d89f15303bf5"}, {2, "a87e5a6deab8a1df2a71f53d8abffa41"}} {
		if got := InterruptAt("ask:1f0a", c.answered); got != c.want {
			t.Errorf("InterruptAt(ask:1f0a, %d) = %s, want %s", c.answered, got, c.want)
		}
	}
}
