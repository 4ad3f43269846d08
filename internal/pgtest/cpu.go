package pgtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// This file holds what a benchmark reads of the server's processes: their CPU time.

// clockTick is the unit of the times in /proc/PID/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// CPU returns the CPU time (user and system) the server's processes have used so far: the
// postmaster's, that of its processes still running (one per connection, and its workers),
// and that of those it has reaped. A benchmark reads it before and after to add the database's
// share to its own. ok is false for a server this package did not start, or where /proc
// cannot be read (not Linux).
func (s *Server) CPU() (cpu time.Duration, ok bool) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0, false
	}
	root := cmd.Process.Pid
	ppid, own, reaped, ok := procTimes(root)
	if !ok || ppid == 0 {
		return 0, false
	}
	total := own + reaped
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == root {
			continue
		}
		// The server's processes are the postmaster's children; their own children are
		// counted in their reaped time when they exit, and none are long-lived.
		if pp, own, _, ok := procTimes(pid); ok && pp == root {
			total += own
		}
	}
	return total * clockTick, true
}

// procTimes reads /proc/pid/stat: the parent's pid, the process's own user and system ticks,
// and those of its children it has waited for.
func procTimes(pid int) (ppid int, own, reaped time.Duration, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name, in parentheses, may hold spaces; the fields follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(string(f[k-3]), 10, 64); return n }
	return int(num(4)), time.Duration(num(14) + num(15)), time.Duration(num(16) + num(17)), true
}
