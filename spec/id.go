package spec

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// gregorianOffset is the number of 100-ns ticks between 1582-10-15 (the UUID
// epoch) and 1970-01-01.
const gregorianOffset = 0x01B21DD213814000

var idClock struct {
	sync.Mutex
	last uint64
}

// NewCheckpointID returns a new checkpoint ID in the UUIDv6 layout used by
// LangGraph: a 60-bit timestamp in the most significant bits, version 6, the
// RFC 4122 variant, step masked to 14 bits as the clock sequence and 48 random
// bits. IDs from one process are strictly increasing as strings, even when the
// clock does not advance and callers run concurrently.
func NewCheckpointID(step int) string {
	now := uint64(time.Now().UnixNano()/100) + gregorianOffset
	idClock.Lock()
	if now <= idClock.last {
		now = idClock.last + 1
	}
	idClock.last = now
	idClock.Unlock()

	var b [16]byte
	ts := now & (1<<60 - 1)
	b[0] = byte(ts >> 52)
	b[1] = byte(ts >> 44)
	b[2] = byte(ts >> 36)
	b[3] = byte(ts >> 28)
	b[4] = byte(ts >> 20)
	b[5] = byte(ts >> 12)
	b[6] = 0x60 | byte(ts>>8)&0x0f
	b[7] = byte(ts)
	seq := uint16(step) & 0x3fff
	b[8] = 0x80 | byte(seq>>8)
	b[9] = byte(seq)
	_, _ = rand.Read(b[10:]) // crypto/rand.Read never fails on supported platforms

	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// CheckpointIDTime returns the creation time embedded in an ID made by
// [NewCheckpointID], and false when id is not in that layout.
func CheckpointIDTime(id string) (time.Time, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' || id[14] != '6' {
		return time.Time{}, false
	}
	var raw [8]byte
	hexPart := id[0:8] + id[9:13] + id[15:18]
	// 15 hex digits = 60 bits; left-pad to 16.
	if _, err := hex.Decode(raw[:], []byte("0"+hexPart)); err != nil {
		return time.Time{}, false
	}
	var ts uint64
	for _, c := range raw {
		ts = ts<<8 | uint64(c)
	}
	if ts < gregorianOffset {
		return time.Time{}, false
	}
	return time.Unix(0, int64(ts-gregorianOffset)*100).UTC(), true
}
