//go:build race

package outbox

import "time"

// Under the race detector every process of the nemesis is several times slower: one seed,
// with shorter faults, keeps the package's run within its limits.
var nemesisSeeds = []uint64{1}

const nemesisFaults = 4 * time.Second
