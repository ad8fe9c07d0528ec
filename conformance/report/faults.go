package report

import "fmt"

// FaultCounts tally what the specs of the faults capability did to a
// saver (SPEC.md FAULT-1, -2, -3); the report sums them per harness.
type FaultCounts struct {
	// Injected is the number of faults the proxy injected: cuts that
	// fired and times the connection path went down.
	Injected int `json:"injected"`
	// Cut is the number of saver calls a fault landed in.
	Cut int `json:"cut"`
	// Failed is the number of cut calls that returned an error;
	// Recovered the number that succeeded anyway (a driver or saver
	// retry).
	Failed    int `json:"failed"`
	Recovered int `json:"recovered"`
	// Checked is the number of outcomes compared with the state before
	// and after the call; Partial the number that were neither.
	Checked int `json:"checked"`
	Partial int `json:"partial"`
}

// Add adds o to c.
func (c *FaultCounts) Add(o FaultCounts) {
	c.Injected += o.Injected
	c.Cut += o.Cut
	c.Failed += o.Failed
	c.Recovered += o.Recovered
	c.Checked += o.Checked
	c.Partial += o.Partial
}

// String is the one-line summary the suite logs and prints.
func (c FaultCounts) String() string {
	return fmt.Sprintf("%d faults injected, %d operations cut (%d failed, %d recovered by a retry), %d outcomes checked, %d partial",
		c.Injected, c.Cut, c.Failed, c.Recovered, c.Checked, c.Partial)
}
