//go:build !race

package mqttbridge

import "time"

// The bridges' nemesis's fixed seeds and the length of each one's faults in a plain run:
// the even ones on the embedded broker, the odd one on mosquitto when it is installed.
var bridgeNemesisSeeds = []uint64{2, 1}

const bridgeNemesisFaults = 5 * time.Second
