//go:build !unix

package preview_test

// cpuSeconds is 0 where the process's CPU time is not read: the benchmarks report 0.
func cpuSeconds() float64 { return 0 }
