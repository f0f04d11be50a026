// Command tracesql loads PyTorch profiler (Kineto) traces into an embedded DuckDB and answers SQL
// about them: one-shot with -c, from saved files with -f, or in a REPL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/chzyer/readline"

	"tracesql/engine"
)

const usage = `usage: tracesql [flags] [TRACE_DIR | TRACE_FILE ...]

Loads Kineto / Chrome-trace JSON (.json, .json.gz; a directory = its trace files, one per rank)
into DuckDB and runs SQL. With no trace and no --db it loads a bundled sample trace.

flags:
`

// script is one -c SQL text or one -f file, run in command-line order.
type script struct {
	file bool
	text string // the SQL (-c) or the file name (-f)
}

// scriptFlag is -c or -f: repeatable, appending to one ordered list shared by both.
type scriptFlag struct {
	list *[]script
	file bool
}

func (f scriptFlag) String() string {
	if f.list == nil {
		return ""
	}
	var b []string
	for _, s := range *f.list {
		if s.file == f.file {
			b = append(b, s.text)
		}
	}
	return strings.Join(b, ",")
}

func (f scriptFlag) Set(v string) error { *f.list = append(*f.list, script{f.file, v}); return nil }

type options struct {
	scripts  []script // -c and -f in command-line order
	dbPath   string
	format   string
	label    string
	rankFrom string
	maxRows  int
	traces   []string
	// ncclOffset is --nccl-clock-offset: NCCL profiler-plugin → Kineto clock offset(s), ns.
	ncclOffset string
}

func parseArgs(args []string, errOut io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("tracesql", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Var(scriptFlag{&o.scripts, false}, "c", "run SQL (one or more statements) and exit (repeatable)")
	fs.Var(scriptFlag{&o.scripts, true}, "f", "run a saved query file and exit (repeatable; - = stdin)")
	fs.StringVar(&o.dbPath, "db", "", "persistent database file (default: in-memory)")
	fs.StringVar(&o.format, "format", "table", "output format: "+strings.Join(Formats, ", "))
	fs.StringVar(&o.label, "label", "trace", "label of the trace set being loaded")
	fs.StringVar(&o.rankFrom, "rank-from", "auto", "rank discovery: auto (distributedInfo.rank, then file name), file, index")
	fs.StringVar(&o.ncclOffset, "nccl-clock-offset", "", "NCCL profiler-plugin clock offset, ns added to plugin times (NS or RANK=NS,...); overrides the estimate")
	fs.IntVar(&o.maxRows, "maxrows", 40, "rows shown by the table format before eliding the middle (0 = all)")
	fs.Usage = func() {
		fmt.Fprint(errOut, usage)
		fs.PrintDefaults()
	}
	// Flags may follow the trace paths: parse, take one positional, repeat.
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.traces = append(o.traces, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if !ValidFormat(o.format) {
		return nil, fmt.Errorf("--format %s: unknown format (want %s)", o.format, strings.Join(Formats, ", "))
	}
	if _, err := engine.ParseRankFrom(o.rankFrom); err != nil {
		return nil, err
	}
	if o.maxRows < 0 {
		return nil, fmt.Errorf("--maxrows %d: must be >= 0", o.maxRows)
	}
	return o, nil
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program, returning the exit status: 0 ok, 1 a statement or load failed, 2 bad usage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		// No panic reaches the user as a stack trace: report it in one line.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tracesql: internal error: %v\n", r)
			status = 1
		}
	}()
	if len(args) > 0 && (args[0] == "export-parquet" || args[0] == "import-parquet") {
		return runParquet(ctx, args[0], args[1:], stdout, stderr) // parquet.go
	}
	if len(args) > 0 && args[0] == "inflate" {
		return runInflate(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "report" {
		return runReport(ctx, args[1:], stderr)
	}
	o, err := parseArgs(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "tracesql: %v\n", err)
		return 2
	}
	db, err := engine.Open(ctx, o.dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
		return 1
	}
	defer db.Close()
	s := &session{db: db, out: stdout, stdout: stdout, errOut: stderr, format: o.format, maxRows: o.maxRows}
	defer s.closeOutput()
	rf, _ := engine.ParseRankFrom(o.rankFrom)
	s.loadOpts = engine.LoadOptions{Label: o.label, RankFrom: rf, Warn: func(w string) { fmt.Fprintf(stderr, "tracesql: warning: %s\n", w) }}
	if isTerminal(stderr) {
		s.loadOpts.Progress = progressPrinter(stderr)
	}

	traces := o.traces
	if len(traces) == 0 && o.dbPath == "" {
		p, err := samplePath()
		if err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 1
		}
		traces = []string{p}
		s.loadOpts.Label = "sample"
	}
	if len(traces) > 0 {
		if err := loadTraces(ctx, s, traces, s.loadOpts); err != nil {
			s.reportErr(err)
			return 1
		}
	}
	if o.ncclOffset != "" {
		if err := db.SetNCCLClockOffset(ctx, s.loadOpts.Label, o.ncclOffset); err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 2
		}
	}

	batch := len(o.scripts) > 0
	stdinFile, ok := stdin.(*os.File)
	interactive := ok && readline.IsTerminal(int(stdinFile.Fd()))
	// The overview greets a person (or shows the bundled sample); statements piped in get only
	// their own results, so that `tracesql T --format csv < q.sql > out.csv` is clean.
	if !batch && len(traces) > 0 && (interactive || len(o.traces) == 0) {
		if err := s.overview(ctx); err != nil {
			s.reportErr(err)
			return 1
		}
	}
	for _, sc := range o.scripts {
		text := sc.text
		if sc.file {
			var b []byte
			if sc.text == "-" {
				b, err = io.ReadAll(stdin)
			} else {
				b, err = os.ReadFile(sc.text)
			}
			if err != nil {
				fmt.Fprintf(stderr, "tracesql: -f %s: %v\n", sc.text, err)
				return 1
			}
			text = string(b)
		}
		if err := s.runScript(ctx, text, true); err != nil {
			return 1
		}
		if s.quit {
			return 0
		}
	}
	if batch {
		return 0
	}
	if interactive {
		return s.repl(ctx, stdout, stderr)
	}
	return s.readPiped(ctx, stdin)
}

// loadTraces loads paths and prints one line per file loaded or skipped.
func loadTraces(ctx context.Context, s *session, paths []string, opts engine.LoadOptions) error {
	results, err := s.db.Load(ctx, paths, opts)
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(s.errOut, "tracesql: %s: %s, skipped\n", r.Path, r.Skipped)
		}
	}
	if err != nil {
		return err
	}
	if opts.Progress != nil {
		var events, bytes int64
		for _, r := range results {
			events += r.Events
			bytes += r.JSONBytes
		}
		fmt.Fprintf(s.errOut, "loaded %d file(s): %d events, %.1f MB of JSON\n", len(results), events, float64(bytes)/1e6)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// progressPrinter draws a one-line progress indicator on a terminal.
func progressPrinter(w io.Writer) func(engine.Progress) {
	return func(p engine.Progress) {
		name := p.Path[strings.LastIndexByte(p.Path, '/')+1:]
		rate := 0.0
		if sec := p.Elapsed.Seconds(); sec > 0 {
			rate = float64(p.Events) / sec
		}
		fmt.Fprintf(w, "\r\033[Kloading %s: %.1f/%.1f MB, %d events, %.0fk events/s", name,
			float64(p.ReadBytes)/1e6, float64(p.FileBytes)/1e6, p.Events, rate/1e3)
		if p.Done {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
