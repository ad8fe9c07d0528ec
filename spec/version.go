package spec

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
)

// NextVersion returns the version after current in the layout LangGraph's
// SQL and in-memory savers use: the integer part of current plus one, zero
// padded to 32 digits, then '.' and a random fraction. The padding makes
// string order follow the counter; the random fraction keeps versions minted
// on two forks of one thread distinct, so per-version value storage never
// lets one branch read the other's value. An empty or unparsable current
// counts as 0.
func NextVersion(current Version) Version {
	n := versionInt(current)
	n.Add(n, big.NewInt(1))
	return Version(fmt.Sprintf("%032s.%016d", n.String(), rand.Int64N(1e16)))
}

// CompareVersions orders versions by the integer before their first '.'
// (an empty or unparsable integer part counts as 0), then, for equal
// integers, by the whole string. It returns -1, 0 or +1.
func CompareVersions(a, b Version) int {
	if c := versionInt(a).Cmp(versionInt(b)); c != 0 {
		return c
	}
	return strings.Compare(string(a), string(b))
}

// MaxVersion returns the greatest version in vs under [CompareVersions], or
// "" when vs is empty.
func MaxVersion(vs Versions) Version {
	var m Version
	for _, v := range vs {
		if m == "" || CompareVersions(v, m) > 0 {
			m = v
		}
	}
	return m
}

func versionInt(v Version) *big.Int {
	s, _, _ := strings.Cut(string(v), ".")
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 {
		return new(big.Int)
	}
	return n
}
