package spec_test

import (
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestNextVersion(t *testing.T) {
	v1 := spec.NextVersion("")
	if !strings.HasPrefix(string(v1), strings.Repeat("0", 31)+"1.") {
		t.Fatalf("first version %q", v1)
	}
	v2 := spec.NextVersion(v1)
	if spec.CompareVersions(v2, v1) <= 0 {
		t.Fatalf("%q not greater than %q", v2, v1)
	}
	if string(v2) <= string(v1) {
		t.Fatal("string order must follow the counter")
	}
	// Two forks from the same version mint distinct versions.
	a, b := spec.NextVersion(v1), spec.NextVersion(v1)
	if a == b {
		t.Fatalf("forks minted the same version %q", a)
	}
	if got := spec.NextVersion("7"); !strings.HasPrefix(string(got), strings.Repeat("0", 31)+"8.") {
		t.Fatalf("NextVersion(7) = %q", got)
	}
	if got := spec.NextVersion("garbage"); spec.CompareVersions(got, "1") != 0 && !strings.HasPrefix(string(got), strings.Repeat("0", 31)+"1.") {
		t.Fatalf("NextVersion(garbage) = %q", got)
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b spec.Version
		want int
	}{
		{"", "", 0},
		{"1", "2", -1},
		{"10", "9", 1},
		{"00000000000000000000000000000002.0.1", "3", -1},
		{"5.1", "5.1", 0},
		{"5.1", "5.2", -1},
		{"", "1", -1},
		{"123456789012345678901234567890123", "9", 1},
	}
	for _, tt := range tests {
		if got := spec.CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := spec.CompareVersions(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	if m := spec.MaxVersion(spec.Versions{"a": "3", "b": "10", "c": "9"}); m != "10" {
		t.Fatalf("MaxVersion = %q", m)
	}
}

func FuzzVersionOrder(f *testing.F) {
	f.Add(uint64(0), uint16(3))
	f.Fuzz(func(t *testing.T, start uint64, steps uint16) {
		v := spec.Version("")
		if start > 0 {
			v = spec.Version(strings.Repeat("0", 5) + string(rune('0'+start%10)))
		}
		for range steps % 64 {
			next := spec.NextVersion(v)
			if spec.CompareVersions(next, v) <= 0 {
				t.Fatalf("NextVersion(%q) = %q is not greater", v, next)
			}
			if v != "" && len(v) == len(next) && string(next) <= string(v) {
				t.Fatalf("string order broken: %q then %q", v, next)
			}
			v = next
		}
	})
}
