//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// ignoreFileSizeSignal makes a write past the file size limit (ulimit -f) fail with EFBIG, reported
// like a full disk, instead of killing the process without a word: DuckDB writes from threads Go does
// not own, where the signal takes its default action.
func ignoreFileSizeSignal() { signal.Ignore(syscall.SIGXFSZ) }

// terminationSignals end an interactive session cleanly (repl): a closed terminal window's SIGHUP, a kill's SIGTERM.
var terminationSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
