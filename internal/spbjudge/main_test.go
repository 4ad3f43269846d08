package spbjudge

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain looks for leaked goroutines: Start waits for the judge's process on one of its own,
// which must have ended once each test's judge is stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStartAndStop: a judge started and stopped with no edge node gives its verdicts as JSON;
// one started and left to the test's end is stopped then, its process waited for.
func TestStartAndStop(t *testing.T) {
	j := Start(t, "edge-node", Options{})
	res := j.Stop(t)
	t.Logf("%d verdicts with no edge node: %s", len(res), Summary(res))
	t.Run("left running", func(t *testing.T) {
		Start(t, "edge-node", Options{})
	})
}
