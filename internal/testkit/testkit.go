// Package testkit holds what the module's tests share (a goroutine-safe buffer, test
// certificates): it is imported by _test.go files only.
package testkit

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a command under test may write while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, as bytes.Buffer.Write does.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
