package spec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestNamespaces(t *testing.T) {
	recast := map[string]string{
		"":                       "",
		"parent:1f2a|child:9b|3": "parent|child",
		"node":                   "node",
		"a:1":                    "a",
		"a:1|b:2|c:3":            "a|b|c",
		"7|a:1":                  "a",
	}
	for in, want := range recast {
		if got := spec.RecastNamespace(in); got != want {
			t.Errorf("RecastNamespace(%q) = %q, want %q", in, got, want)
		}
	}
	if got := spec.ChildNamespace("", "sub", "t1"); got != "sub:t1" {
		t.Errorf("root child = %q", got)
	}
	if got := spec.ChildNamespace("a:1", "b", "2"); got != "a:1|b:2" {
		t.Errorf("nested child = %q", got)
	}
	if got := spec.SplitNamespace("a:1|b:2"); !reflect.DeepEqual(got, []string{"a:1", "b:2"}) {
		t.Errorf("split = %q", got)
	}
	if got := spec.SplitNamespace(""); got != nil {
		t.Errorf("split root = %q", got)
	}
	if got := spec.ParentNamespaces("a:1|b:2|c:3"); !reflect.DeepEqual(got, []string{"", "a:1", "a:1|b:2"}) {
		t.Errorf("parents = %q", got)
	}
}

func FuzzRecastNamespace(f *testing.F) {
	f.Add("parent", "1f2a", "child", "9b")
	f.Fuzz(func(t *testing.T, n1, t1, n2, t2 string) {
		for _, s := range []string{n1, t1, n2, t2} {
			if s == "" || strings.ContainsAny(s, spec.NSSep+spec.NSEnd) {
				return
			}
		}
		ns := spec.ChildNamespace(spec.ChildNamespace("", n1, t1), n2, t2)
		var want []string
		for _, n := range []string{n1, n2} {
			if strings.Trim(n, "0123456789") != "" {
				want = append(want, n)
			}
		}
		if got := spec.RecastNamespace(ns); got != strings.Join(want, spec.NSSep) {
			t.Fatalf("RecastNamespace(%q) = %q, want %q", ns, got, strings.Join(want, spec.NSSep))
		}
		if spec.RecastNamespace(spec.RecastNamespace(ns)) != spec.RecastNamespace(ns) {
			t.Fatal("recasting is not idempotent")
		}
	})
}
