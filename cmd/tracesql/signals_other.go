//go:build !unix

package main

import "os"

func ignoreFileSizeSignal() {}

// terminationSignals: none that the session catches on this system.
var terminationSignals []os.Signal
