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
		{"put ok", spec.ValidatePut(spec.Config{ThreadID: "t"}, cp), nil},
		{"put empty thread", spec.ValidatePut(spec.Config{}, cp), spec.ErrInvalidConfig},
		{"put empty id", spec.ValidatePut(spec.Config{ThreadID: "t"}, spec.Checkpoint{}), spec.ErrInvalidConfig},
		{"writes ok", spec.ValidatePutWrites(spec.Config{ThreadID: "t", CheckpointID: "1"}, nil, ""), nil},
		{"writes no id", spec.ValidatePutWrites(spec.Config{ThreadID: "t"}, nil, ""), spec.ErrInvalidConfig},
		{"writes no thread", spec.ValidatePutWrites(spec.Config{CheckpointID: "1"}, nil, ""), spec.ErrInvalidConfig},
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
