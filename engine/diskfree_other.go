//go:build !(linux || darwin)

package engine

// diskFree cannot tell on this platform.
func diskFree(string) int64 { return -1 }
