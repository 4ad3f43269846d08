//go:build race

package pictures_test

// raceDetector is true under the race detector, which shortens the browser soak and makes the
// page's one-second bound a liveness timeout; the plain run keeps both.
const raceDetector = true
