package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind: a bridge, broker or client
// that outlives its stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
