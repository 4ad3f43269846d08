//go:build !race

package mqttbridge

// raceDetector says the race detector is on: the flood test, several times slower under it, skips.
const raceDetector = false
