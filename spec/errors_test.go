package spec_test

import (
	"errors"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestValidation(t *testing.T) {
	cp := spec.Checkpoint{ID: "1"}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"put ok", spec.ValidatePut(spec.Config{ThreadID: "t"}, cp, nil), nil},
		{"put empty thread", spec.ValidatePut(spec.Config{}, cp, nil), spec.ErrInvalidConfig},
		{"put empty id", spec.ValidatePut(spec.Config{ThreadID: "t"}, spec.Checkpoint{}, nil), spec.ErrInvalidConfig},
		{"writes ok", spec.ValidatePutWrites(spec.Config{ThreadID: "t", CheckpointID: "1"}, nil, "", ""), nil},
		{"writes no id", spec.ValidatePutWrites(spec.Config{ThreadID: "t"}, nil, "", ""), spec.ErrInvalidConfig},
		{"writes no thread", spec.ValidatePutWrites(spec.Config{CheckpointID: "1"}, nil, "", ""), spec.ErrInvalidConfig},
		{"get no thread", spec.ValidateGetTuple(spec.Config{}), spec.ErrInvalidConfig},
		{"list negative limit", spec.ValidateList(spec.ListOptions{Limit: -1}), spec.ErrInvalidArgument},
		{"list bad filter", spec.ValidateList(spec.ListOptions{Filter: spec.Metadata{"b": []byte("x")}}), spec.ErrUnsupportedValue},
		{"list ok", spec.ValidateList(spec.ListOptions{Limit: 3}), nil},
		{"thread empty", spec.ValidateThreadID("delete thread", ""), spec.ErrInvalidConfig},
		{"strategy unknown", spec.PruneStrategy(9).Validate(), spec.ErrInvalidArgument},
		{"strategy ok", spec.DeleteAll.Validate(), nil},
	}
	for _, tt := range tests {
		if tt.want == nil && tt.err != nil || tt.want != nil && !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.err, tt.want)
		}
	}
}

// TestValidateOddBytes: NUL and invalid UTF-8 are rejected with
// ErrInvalidConfig wherever an identifier, task path or version can hold
// them, and accepted everywhere else that the contract leaves free (TS,
// values, metadata are checked by Normalize and NormalizeMetadata).
func TestValidateOddBytes(t *testing.T) {
	cfg := spec.Config{ThreadID: "t", CheckpointID: "p"}
	ok := spec.Checkpoint{
		ID: "1", TS: "\x00\xff free", ChannelValues: map[string]any{"a": "\x00"},
		ChannelVersions: spec.Versions{"a": "1"}, VersionsSeen: map[string]spec.Versions{"n": {"a": "1"}},
		UpdatedChannels: []string{"a"},
	}
	if err := spec.ValidatePut(cfg, ok, spec.Versions{"a": "1"}); err != nil {
		t.Fatalf("valid put rejected: %v", err)
	}
	if err := spec.ValidatePutWrites(cfg, []spec.Write{{Channel: "a", Value: "\x00"}}, "task", "path|ü"); err != nil {
		t.Fatalf("valid writes rejected: %v", err)
	}
	for _, bad := range []string{"a\x00b", "\xff\xfe", "ok\xc3"} {
		mutate := map[string]func(cp *spec.Checkpoint, nv spec.Versions){
			"version":       func(cp *spec.Checkpoint, _ spec.Versions) { cp.ChannelVersions["a"] = spec.Version(bad) },
			"channel":       func(cp *spec.Checkpoint, _ spec.Versions) { cp.ChannelVersions[bad] = "1" },
			"value channel": func(cp *spec.Checkpoint, _ spec.Versions) { cp.ChannelValues[bad] = 1 },
			"new version":   func(_ *spec.Checkpoint, nv spec.Versions) { nv["a"] = spec.Version(bad) },
			"new channel":   func(_ *spec.Checkpoint, nv spec.Versions) { nv[bad] = "1" },
			"seen node":     func(cp *spec.Checkpoint, _ spec.Versions) { cp.VersionsSeen[bad] = spec.Versions{} },
			"seen version": func(cp *spec.Checkpoint, _ spec.Versions) {
				cp.VersionsSeen["n"] = spec.Versions{"a": spec.Version(bad)}
			},
			"updated channels": func(cp *spec.Checkpoint, _ spec.Versions) { cp.UpdatedChannels = []string{"a", bad} },
		}
		for name, m := range mutate {
			cp := ok
			cp.ChannelValues = map[string]any{"a": 1}
			cp.ChannelVersions = spec.Versions{"a": "1"}
			cp.VersionsSeen = map[string]spec.Versions{"n": {"a": "1"}}
			nv := spec.Versions{"a": "1"}
			m(&cp, nv)
			if err := spec.ValidatePut(cfg, cp, nv); !errors.Is(err, spec.ErrInvalidConfig) {
				t.Errorf("put with %q in the %s: error = %v, want ErrInvalidConfig", bad, name, err)
			}
		}
		if err := spec.ValidatePutWrites(cfg, nil, "task", bad); !errors.Is(err, spec.ErrInvalidConfig) {
			t.Errorf("writes with task path %q: error = %v, want ErrInvalidConfig", bad, err)
		}
		if err := spec.ValidatePutWrites(cfg, nil, bad, ""); !errors.Is(err, spec.ErrInvalidConfig) {
			t.Errorf("writes with task ID %q: error = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestWriteIndex(t *testing.T) {
	tests := []struct {
		channel string
		pos     int
		want    int
	}{
		{spec.ErrorChannel, 5, -1},
		{spec.ScheduledChannel, 0, -2},
		{spec.InterruptChannel, 1, -3},
		{spec.ResumeChannel, 2, -4},
		{"messages", 0, 0},
		{"messages", 3, 3},
	}
	for _, tt := range tests {
		if got := spec.WriteIndex(tt.channel, tt.pos); got != tt.want {
			t.Errorf("WriteIndex(%q, %d) = %d, want %d", tt.channel, tt.pos, got, tt.want)
		}
		if spec.IsSpecialChannel(tt.channel) != (tt.want < 0) {
			t.Errorf("IsSpecialChannel(%q) wrong", tt.channel)
		}
	}
	if spec.KeepLatest.String() != "KeepLatest" || spec.PruneStrategy(7).String() != "PruneStrategy(7)" {
		t.Error("PruneStrategy.String")
	}
}
