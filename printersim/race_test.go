//go:build race

package printersim

// raceDetector is true when the tests run under the race detector, which makes the soak test
// shorter: the plain run keeps its full length.
const raceDetector = true
