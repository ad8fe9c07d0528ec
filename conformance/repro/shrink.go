package repro

// Shrink returns a shorter sequence for which keep still holds, by delta
// debugging: it removes chunks of half the sequence, then of a quarter,
// down to single elements, and repeats single-element removal until no
// element can go (a fixpoint: every element of the result is needed).
//
// keep reports whether a candidate still shows the failure; it may return
// a trimmed version of the candidate to continue from (for example the
// candidate cut after the element where the failure shows), or the
// candidate itself. seq is the first sequence for which keep held. At most
// budget calls of keep are made (no limit when budget <= 0); the best
// sequence found so far is returned when the budget runs out.
func Shrink[T any](seq []T, budget int, keep func([]T) ([]T, bool)) []T {
	runs := 0
	try := func(cand []T) bool {
		if len(cand) == 0 || (budget > 0 && runs >= budget) {
			return false
		}
		runs++
		if next, ok := keep(cand); ok {
			seq = next
			return true
		}
		return false
	}
	without := func(i, n int) []T {
		out := make([]T, 0, len(seq)-n)
		out = append(out, seq[:i]...)
		return append(out, seq[i+n:]...)
	}
	for chunk := len(seq) / 2; chunk > 1; chunk /= 2 {
		for i := 0; i+chunk <= len(seq); {
			if !try(without(i, chunk)) {
				i += chunk
			}
		}
	}
	for removed := true; removed; {
		removed = false
		for i := len(seq) - 1; i >= 0; i-- {
			if i < len(seq) && try(without(i, 1)) {
				removed = true
			}
		}
	}
	return seq
}
