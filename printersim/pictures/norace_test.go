//go:build !race

package pictures_test

// raceDetector is true under the race detector, which shortens the browser soak; the plain run
// keeps its full length.
const raceDetector = false
