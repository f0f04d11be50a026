package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"tracesql/engine"
)

// runInflate is `tracesql inflate`: a synthetic multi-rank, many-step job made from one real trace, for
// benchmarks and scale tests.
func runInflate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracesql inflate", flag.ContinueOnError)
	ranks := fs.Int("ranks", 1, "number of rank files to write")
	steps := fs.Int("steps", 10, "ProfilerSteps per rank")
	seed := fs.Uint64("seed", 1, "jitter seed (same seed, same bytes)")
	gz := fs.Bool("gzip", false, "write .json.gz")
	out := fs.String("o", "", "output directory (required)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tracesql inflate --ranks N --steps M [--seed S] [--gzip] -o DIR TRACE")
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard) // a bad flag is reported in one line below, as by the main command and report
	if askedForHelp(args) {
		fs.SetOutput(stdout)
	}
	pos, err := parsePositionals(fs, args)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(stderr, "tracesql: inflate: %v (tracesql inflate -h lists the flags)\n", err)
		return 2
	}
	fs.SetOutput(stderr) // (the usage under what is missing, below)
	var problem string
	switch {
	case *out == "":
		problem = "-o DIR is required"
	case len(pos) == 0:
		problem = "no TRACE to inflate"
	case len(pos) > 1:
		problem = fmt.Sprintf("one TRACE, not %d (%s …)", len(pos), pos[0])
	}
	if problem != "" {
		fmt.Fprintf(stderr, "tracesql: inflate: %s\n", problem)
		fs.Usage()
		return 2
	}
	if *ranks < 1 || *steps < 1 {
		fmt.Fprintf(stderr, "tracesql: inflate: --ranks and --steps must be at least 1 (got %d and %d)\n", *ranks, *steps)
		return 2
	}
	paths, err := engine.Inflate(ctx, pos[0], engine.InflateOptions{Ranks: *ranks, Steps: *steps, Seed: *seed, Gzip: *gz, OutDir: *out})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "tracesql: inflate %s: cancelled; the files it had written are removed\n", pos[0])
			return 1
		}
		fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
		return 1
	}
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return 0
}
