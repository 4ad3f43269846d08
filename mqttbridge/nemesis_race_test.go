//go:build race

package mqttbridge

import "time"

// Under the race detector every process of the nemesis is several times slower: one seed,
// with shorter faults, on the embedded broker, keeps the package's run within its limits.
var bridgeNemesisSeeds = []uint64{6}

const bridgeNemesisFaults = 4 * time.Second
