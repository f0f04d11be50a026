package main

// This file is `tracesql export-parquet` and `tracesql import-parquet`: the command-line ends of
// engine.ExportParquet / ImportParquet (the layout is described in engine/parquet.go and the README).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"tracesql/engine"
)

// runParquet runs the export-parquet or import-parquet subcommand; cmd is its name.
func runParquet(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracesql "+cmd, flag.ContinueOnError)
	dbPath := fs.String("db", "", "database file (export: the source; import: the target, required)")
	out := fs.String("o", "", "output directory (export, required; must not exist or be empty)")
	label, labels := "trace", []string(nil)
	fs.Var(labelFlag{&label, &labels}, "label", "label of the trace paths that follow it (of all of them when it comes last), loaded before exporting")
	rankFrom := fs.String("rank-from", "auto", "rank discovery of the traces loaded before exporting")
	export := cmd == "export-parquet"
	fs.Usage = func() {
		if export {
			fmt.Fprintln(fs.Output(), "usage: tracesql export-parquet [--db F] -o DIR [[--label L] TRACE_DIR | TRACE_FILE ...]")
			fmt.Fprintln(fs.Output(), "writes every trace table of the database (and of the traces named, loaded first) as Parquet, partitioned by rank")
			fs.PrintDefaults()
			return
		}
		fmt.Fprintln(fs.Output(), "usage: tracesql import-parquet --db F DIR")
		fmt.Fprintln(fs.Output(), "loads a directory written by export-parquet into the database F")
		fmt.Fprintln(fs.Output(), "  -db string\n    \tdatabase file (the target, created if it does not exist)")
	}
	fs.SetOutput(io.Discard) // a bad flag is reported in one line below, as by the main command and report
	if askedForHelp(args) {
		fs.SetOutput(stdout)
	}
	traces, err := parseWithPaths(fs, args, &label, &labels)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(stderr, "tracesql: %s: %v (tracesql %s -h lists the flags)\n", cmd, err, cmd)
		return 2
	}
	fs.SetOutput(stderr) // (the usage under what is missing, below)
	if err := checkDBFlag(fs, *dbPath); err != nil {
		fmt.Fprintf(stderr, "tracesql: %s: %v\n", cmd, err)
		return 2
	}
	// What is wrong first, on a line of its own; then the usage.
	missing := ""
	switch {
	case export && *out == "":
		missing = "no output directory (-o DIR)"
	case !export && *dbPath == "":
		missing = "no database to import into (--db F)"
	case !export && len(traces) == 0:
		missing = "no directory to import (written by export-parquet)"
	case !export && len(traces) > 1:
		missing = fmt.Sprintf("one directory to import, not %d", len(traces))
	}
	if missing != "" {
		fmt.Fprintf(stderr, "tracesql: %s: %s\n", cmd, missing)
		fs.Usage()
		return 2
	}
	if export && *dbPath == "" && len(traces) == 0 {
		fmt.Fprintln(stderr, "tracesql: export-parquet: nothing to export (give --db or trace files)")
		return 2
	}
	// --label and --rank-from say how the traces named are loaded; with none (an import keeps the labels and
	// ranks it finds) they would be silently ignored.
	if !export || len(traces) == 0 {
		bad := ""
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "label" || f.Name == "rank-from" {
				bad = f.Name
			}
		})
		if bad != "" {
			what := "import-parquet keeps the labels and ranks of the export"
			if export {
				what = "it applies to trace paths loaded before the export, and none is given"
			}
			fmt.Fprintf(stderr, "tracesql: %s: --%s: %s\n", cmd, bad, what)
			return 2
		}
	}
	rf, err := engine.ParseRankFrom(*rankFrom)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: %v\n", err)
		return 2
	}
	// Before the traces named are loaded (minutes for a large job): an output the export would refuse
	// is refused now, not after that work.
	if export {
		if err := engine.CheckExportDir(*out); err != nil {
			fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
			return 1
		}
	}
	// A database file that does not exist yet: an export with nothing to load would create it and
	// write an empty export (a mistyped --db), a failed import would leave it behind.
	created := false
	if *dbPath != "" {
		if _, err := os.Stat(*dbPath); errors.Is(err, os.ErrNotExist) {
			if export && len(traces) == 0 {
				fmt.Fprintf(stderr, "tracesql: export parquet %s: database %s does not exist\n", *out, *dbPath)
				return 1
			}
			created = true
		}
	}
	open := engine.Open
	if export && len(traces) == 0 {
		// Nothing to load: reading is enough, so the export also runs beside other sessions of the
		// file (a writer's lock refused it) and on a file the user may only read.
		open = engine.OpenReadOnly
	}
	db, err := open(ctx, *dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
		return 1
	}
	defer db.Close()
	if !export {
		n, err := db.ImportParquet(ctx, traces[0].path, func(note string) { fmt.Fprintf(stderr, "tracesql: %s\n", note) })
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "tracesql: import parquet %s: cancelled; the database is as it was\n", traces[0].path)
			} else {
				fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
			}
			discardCreatedDB(ctx, db, created) // an import that failed leaves the new file empty
			return 1
		}
		fmt.Fprintf(stdout, "imported %d trace(s) from %s into %s\n", n, traces[0].path, *dbPath)
		warnLoaderVersions(ctx, db, *dbPath, stderr)
		return 0
	}
	if *dbPath != "" {
		warnLoaderVersions(ctx, db, *dbPath, stderr)
	}
	// (r71 #7: its own loop said neither that the export was not written nor that the files before the bad one
	// had loaded into --db)
	if !loadBeforeWriting(ctx, db, traces, rf, stderr, "export-parquet", *out) {
		discardCreatedDB(ctx, db, created) // nothing loaded: no empty database left behind, as the main command
		return 1
	}
	tables, err := db.ExportParquet(ctx, *out, func(note string) { fmt.Fprintf(stderr, "tracesql: %s\n", note) })
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "tracesql: export parquet %s: cancelled; the files it had written are removed\n", *out)
			return 1
		}
		fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
		return 1
	}
	var rows int64
	for _, t := range tables {
		rows += t.Rows
	}
	fmt.Fprintf(stdout, "exported %d table(s), %d rows, to %s\n", len(tables), rows, *out)
	return 0
}
