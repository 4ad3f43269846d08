//go:build race

package mqttbridge

// raceDetector says the race detector is on: the flood test, several times slower under it,
// skips, and the matrices run a subset of their cases (raceSubset).
const raceDetector = true
