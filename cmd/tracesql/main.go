// Command tracesql loads PyTorch profiler (Kineto) traces into an embedded DuckDB and answers SQL
// about them: one-shot with -c, from saved files with -f, or in a REPL.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chzyer/readline"

	"tracesql/engine"
)

const usage = `usage: tracesql [flags] [TRACE_DIR | TRACE_FILE ...]

Loads Kineto / Chrome-trace JSON (.json, .json.gz; a directory = its trace files, one per rank)
into DuckDB and runs SQL. With no trace and no --db it loads a bundled sample trace.

commands (each takes -h):
  tracesql report [flags] TRACES -o report.html     an HTML report of every analysis
  tracesql inflate --ranks N --steps M -o DIR TRACE  a larger job made from one trace (benchmarks)
  tracesql export-parquet [--db F] -o DIR [TRACES]  the loaded tables as Parquet, partitioned by rank
  tracesql import-parquet --db F DIR                 an export back into a database

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

func (f scriptFlag) Set(v string) error {
	if f.file && v == "-" && slices.Contains(*f.list, script{true, "-"}) {
		return fmt.Errorf("standard input is read once, so - can be given to -f once")
	}
	*f.list = append(*f.list, script{f.file, v})
	return nil
}

// tracePath is a trace file or directory from the command line and the trace set it loads into.
type tracePath struct {
	path, label string
}

// labelFlag is --label: it sets the label of the trace paths that follow it, so it also keeps the
// values given in order (parseWithPaths needs to know whether a path came after each).
type labelFlag struct {
	label *string
	given *[]string
}

func (f labelFlag) String() string {
	if f.label == nil {
		return ""
	}
	return *f.label
}

func (f labelFlag) Set(v string) error {
	if v == "" {
		return errors.New("--label: empty label")
	}
	*f.label = v
	*f.given = append(*f.given, v)
	return nil
}

type options struct {
	scripts  []script // -c and -f in command-line order
	dbPath   string
	readOnly bool // --readonly: open --db for reading only, beside other readers
	format   string
	label    string // the last --label given (default "trace"): also the label .load uses
	rankFrom string
	maxRows  int
	noHeader bool
	traces   []tracePath
	// ncclOffset is --nccl-clock-offset: NCCL profiler-plugin → Kineto clock offset(s), ns.
	ncclOffset string
	replace    bool // --replace: changed files replace their older versions
}

func parseArgs(args []string, helpOut io.Writer) (*options, error) {
	o := &options{label: "trace"}
	var labels []string // the --label values given so far
	fs := flag.NewFlagSet("tracesql", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints a failed parse's error, in one line
	fs.Var(scriptFlag{&o.scripts, false}, "c", "run SQL (one or more statements) and exit (repeatable)")
	fs.Var(scriptFlag{&o.scripts, true}, "f", "run a saved query file and exit (repeatable; - = stdin)")
	fs.StringVar(&o.dbPath, "db", "", "persistent database file (default: in-memory)")
	fs.BoolVar(&o.readOnly, "readonly", false, "open --db read-only: no loading; several processes may read one file at once")
	fs.StringVar(&o.format, "format", "table", "output format: "+strings.Join(Formats, ", "))
	fs.Var(labelFlag{&o.label, &labels}, "label", "label of the trace paths that follow it, or of all of them when it comes last (several sets may share a db)")
	fs.StringVar(&o.rankFrom, "rank-from", "auto", "rank discovery: auto (distributedInfo.rank, then file name, then file order), file, index")
	fs.Var(offsetSpecFlag{&o.ncclOffset}, "nccl-clock-offset", "NCCL profiler-plugin clock offset, ns added to plugin times (NS or RANK=NS,..., RANK the Kineto rank of the file's process; repeatable); overrides the estimate")
	fs.BoolVar(&o.replace, "replace", false, "a trace file changed since --db loaded it replaces its older version (default: an error); one an older tracesql loaded is loaded again")
	fs.IntVar(&o.maxRows, "maxrows", 40, "rows shown by the table format before eliding the middle (0 = all)")
	fs.BoolVar(&o.noHeader, "no-header", false, "csv, tsv and list output without the header line (as .headers off)")
	fs.Usage = func() {}
	var err error
	if o.traces, err = parseWithPaths(fs, args, &o.label, &labels); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(helpOut, usage)
			fs.SetOutput(helpOut)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("%w (tracesql -h lists the flags)", err)
	}
	if err := checkDBFlag(fs, o.dbPath); err != nil {
		return nil, err
	}
	format, ok := CanonicalFormat(o.format)
	if !ok {
		return nil, fmt.Errorf("--format %s: unknown format (want %s)", o.format, strings.Join(Formats, ", "))
	}
	o.format = format
	if _, err := engine.ParseRankFrom(o.rankFrom); err != nil {
		return nil, err
	}
	if o.maxRows < 0 {
		return nil, fmt.Errorf("--maxrows %d: must be >= 0", o.maxRows)
	}
	if o.readOnly && o.dbPath == "" {
		return nil, errors.New("--readonly needs --db FILE")
	}
	if o.readOnly && len(o.traces) > 0 {
		return nil, fmt.Errorf("--readonly: cannot load %s into a read-only database", o.traces[0].path)
	}
	if o.replace && len(o.traces) == 0 {
		return nil, errors.New("--replace: no trace path to load")
	}
	if o.readOnly && o.ncclOffset != "" {
		return nil, errors.New("--readonly: --nccl-clock-offset changes the database")
	}
	// Checked here, before anything is loaded into --db: a typo must not leave a half-done job.
	if err := checkNCCLOffset(o.ncclOffset); err != nil {
		return nil, err
	}
	if sets := groupByLabel(o.traces); o.ncclOffset != "" && len(sets) > 1 {
		// Clock offsets belong to one job's processes: one spec for two runs is a mistake, and
		// applying it to the last set only (as it did) was a silent one.
		var labels []string
		for _, set := range sets {
			labels = append(labels, set.label)
		}
		return nil, fmt.Errorf("--nccl-clock-offset: trace sets %s are loaded, and an offset is one set's: load them one command each, or INSERT INTO nccl_clock_override rows per label",
			strings.Join(labels, ", "))
	}
	return o, nil
}

// parseWithPaths parses fs's flags with the trace paths among them. Flags may follow the paths: parse,
// take one positional, repeat. Each path takes the --label (label; its values given so far in labels)
// in force when it is read, so `--label a A/ --label b B/` loads two trace sets; when every --label
// comes after every path (`tracesql traces/ --label x`), the last one applies to them all. A --label
// that another replaces before any path follows (`--label a --label b B/`) would label nothing: an error.
func parseWithPaths(fs *flag.FlagSet, args []string, label *string, labels *[]string) ([]tracePath, error) {
	var traces []tracePath
	labelledPath := false // a path came after some --label
	for {
		before := len(*labels)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if given := (*labels)[before:]; len(given) > 1 {
			return nil, fmt.Errorf("--label %s: no trace path follows it (--label %s comes next)", given[0], given[1])
		}
		if fs.NArg() == 0 {
			break
		}
		traces = append(traces, tracePath{fs.Arg(0), *label})
		labelledPath = labelledPath || len(*labels) > 0
		args = fs.Args()[1:]
	}
	if !labelledPath {
		for i := range traces {
			traces[i].label = *label
		}
	} else if last := traces[len(traces)-1]; last.label != *label {
		// `--label a A/ --label b` with B/ forgotten: b would label nothing, and the job would run on A/ alone.
		return nil, fmt.Errorf("--label %s: no trace path follows it (%s is labelled %s)", *label, last.path, last.label)
	}
	return traces, nil
}

// parsePositionals parses fs's flags with positional arguments among them (flag stops at the first
// one: `inflate t.json -o out` would leave -o unread) and returns the positionals in order.
func parsePositionals(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// cancelStatus is 130 (a shell's status for SIGINT) when ctx was cancelled by a signal, else status.
func cancelStatus(ctx context.Context, status int) int {
	if status != 0 && ctx.Err() != nil {
		_, code := stopSignal(ctx)
		return code
	}
	return status
}

// stopSignal names the signal that cancelled a signal.NotifyContext, and the exit status a shell reports
// for it: a kill or a job scheduler's SIGTERM is not the user's Ctrl-C (143, where SIGINT is 130).
func stopSignal(ctx context.Context) (name string, status int) {
	if cause := context.Cause(ctx); cause != nil && strings.HasPrefix(cause.Error(), syscall.SIGTERM.String()+" ") {
		return "SIGTERM", 143
	}
	return "Ctrl-C", 130
}

func main() {
	ignoreFileSizeSignal()
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
	if len(args) > 0 && (args[0] == "export-parquet" || args[0] == "import-parquet" || args[0] == "inflate" || args[0] == "report") {
		// These write files for minutes: Ctrl-C or a kill cancels the context, and the writer removes
		// what it wrote instead of dying with a half-written file under its final name (a report's load
		// stops as the main command's does: the file being loaded leaves nothing).
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		switch args[0] {
		case "inflate":
			return cancelStatus(sctx, runInflate(sctx, args[1:], stdout, stderr))
		case "report":
			return cancelStatus(sctx, runReport(sctx, args[1:], stdout, stderr))
		}
		return cancelStatus(sctx, runParquet(sctx, args[0], args[1:], stdout, stderr)) // parquet.go
	}
	o, err := parseArgs(args, stdout) // (its only output is the help text)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "tracesql: %v\n", err)
		return 2
	}
	// -f files are read before anything is loaded: a typo in a name must not cost a 64-rank load.
	fileScripts := map[string]string{}
	for _, sc := range o.scripts {
		if sc.file && sc.text != "-" {
			text, err := readSQLFile(sc.text)
			if err != nil {
				fmt.Fprintf(stderr, "tracesql: -f: %v\n", err)
				return 2
			}
			fileScripts[sc.text] = text
		}
	}
	// Ctrl-C while the database opens and the command line's traces load stops them: the file being
	// loaded leaves nothing (its transaction rolls back), a --db this run created and could fill with
	// nothing is removed, and the run ends with 130. (Before, the signal killed the process and left a
	// half-made --db file.)
	lctx, stopLoadSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopLoadSignals()
	open := engine.Open
	if o.readOnly {
		open = engine.OpenReadOnly
	}
	_, statErr := os.Lstat(o.dbPath) // a dangling symlink is the user's: not created here
	createdDB := o.dbPath != "" && errors.Is(statErr, fs.ErrNotExist)
	var progress func(engine.Progress)
	if isTerminal(stderr) {
		progress = progressPrinter(stderr)
	}
	// Installing the schema into a new database (in memory, or a --db file this run creates) takes one
	// core for ~140 ms: the first trace is parsed meanwhile. An existing --db file opens at once, and may
	// hold that trace already.
	var prefetch *engine.Prefetch
	if sets := groupByLabel(o.traces); len(sets) > 0 && !o.readOnly && (o.dbPath == "" || createdDB) {
		prefetch = engine.StartPrefetch(lctx, sets[0].paths, engine.LoadOptions{Progress: progress})
	}
	defer prefetch.Stop() // (nothing to stop once the first load took it)
	db, err := open(lctx, o.dbPath)
	if err != nil {
		var notOpened *engine.NotOpenedError
		// (a schema install that failed, say on a full disk, left the file and its WAL; but a file
		// DuckDB did not open for this process, locked by another, is that process's, made since the Lstat)
		if createdDB && !errors.As(err, &notOpened) {
			removeDBFile(o.dbPath)
		}
		if lctx.Err() != nil && ctx.Err() == nil {
			name, code := stopSignal(lctx)
			if progress != nil {
				fmt.Fprint(stderr, "\r\033[K") // (the progress line, cut short by the signal)
			}
			fmt.Fprintf(stderr, "tracesql: cancelled (%s) while opening the database\n", name)
			return code
		}
		fmt.Fprintf(stderr, "tracesql: %s\n", oneLine(err))
		return 1
	}
	defer db.Close()
	if o.dbPath != "" && !o.readOnly && !createdDB {
		if n, id, err := db.RemoveOrphanRows(lctx); err != nil {
			fmt.Fprintf(stderr, "tracesql: warning: %s\n", oneLine(err))
		} else if n > 0 {
			fmt.Fprintf(stderr, "tracesql: warning: removed %d row(s) of trace id %d and above from %s: no traces row names them (a load killed while it committed, or a DELETE FROM traces; .unload removes a trace set whole)\n", n, id, o.dbPath)
		}
	}
	// discardNewDB removes the --db file this run created when nothing could be loaded into it, nor put in it
	// by a statement: a failed run leaves no empty database behind (nor half a job: a failed file leaves
	// nothing).
	discardNewDB := func() { discardCreatedDB(ctx, db, createdDB) }
	s := &session{db: db, out: stdout, stdout: stdout, errOut: stderr, format: o.format, maxRows: o.maxRows, noHeader: o.noHeader}
	if isTerminal(stdout) {
		s.screen = readline.GetScreenWidth
	}
	defer s.closeOutput()
	rf, _ := engine.ParseRankFrom(o.rankFrom)
	// .load without --label takes the last --label of the command line, else "trace".
	s.loadOpts = engine.LoadOptions{Label: o.label, RankFrom: rf, Replace: o.replace, Warn: func(w string) { fmt.Fprintf(stderr, "tracesql: warning: %s\n", w) }}
	s.loadOpts.Progress = progress

	traces := o.traces
	ncclLabel := o.label // the trace set --nccl-clock-offset applies to
	if len(traces) == 0 && o.dbPath == "" {
		p, err := samplePath()
		if err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 1
		}
		traces = []tracePath{{p, "sample"}}
		ncclLabel = "sample"
	}
	loadFailed, dbFailed := false, false
	for i, set := range groupByLabel(traces) {
		opts := s.loadOpts
		opts.Label = set.label
		if i == 0 {
			opts.Prefetch = prefetch // the same set: traces is o.traces when a prefetch was started
		}
		if err := loadTraces(lctx, s, set.paths, opts); err != nil {
			if lctx.Err() != nil && ctx.Err() == nil {
				// (a Ctrl-C after the last file's commit too: the start-up load stops as at any other time)
				discardNewDB()
				name, code := stopSignal(lctx)
				if progress != nil {
					fmt.Fprint(stderr, "\r\033[K") // (the progress line, cut short by the signal)
				}
				fmt.Fprintf(stderr, "tracesql: load cancelled (%s); a file not loaded in full left nothing behind\n", name)
				return code
			}
			s.reportErr(err)
			// The other trace sets load all the same: which sets a --db holds after a failed run must
			// not depend on the order of the --label arguments. -c and -f then run nothing (below); the
			// REPL and piped statements go on with what did load (a failed file leaves nothing behind),
			// and piped input still exits 1.
			loadFailed = true
			if dbFailed = s.db.Fatal(err); dbFailed {
				break // (said) the next set's load would only fail the same way
			}
		}
	}
	if loadFailed && len(o.scripts) > 0 {
		discardNewDB()
		return 1
	}
	if dbFailed {
		return 1 // (said by the load's own line) DuckDB answers nothing more, REPL or piped
	}
	stopLoadSignals() // the REPL and the statements handle Ctrl-C themselves
	if o.dbPath != "" {
		warnLoaderVersions(ctx, db, o.dbPath, stderr)
	}
	if len(o.traces) == 0 && o.dbPath == "" {
		if s.sampleIDs, err = sampleTraceIDs(ctx, db); err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 1
		}
	}
	if o.ncclOffset != "" {
		if err := db.SetNCCLClockOffset(ctx, ncclLabel, o.ncclOffset); err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 2
		}
	}

	// From here every statement runs through session.run, which keeps the stored results' freshness
	// (a refresh after an edit of kernel_classes in an earlier session, once, on a writable file).
	db.SyncStored(ctx)

	batch := len(o.scripts) > 0
	stdinFile, ok := stdin.(*os.File)
	interactive := ok && readline.IsTerminal(int(stdinFile.Fd()))
	// The overview greets a person, or shows the bundled sample when there is nothing else to do
	// (`tracesql < /dev/null`); statements piped in get only their own results, so that
	// `tracesql T --format csv < q.sql > out.csv` is clean, with or without T.
	showSample := false
	var peeked chan bool // onlyBlank's answer while it is still reading stdin
	if !batch && !interactive && len(o.traces) == 0 && len(traces) > 0 {
		br := bufio.NewReaderSize(stdin, 64<<10)
		stdin, peeked = br, make(chan bool, 1)
		go func() { peeked <- onlyBlank(br) }()
		select {
		case showSample = <-peeked:
			peeked = nil
		case <-time.After(sampleInputWait):
			// A pipe that stays open with nothing in it yet (a person typing into `cat |`): greet on a
			// terminal rather than wait in silence. Output to a file or pipe waits for the answer, so
			// that it holds the statements' results only, however slow the writer.
			if showSample = isTerminal(stdout); !showSample {
				showSample, peeked = <-peeked, nil
			}
		}
	}
	if !batch && len(traces) > 0 && (interactive || showSample) {
		if err := s.overview(ctx); err != nil {
			if !(interactive && errors.Is(err, errCancelled) && ctx.Err() == nil) {
				s.reportErr(err)
				return 1
			}
			// Ctrl-C cancels the query, not the session: an in-memory session lost what it had loaded
			fmt.Fprintln(s.errOut, "tracesql: overview cancelled (Ctrl-C)")
		}
	}
	if peeked != nil {
		<-peeked // the statement reader must not read stdin while onlyBlank still does
	}
	runStatements := func() int {
		commands, nthCommand := 0, 0
		for _, sc := range o.scripts {
			if !sc.file {
				commands++
			}
		}
		for _, sc := range o.scripts {
			text, source := sc.text, ""
			if !sc.file {
				// Several scripts, or lines to count: an error names the -c it came from, as a file's does.
				nthCommand++
				switch {
				case commands > 1:
					source = fmt.Sprintf("-c #%d", nthCommand)
				case len(o.scripts) > 1 || strings.Contains(text, "\n"):
					source = "-c"
				}
			}
			if sc.file {
				source = sc.text
				if sc.text == "-" {
					b, err := io.ReadAll(stdin)
					if err == nil {
						err = checkSQLText(b)
					}
					if err != nil {
						fmt.Fprintf(stderr, "tracesql: -f -: %v\n", err)
						return 1
					}
					text, source = string(b), "stdin"
				} else {
					text = fileScripts[sc.text]
				}
			}
			s.bail = true
			err := s.runScript(ctx, text, source, true)
			s.bail = false
			if err == nil && s.outputFailed {
				err = errReported // a short .output file, a |command that failed: said, and the run fails
			}
			if err != nil {
				if errors.Is(err, errCancelled) {
					return 130 // stopped by Ctrl-C, as piped input and a shell report SIGINT
				}
				return 1
			}
			if s.quit {
				return s.quitStatus(0)
			}
		}
		if batch {
			return 0
		}
		if interactive {
			return s.repl(ctx, stdout, stderr)
		}
		rc := s.readPiped(ctx, stdin)
		if loadFailed && rc == 0 {
			rc = 1
		}
		return rc
	}
	// SIGTERM or SIGHUP (a scheduler's kill, a closed ssh session) in a batch or piped run cancels the
	// running statement as Ctrl-C does, so that a file it was writing is removed (review r78 #2: an
	// export left its hidden 230 MB temporary file), and the run ends with the status a shell reports
	// for the signal. (The REPL catches them itself.)
	var endedBy atomic.Int32
	if !interactive || batch {
		s.endedBy = &endedBy
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		sigs := make(chan os.Signal, 1)
		if len(terminationSignals) > 0 {
			signal.Notify(sigs, terminationSignals...)
		}
		defer func() {
			signal.Stop(sigs)
			close(sigs)
		}()
		go func() {
			if sig, ok := (<-sigs).(syscall.Signal); ok {
				endedBy.Store(int32(sig))
				cancel()
			}
		}()
	}
	// A run that failed (a file named on the command line included) and left the database it created
	// empty removes it.
	rc := runStatements()
	if sig := endedBy.Load(); sig != 0 {
		name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[syscall.Signal(sig)]
		fmt.Fprintf(stderr, "tracesql: stopped by %s\n", name)
		rc = 128 + int(sig)
	}
	if rc != 0 || loadFailed {
		discardNewDB()
	}
	return rc
}

// sampleInputWait is how long the bundled sample's session waits for piped input to show whether it holds
// statements before it shows the overview anyway.
const sampleInputWait = 300 * time.Millisecond

// onlyBlank reports whether r holds nothing but white space up to its end (no statement to run),
// without consuming it. Comments are input: a script of comments only (a query template not yet
// written) prints nothing, as in DuckDB's shell, rather than the overview into its output file.
func onlyBlank(r *bufio.Reader) bool {
	for n := 1; n <= r.Size(); n *= 2 {
		b, err := r.Peek(min(n, r.Size()))
		if len(bytes.TrimLeft(b, " \t\r\n")) > 0 {
			return false
		}
		if err != nil {
			return true // the end (or an error the statement reader will report) after white space only
		}
	}
	return false
}

// traceSet is the command-line paths of one label, in command-line order.
type traceSet struct {
	label string
	paths []string
}

// groupByLabel gathers the paths of each label into one load, labels in order of first
// appearance: one Load call per trace set keeps rank discovery (--rank-from index) per set.
func groupByLabel(traces []tracePath) []traceSet {
	var sets []traceSet
	at := map[string]int{}
	for _, t := range traces {
		i, ok := at[t.label]
		if !ok {
			i = len(sets)
			at[t.label] = i
			sets = append(sets, traceSet{label: t.label})
		}
		sets[i].paths = append(sets[i].paths, t.path)
	}
	return sets
}

// checkNCCLOffset validates --nccl-clock-offset ("NS" or "RANK=NS,…") with the rules of
// engine.DB.SetNCCLClockOffset, which only parses it once the traces are loaded.
// checkDBFlag refuses --db given an empty name: an unset variable in --db "$DB" would otherwise run in
// memory and keep nothing.
func checkDBFlag(fs *flag.FlagSet, path string) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "db" })
	if given && path == "" {
		return errors.New("--db: empty file name (leave --db out for an in-memory database)")
	}
	return nil
}

// offsetSpecFlag is --nccl-clock-offset: repeatable, its specs joined (0=5 then 1=6 is 0=5,1=6: a repeat kept
// only the last, r72 #6); an empty one (an unset "$OFF") is an error, as --db's is.
type offsetSpecFlag struct{ spec *string }

func (f offsetSpecFlag) String() string {
	if f.spec == nil {
		return ""
	}
	return *f.spec
}

func (f offsetSpecFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty (leave the flag out to keep the estimate)")
	}
	if *f.spec != "" {
		v = *f.spec + "," + v
	}
	*f.spec = v
	return nil
}

func checkNCCLOffset(spec string) error {
	if spec == "" {
		return nil
	}
	_, err := engine.ParseNCCLClockOffset(spec)
	return err
}

// loadTraces loads paths and prints one line per file loaded or skipped.
func loadTraces(ctx context.Context, s *session, paths []string, opts engine.LoadOptions) error {
	results, err := s.db.Load(ctx, paths, opts)
	cancelled := err != nil && ctx.Err() != nil
	if cancelled && opts.Progress != nil {
		fmt.Fprint(s.errOut, "\r\033[K") // the progress line, cut short by Ctrl-C (and the ^C echoed on it)
	}
	loaded := 0
	// Re-running a command on a --db of a whole job, or naming a job's directory twice: one line, not
	// one per rank.
	grouped := map[string][]string{engine.SkippedLoaded: nil, engine.SkippedNamedTwice: nil}
	for _, r := range results {
		if paths, ok := grouped[r.Skipped]; ok {
			grouped[r.Skipped] = append(paths, r.Path)
		}
	}
	for _, why := range []string{engine.SkippedLoaded, engine.SkippedNamedTwice} {
		if paths := grouped[why]; len(paths) > 2 {
			fmt.Fprintf(s.errOut, "tracesql: %d files %s, skipped (%s … %s)\n", len(paths), why, paths[0], paths[len(paths)-1])
		}
	}
	for _, r := range results {
		switch {
		case len(grouped[r.Skipped]) > 2:
		case r.Skipped != "":
			fmt.Fprintf(s.errOut, "tracesql: %s: %s, skipped\n", r.Path, r.Skipped)
		case r.Rederived:
			fmt.Fprintf(s.errOut, "tracesql: %s: loaded by another version of tracesql; loaded again, its derived columns afresh\n", r.Path)
			loaded++
		case r.Replaced:
			fmt.Fprintf(s.errOut, "tracesql: %s: changed since it was loaded; replaced its older version\n", r.Path)
			loaded++
		default:
			loaded++
		}
	}
	if cancelled && loaded > 0 {
		fmt.Fprintf(s.errOut, "tracesql: %d file(s) loaded before the cancel\n", loaded)
	}
	if loaded > 0 && len(s.sampleIDs) > 0 {
		// (.unload keeps sampleIDs to the sample's files still loaded: an id it gave up may be a new file's)
		// The bundled sample is there to show something until the user's own traces are in; kept
		// beside them, it would be counted in every query over all traces.
		// (after Ctrl-C too: the files loaded before it stay, so the sample goes as after a whole load)
		if err := s.db.Unload(context.WithoutCancel(ctx), s.sampleIDs); err != nil {
			s.reportErr(err)
			return errReported
		}
		s.sampleIDs = nil
		fmt.Fprintf(s.errOut, "tracesql: unloaded the bundled sample; the session holds the traces you load\n")
	}
	if cancelled {
		return &cancelledError{"load cancelled (Ctrl-C): the file it was loading left nothing behind", opts.Progress != nil}
	}
	if err == nil && ctx.Err() != nil {
		// The load's last file had reached its commit, which a Ctrl-C does not stop: said, not dropped
		// (the statements after it on its line are cancelled, as after a query).
		return &cancelledError{fmt.Sprintf("Ctrl-C came after the last file was loaded: %d file(s) loaded, none left out", loaded), false}
	}
	if errs := loadErrors(err); len(errs) > 0 {
		// One line per bad file (Load went on past each), then whether the others made it.
		badFiles := 0
		var fatal error
		for _, e := range errs {
			s.reportErr(e)
			var le *engine.LoadError
			if errors.As(e, &le) {
				badFiles++
			}
			if s.db.Fatal(e) {
				fatal = e
			}
		}
		if fatal != nil {
			return errors.Join(errReported, fatal) // a script stops: DuckDB answers nothing more
		}
		if loaded > 0 && badFiles > 0 { // (a failed checkpoint after the load says what was loaded itself)
			fmt.Fprintf(s.errOut, "tracesql: the other %d file(s) loaded\n", loaded)
		} else if len(paths) > 1 && slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, engine.ErrNoSuchPath) }) {
			// Paths are checked before anything loads: the good ones were not loaded either.
			fmt.Fprintf(s.errOut, "tracesql: nothing of trace set %q was loaded (its paths are checked first)\n", opts.Label)
		} else if len(s.sampleIDs) > 0 {
			// A script goes on after a failed .load: its next queries answer about the sample.
			fmt.Fprintf(s.errOut, "tracesql: the session still holds only the bundled sample\n")
		}
		return errReported
	}
	if opts.Progress != nil && loaded > 0 {
		// (the skipped files were said above: counted here, "loaded 1 file(s): 0 events" followed
		// "already loaded, skipped")
		var events, bytes int64
		for _, r := range results {
			if r.Skipped == "" {
				events += r.Events
				bytes += r.JSONBytes
			}
		}
		fmt.Fprintf(s.errOut, "loaded %d file(s): %d events, %.1f MB of JSON\n", loaded, events, float64(bytes)/1e6)
	}
	return nil
}

// sampleTraceIDs returns the trace ids of the bundled sample (label "sample"), loaded at start.
func sampleTraceIDs(ctx context.Context, db *engine.DB) ([]int64, error) {
	rows, err := db.SQL.QueryContext(ctx, `SELECT trace_id FROM traces WHERE label = 'sample' ORDER BY trace_id`)
	if err != nil {
		return nil, fmt.Errorf("bundled sample: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("bundled sample: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// loadErrors splits engine.DB.Load's error into its files' errors (Load joins them).
func loadErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// progressPrinter draws a one-line progress indicator on a terminal, fitted to its width (read at each
// update: the window may be resized meanwhile). A line longer than the screen wrapped, and "\r\033[K"
// cleared only its last row: each update left a row behind.
func progressPrinter(w io.Writer) func(engine.Progress) {
	// A file's parse and the writing of the file before it run at once: the line shows the parse while
	// it ticks, and the writing, the longer part, once it is done (the line was blank 90 % of a load).
	var mu sync.Mutex
	var parsing, writing engine.Progress
	return func(p engine.Progress) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case p.Writing || p.Checkpoint:
			writing = p
			if p.Done {
				writing = engine.Progress{}
			}
		case p.Done:
			parsing = engine.Progress{}
		default:
			parsing = p
		}
		show := parsing
		if show.Path == "" {
			show = writing
		}
		if show.Path == "" && !show.Checkpoint {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		width := 0
		if f, ok := w.(*os.File); ok {
			if cols, _, err := readline.GetSize(int(f.Fd())); err == nil {
				width = cols
			}
		}
		fmt.Fprint(w, "\r\033[K"+progressLine(show, width))
	}
}

// progressLine is the progress line, "loading NAME: 12.3/45.6 MB, 789 events, 12k events/s", in fewer
// than width cells when width > 0 (the last column is left free: a character there makes some
// terminals wrap): the file name is cut in the middle with "…", then the rate and the event count are
// left out, then the name, and at last the line is cut.
func progressLine(p engine.Progress, width int) string {
	if p.Checkpoint {
		const line = "writing the database file (checkpoint)"
		if width <= 0 {
			return line
		}
		return truncateWidth(line, width-1)
	}
	verb := "loading "
	if p.Writing {
		verb = "writing " // (the rows into the database)
	}
	name := p.Path[strings.LastIndexByte(p.Path, '/')+1:]
	rate := 0.0
	if sec := p.Elapsed.Seconds(); sec > 0 {
		rate = float64(p.Events) / sec
	}
	// kB below 1 MB: the bundled sample (25 kB) showed 0.0/0.0 MB
	size := fmt.Sprintf("%.1f/%.1f MB", float64(p.ReadBytes)/1e6, float64(p.FileBytes)/1e6)
	if p.FileBytes < 1e6 {
		size = fmt.Sprintf("%.1f/%.1f kB", float64(p.ReadBytes)/1e3, float64(p.FileBytes)/1e3)
	}
	stats := []string{
		fmt.Sprintf("%s, %d events, %.0fk events/s", size, p.Events, rate/1e3),
		fmt.Sprintf("%s, %d events", size, p.Events),
		size,
	}
	if p.Writing {
		size = fmt.Sprintf("%.1f MB", float64(p.FileBytes)/1e6)
		if p.FileBytes < 1e6 {
			size = fmt.Sprintf("%.1f kB", float64(p.FileBytes)/1e3)
		}
		stats = []string{fmt.Sprintf("%s, %d events into the database", size, p.Events), fmt.Sprintf("%s, %d events", size, p.Events), size}
	}
	if width <= 0 {
		return verb + name + ": " + stats[0]
	}
	room := width - 1
	for i, st := range stats {
		fixed := displayWidth(verb + ": " + st)
		if fixed+displayWidth(name) <= room {
			return verb + name + ": " + st
		}
		least := 16 // cells of the name, before the rate and then the event count go
		if i == len(stats)-1 {
			least = 8 // before the name goes
		}
		if room-fixed >= least {
			return verb + cutMiddle(name, room-fixed) + ": " + st
		}
	}
	return truncateWidth(verb+size, room)
}

// cutMiddle shortens s to at most width cells by putting "…" in place of its middle, keeping its start
// and its end (a trace file's name differs from its job's others at both: host and rank, extension).
func cutMiddle(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width <= 2 {
		return truncateWidth(s, width)
	}
	rs := []rune(s)
	ws := make([]int, len(rs))
	var prev rune
	for i, r := range rs {
		ws[i] = widthAfter(prev, r)
		prev = r
	}
	tailRoom := (width - 1) / 2
	headRoom := width - 1 - tailRoom
	h, n := 0, 0
	for h < len(rs) && n+ws[h] <= headRoom { // (a combining mark stays with its character)
		n += ws[h]
		h++
	}
	t, n := len(rs), 0
	for t > h && n+ws[t-1] <= tailRoom {
		n += ws[t-1]
		t--
	}
	for t < len(rs) && ws[t] == 0 { // a mark whose character is cut off
		t++
	}
	return string(rs[:h]) + "…" + string(rs[t:])
}

// askedForHelp reports a -h or --help among a subcommand's arguments: its usage then goes to stdout, as
// help text does (tracesql inflate -h | less), and to stderr when it follows a usage error.
func askedForHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "--h":
			return true
		case "--":
			return false
		}
	}
	return false
}

// discardCreatedDB removes the database file this run created (created) and then found holding
// nothing of the user's (engine.HoldsNothing: rules they edited, a table, a sequence are theirs). The
// engine removes it while DuckDB still holds its lock, and only while the path names the file this run
// opened: removed by name after Close, as before, it took with it a database another process had made
// at the path in between. A file that cannot be removed so stays, the harmless leftover of a failed
// run. It runs after a Ctrl-C too: the cancellation ends the run, not its tidying.
func discardCreatedDB(ctx context.Context, db *engine.DB, created bool) {
	if !created {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if empty, err := db.HoldsNothing(ctx); err != nil || !empty {
		return
	}
	db.Discard(ctx) // (its error leaves the file in place: nothing to add to the run's own error)
}

// removeDBFile removes a database file this run created and its write-ahead log, by name, after an
// open whose install failed. DuckDB has let go of the file by then, so a process that opened the path
// in the moment since loses its work: unlike discardCreatedDB, which the engine does under the lock.
func removeDBFile(path string) {
	os.Remove(path)
	os.Remove(path + ".wal")
}

// warnLoaderVersions warns, once per open of a --db, about trace files another version of the loader
// derived: an older one (its parent_idx and depth differ from a load now) or a newer one.
func warnLoaderVersions(ctx context.Context, db *engine.DB, dbPath string, stderr io.Writer) {
	if n, first, label, err := db.StaleTraces(ctx); err == nil && n > 0 {
		fmt.Fprintf(stderr, "tracesql: warning: %d trace file(s) in %s (first: %s, trace set %q) were loaded by an older tracesql, whose events.parent_idx and depth differ from this one's: load them again with --replace and their --label to derive them afresh\n", n, dbPath, first, label)
	}
	if n, first, label, err := db.NewerTraces(ctx); err == nil && n > 0 {
		fmt.Fprintf(stderr, "tracesql: warning: %d trace file(s) in %s (first: %s, trace set %q) were loaded by a newer tracesql than this one: its analyses may read their derived columns wrong; use that version, or load them again with --replace\n", n, dbPath, first, label)
	}
}
