//go:build !race

package mqttbridge

import "time"

// The bridges' nemesis's fixed seeds and the length of each one's faults in a plain run:
// the even ones on the embedded broker, the odd one on mosquitto when it is installed.
// Seed 6 catches an abortPrint sent past the lease, seeds 2 and 6 a cancel acting without its
// attempts, every seed a job printed despite its tombstone.
var bridgeNemesisSeeds = []uint64{2, 1, 6}

const bridgeNemesisFaults = 5 * time.Second
