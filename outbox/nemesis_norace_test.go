//go:build !race

package outbox

import "time"

// The nemesis's fixed seeds and the length of each one's faults in a plain run: together
// within a minute on a small, busy machine.
var nemesisSeeds = []uint64{1, 2, 3}

const nemesisFaults = 5 * time.Second
