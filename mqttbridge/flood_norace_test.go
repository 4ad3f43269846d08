//go:build !race

package mqttbridge

// raceDetector says the race detector is on: the flood test, several times slower under it,
// skips, the matrices run a subset of their cases (raceSubset), and allocation counts are
// not asserted.
const raceDetector = false
