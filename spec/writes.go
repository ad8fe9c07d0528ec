package spec

// Special write channels. Writes to them have fixed negative indices (see
// [WriteIndex]) and are last-write-wins; every other write is
// first-write-wins.
const (
	ErrorChannel     = "__error__"
	ScheduledChannel = "__scheduled__"
	InterruptChannel = "__interrupt__"
	ResumeChannel    = "__resume__"
)

// NullTaskID is the task ID of writes not produced by a task, such as resume
// values and graph input.
const NullTaskID = "00000000-0000-0000-0000-000000000000"

var specialIndex = map[string]int{
	ErrorChannel:     -1,
	ScheduledChannel: -2,
	InterruptChannel: -3,
	ResumeChannel:    -4,
}

// WriteIndex returns the index under which the write at position (counting
// from 0 in the slice given to PutWrites) to channel is stored: the fixed
// negative index for a special channel, position otherwise.
func WriteIndex(channel string, position int) int {
	if idx, ok := specialIndex[channel]; ok {
		return idx
	}
	return position
}

// IsSpecialChannel reports whether writes to channel have a fixed negative
// index and last-write-wins semantics.
func IsSpecialChannel(channel string) bool {
	_, ok := specialIndex[channel]
	return ok
}
