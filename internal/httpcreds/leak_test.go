package httpcreds

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind, such as a transport's idle
// connection.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
