package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedUpToDate fails when conformance/recorder_caps_gen.go is not
// what the generator writes now: run go generate ./conformance.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../recorder_caps_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("conformance/recorder_caps_gen.go is stale: run go generate ./conformance")
	}
}

// TestEveryCombination checks that the generated switch names each of the
// 31 non-empty sets once.
func TestEveryCombination(t *testing.T) {
	src, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if n, want := bytes.Count(src, []byte("\tcase ")), 1<<len(capabilities)-1; n != want {
		t.Errorf("%d cases, want %d", n, want)
	}
}
