//go:build race

package preview_test

// raceSlowdown is how many times longer the race detector makes the tests' work.
const raceSlowdown = 10
