package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/chzyer/readline"

	"tracesql/internal/outdir"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

const (
	prompt     = "tracesql> "
	contPrompt = "     ...> "
)

// maxPipedLine is the longest line readPiped reads (a bufio.Scanner holds one line whole).
var maxPipedLine = 256 << 20

// readPiped runs statements from a non-terminal stdin. It does not use readline, which is quadratic
// in line length on piped input (stack.md §1.5): a scanner with a large buffer, no prompts, and the
// session goes on after an error, as the REPL does; the exit status says whether any failed. An error
// names the line its statement starts on ("stdin:5: ..."), as for -f -.
func (s *session) readPiped(ctx context.Context, in io.Reader) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), maxPipedLine)
	var buf stmtBuffer
	s.failed = false
	s.piped = true
	defer func() { s.piped = false }()
	defer func(script, where string) { s.script, s.where = script, where }(s.script, s.where)
	s.script = "stdin"
	first, checked := true, false
	lines := 0
	for sc.Scan() {
		lines++
		text := sc.Text()
		if first {
			text = strings.TrimPrefix(text, "\ufeff") // as runScript
			first = false
		}
		if !checked && strings.TrimSpace(text) != "" {
			// a trace or database piped in by mistake (tracesql < trace.json.gz): one line saying so, as
			// -f - says, not a parser error per line of binary
			checked = true
			if err := checkSQLText([]byte(text)); err != nil {
				fmt.Fprintf(s.errOut, "tracesql: stdin: %v\n", err)
				return 1
			}
		}
		if err := s.feed(ctx, &buf, text, false); err != nil {
			if errors.Is(err, errCancelled) {
				return 130 // stopped by Ctrl-C, as a shell reports SIGINT
			}
			return 1
		}
		if s.quit {
			break
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		fmt.Fprintf(s.errOut, "tracesql: stdin:%d: a line longer than %d MiB (read the script with -f FILE, which has no such limit)\n", lines+1, maxPipedLine>>20)
		return 1
	} else if err != nil {
		fmt.Fprintf(s.errOut, "tracesql: read stdin: %v\n", err)
		return 1
	}
	if !s.quit {
		if err := s.runPending(ctx, &buf); err != nil {
			s.reportErr(err)
			if errors.Is(err, errCancelled) {
				return 130
			}
		}
	}
	if s.failed {
		return s.quitStatus(1)
	}
	return s.quitStatus(0)
}

// repl is the interactive loop: multi-line statements ended by ';', history in
// ~/.tracesql_history (one line per statement), completion of names, Ctrl-C clears the line or
// cancels the running query, Ctrl-D exits (dropping a statement not ended by ';').
func (s *session) repl(ctx context.Context, stdout, stderr io.Writer) int {
	historyFile := ""
	if home, err := os.UserHomeDir(); err == nil {
		historyFile = filepath.Join(home, ".tracesql_history")
		privateHistory(historyFile)
		trimHistory(historyFile, historyLimit)
	} // else no history file: "" would put it in the current directory
	// With stdout redirected (tracesql T > out.txt), the prompt and the echo of what is typed go to the
	// terminal on stderr: in the file they were readline's redraw codes between the results.
	lineOut := stdout
	if !isTerminal(stdout) && isTerminal(stderr) {
		lineOut = stderr
	}
	in := &pasteAwareStdin{r: readline.NewCancelableStdin(readline.Stdin)}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 prompt,
		HistoryFile:            historyFile,
		HistoryLimit:           historyLimit + historySlack,
		DisableAutoSaveHistory: true,
		AutoComplete:           &completer{s: s, pasted: in},
		// A terminal that reports no size (0 columns: some containers and serial consoles) made every
		// Tab only ring the bell and each redraw a run of \r\b: as wide as a terminal usually is instead.
		FuncGetWidth:    func() int { return cmp.Or(max(readline.GetScreenWidth(), 0), 80) },
		Listener:        readline.FuncListener(in.insertPaste),
		InterruptPrompt: "^C",
		EOFPrompt:       ".quit",
		Stdin:           in,
		Stdout:          lineOut,
		Stderr:          stderr,
	})
	if err != nil {
		in.Close()
		fmt.Fprintf(stderr, "tracesql: %v\n", err)
		return 1
	}
	closeEditor := sync.OnceFunc(func() { closeLineEditor(rl, in) })
	defer closeEditor()
	markPastes := isTerminal(lineOut)
	// SIGTERM or SIGHUP (a closed terminal window, a kill) ends the session as Ctrl-D does, its running
	// statement cancelled, the terminal given back in the mode it came in (killed by the signal, the session
	// left it raw, without echo, and marking pastes: the shell after it needed a reset).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var endedBy atomic.Int32 // the number of the signal that ended the session
	sigs := make(chan os.Signal, 1)
	if len(terminationSignals) > 0 {
		signal.Notify(sigs, terminationSignals...)
	}
	defer func() {
		signal.Stop(sigs)
		close(sigs) // (ends the goroutine below)
	}()
	go func() {
		sig, ok := (<-sigs).(syscall.Signal)
		if !ok {
			return
		}
		endedBy.Store(int32(sig))
		cancel()
		if markPastes {
			io.WriteString(lineOut, bracketOff)
		}
		closeEditor()
	}()
	if historyFile != "" {
		// (again: should readline have rewritten the file after all, its new file has the umask's mode)
		privateHistory(historyFile)
	}
	// One writer for both: readline makes a new one per Stdout() call, and the table format fits the
	// screen only while s.out is s.stdout.
	w := rl.Stdout()
	if lineOut != stdout {
		w = stdout
	}
	s.stdout, s.out = w, w
	s.errOut, s.terminal = rl.Stderr(), true
	fmt.Fprintln(rl.Stdout(), `Enter ".help" for usage hints; statements end with ";".`)
	var buf stmtBuffer
	var entry []string
	cancelledPaste := int64(0) // a paste whose statement Ctrl-C cancelled: its later lines are not run
	for !s.quit && endedBy.Load() == 0 {
		if markPastes {
			io.WriteString(lineOut, bracketOn)
		}
		in.promptBegins()
		line, err := rl.Readline()
		in.promptEnds()
		if markPastes {
			io.WriteString(lineOut, bracketOff)
		}
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			entry = entry[:0]
			rl.SetPrompt(prompt)
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			// A statement typed without its ';' is not run: Ctrl-D ends the session, and a half-typed
			// DELETE FROM t (its WHERE still to come) would have run and been committed. History keeps
			// it, to be finished next time.
			if buf.Pending() != "" {
				fmt.Fprintln(s.errOut, "tracesql: the statement not ended by ';' was not run (it is in the history)")
				if h := historyLine(strings.Join(entry, "\n")); h != "" {
					rl.SaveHistory(h)
				}
			}
			break
		}
		from := in.lineFrom.Load()
		if from != 0 && from == cancelledPaste {
			continue // the rest of a paste whose statement was cancelled
		}
		entry = append(entry, line)
		if err := s.feed(ctx, &buf, line, false); errors.Is(err, errRestCancelled) {
			// As DuckDB's shell does, Ctrl-C also drops the rest of the line and of the paste it came in (a
			// DROP after the cancelled statement on its line still ran); keys typed ahead the terminal drops.
			if from != 0 {
				cancelledPaste = from
			}
			if h := historyLine(strings.Join(entry, "\n")); h != "" {
				rl.SaveHistory(h) // (to run again, as any statement typed)
			}
			buf.Reset()
			entry = entry[:0]
			rl.SetPrompt(prompt)
			continue
		} else if err != nil {
			return 1
		}
		if buf.Pending() == "" {
			if h := historyLine(strings.Join(entry, "\n")); h != "" {
				rl.SaveHistory(h)
			}
			entry = entry[:0]
			rl.SetPrompt(prompt)
		} else {
			rl.SetPrompt(contPrompt)
		}
	}
	if sig := endedBy.Load(); sig != 0 {
		return 128 + int(sig) // as a shell reports a process the signal ended
	}
	return s.quitStatus(0)
}

// closeLineEditor ends readline's goroutines. Its reader goroutine may be blocked reading the terminal
// through in: readline's Close waits for it but closes only its own pipe, never in, and so hung for
// good (Ctrl-D pressed while a statement ran: the session printed the result and never exited).
// Closing in first makes that read return. The wait is bounded all the same: nothing readline still
// holds is needed once the session ends (each Readline call restores the terminal's mode on return,
// and the history is written line by line).
func closeLineEditor(rl *readline.Instance, in io.Closer) {
	in.Close()
	done := make(chan struct{})
	go func() {
		rl.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(lineEditorCloseWait):
	}
}

// lineEditorCloseWait bounds closeLineEditor's wait (a variable for the tests, which wait longer).
var lineEditorCloseWait = 2 * time.Second

const (
	// historyLimit is how many entries the history file keeps (readline's default kept 500, cut silently).
	historyLimit = 10_000
	// historySlack is how far past historyLimit readline lets the file grow before it rewrites it at
	// start, which it does through a new file of the umask's mode (0644): trimHistory trims it first,
	// privately, and the slack keeps lines another session appends meanwhile from setting readline off.
	historySlack = 1_000
)

// trimHistory cuts the history file to its last limit entries (blank lines dropped) when it holds more
// lines, the new file (mode 0600) renamed into place by outdir.Create, which trims the file a link
// points to and leaves the link.
func trimHistory(path string, limit int) {
	data, err := os.ReadFile(path)
	if err != nil || bytes.Count(data, []byte{'\n'}) <= limit {
		return
	}
	lines := strings.Split(string(data), "\n")
	keep := make([]string, 0, limit)
	for i := len(lines) - 1; i >= 0 && len(keep) < limit; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			keep = append(keep, lines[i])
		}
	}
	slices.Reverse(keep)
	f, err := outdir.Create(path)
	if err != nil {
		return
	}
	defer f.Abort()
	if f.Chmod(0o600) != nil {
		return
	}
	if _, err := f.WriteString(strings.Join(keep, "\n") + "\n"); err == nil {
		f.Commit()
	}
}

// privateHistory makes the history file readable by its owner only, creating it if need be: it holds
// every statement typed, CREATE SECRET and ATTACH … (PASSWORD …) included, and readline creates it
// with the umask's mode (0644).
func privateHistory(path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return // readline goes on without a history it cannot write
	}
	f.Close()
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		os.Chmod(path, fi.Mode().Perm()&0o700)
	}
}

// pasteAwareStdin looks at what the terminal sends before readline does, for two kinds of paste.
//
// A bracketed paste (the terminal marks it with ESC[200~ … ESC[201~ once the REPL asks for that,
// as bash and zsh do) is taken out of the input: each of its lines is queued, readline gets one
// pasteMark rune in its place (and Enter between lines), and the listener puts the queued text where
// the mark landed. readline redraws the whole line for every rune it is given, so a 20,000-character
// line pasted rune by rune took 22 s, and longer ones minutes; this way each line is drawn twice.
// The pasted text is inserted as it is: a tab is not a completion request, nor ESC or Ctrl-C keys.
//
// Without the brackets (a terminal that does not mark pastes) it counts the tab characters that arrive
// with other input in one read: pasted text (a terminal delivers a paste at once), not the Tab key,
// which arrives alone. readline takes every tab for a completion request, so a pasted 'a<TAB>b' lost
// its tab; the completer inserts these.
type pasteAwareStdin struct {
	r  io.ReadCloser
	mu sync.Mutex // guards tabs and pieces: the listener and completer run on readline's goroutine

	tabs   int
	pieces []pastedLine // lines of bracketed pastes, each waiting for its pasteMark
	pastes int          // bracketed pastes queued so far (a paste's number tags its lines)
	// lineFrom: the number of the paste whose text the line being edited took in (0: none), read when
	// Readline returns it.
	lineFrom atomic.Int64

	ready   []byte // what readline gets next
	carry   []byte // the end of the last read, which may be the start of a bracket
	inPaste bool
	paste   []byte // the bracketed paste read so far

	// prompting: the REPL is inside Readline, the terminal in raw mode, where a NUL is Ctrl-Space, not
	// Ctrl-D; promptAt (Unix ns) when that began, and fresh until the first read after it.
	prompting, fresh atomic.Bool
	promptAt         atomic.Int64
}

// promptBegins and promptEnds bracket a Readline call (see pass).
func (p *pasteAwareStdin) promptBegins() {
	p.lineFrom.Store(0)
	p.promptAt.Store(time.Now().UnixNano())
	p.fresh.Store(true)
	p.prompting.Store(true)
}

func (p *pasteAwareStdin) promptEnds() { p.prompting.Store(false) }

// cookedNul reports whether a NUL read now is a Ctrl-D pressed while a statement ran: read then, or
// in the first read of the next prompt, at once (Linux's line discipline keeps that end-of-file key as
// a NUL in its buffer and hands it over when readline switches the terminal to raw mode).
func (p *pasteAwareStdin) cookedNul() bool {
	if !p.prompting.Load() {
		return true
	}
	return p.fresh.Swap(false) && time.Since(time.Unix(0, p.promptAt.Load())) < 100*time.Millisecond
}

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	// pasteMark stands in readline's buffer for a pasted line until the listener replaces it (a private-use
	// character, which neither a terminal nor a paste sends, since control characters are taken out).
	pasteMark = '\uE000'
	// bracketOn and bracketOff ask the terminal to mark pastes, and to stop (as bash does between commands:
	// a paste while a query runs arrives unmarked).
	bracketOn  = "\x1b[?2004h"
	bracketOff = "\x1b[?2004l"
)

func (p *pasteAwareStdin) Read(b []byte) (int, error) {
	for len(p.ready) == 0 {
		var chunk [4096]byte
		n, err := p.r.Read(chunk[:])
		if n > 0 {
			p.take(chunk[:n])
		}
		if err != nil {
			if len(p.ready) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(b, p.ready)
	p.ready = p.ready[n:]
	return n, nil
}

// take sorts one read into what readline gets and what a bracketed paste holds.
func (p *pasteAwareStdin) take(in []byte) {
	data := append(p.carry, in...)
	p.carry = nil
	for len(data) > 0 {
		marker := pasteStart
		if p.inPaste {
			marker = pasteEnd
		}
		i := bytes.Index(data, []byte(marker))
		part := data
		if i >= 0 {
			part = data[:i]
		} else if k := partialSuffix(data, marker); k > 0 {
			// The bracket may be cut between two reads: keep its start for the next one.
			part = data[:len(data)-k]
			p.carry = append([]byte(nil), data[len(data)-k:]...)
		}
		if p.inPaste {
			p.paste = append(p.paste, part...)
		} else {
			p.pass(part)
		}
		if i < 0 {
			return
		}
		data = data[i+len(marker):]
		if p.inPaste {
			p.queuePaste()
		}
		p.inPaste = !p.inPaste
	}
}

// partialSuffix returns the length of the longest end of data that begins marker (shorter than it).
func partialSuffix(data []byte, marker string) int {
	for k := min(len(marker)-1, len(data)); k > 0; k-- {
		if string(data[len(data)-k:]) == marker[:k] {
			return k
		}
	}
	return 0
}

// pass hands unbracketed input to readline, counting the tabs of a paste (see the type).
//
// A NUL byte from a Ctrl-D pressed while a statement ran (cookedNul) becomes Ctrl-D. readline takes a
// NUL for the end of its input: it returned io.EOF and its key loop stopped for good, so that a key
// typed after it blocked its reader goroutine, and the session, at exit. Any other NUL is Ctrl-Space or
// Ctrl-@ typed at the prompt, which is dropped: as Ctrl-D it ended the session at an empty prompt,
// losing an in-memory database, and deleted the character under the cursor in a line.
func (p *pasteAwareStdin) pass(b []byte) {
	if len(b) > 1 {
		if tabs := bytes.Count(b, []byte{'\t'}); tabs > 0 {
			p.mu.Lock()
			p.tabs += tabs
			p.mu.Unlock()
		}
	}
	if !p.cookedNul() {
		p.ready = append(p.ready, bytes.ReplaceAll(b, []byte{0}, nil)...)
		return
	}
	start := len(p.ready)
	p.ready = append(p.ready, b...)
	for i := start; i < len(p.ready); i++ {
		if p.ready[i] == 0 {
			p.ready[i] = readline.CharDelete // Ctrl-D
		}
	}
}

// queuePaste queues the lines of the bracketed paste just ended and gives readline a pasteMark for
// each, with Enter between them.
func (p *pasteAwareStdin) queuePaste() {
	text := strings.ToValidUTF8(string(p.paste), "\uFFFD")
	p.paste = p.paste[:0]
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	lines := strings.Split(text, "\n")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pastes++
	for i, line := range lines {
		if i > 0 {
			p.ready = append(p.ready, '\r')
		}
		if line == "" {
			continue
		}
		p.pieces = append(p.pieces, pastedLine{pastedText(line), p.pastes})
		p.ready = utf8.AppendRune(p.ready, pasteMark)
	}
}

// pastedLine is one line of a bracketed paste and the number of that paste.
type pastedLine struct {
	text  string
	paste int
}

// pastedText drops the control characters of a pasted line but its tabs: inserted as they are, an
// escape sequence would move the terminal's cursor under readline's feet.
func pastedText(line string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && (r < 0x20 || r == 0x7f || r == pasteMark) {
			return -1
		}
		return r
	}, line)
}

// insertPaste is readline's listener: when the key is a pasteMark, the mark is replaced by the pasted
// line it stands for. (In Ctrl-R search the mark goes to the search text instead; the line is dropped.)
func (p *pasteAwareStdin) insertPaste(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key != pasteMark {
		return nil, 0, false
	}
	p.mu.Lock()
	var piece pastedLine
	if len(p.pieces) > 0 {
		piece, p.pieces = p.pieces[0], p.pieces[1:]
	}
	p.mu.Unlock()
	text := piece.text
	if piece.paste > 0 {
		p.lineFrom.Store(int64(piece.paste))
	}
	at := pos - 1
	if at < 0 || at >= len(line) || line[at] != pasteMark {
		return nil, 0, false
	}
	pasted := []rune(text)
	out := make([]rune, 0, len(line)-1+len(pasted))
	out = append(append(append(out, line[:at]...), pasted...), line[at+1:]...)
	return out, at + len(pasted), true
}

func (p *pasteAwareStdin) Close() error { return p.r.Close() }

// takePastedTab reports whether the tab being handled came with a paste (and counts it off).
func (p *pasteAwareStdin) takePastedTab() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tabs == 0 {
		return false
	}
	p.tabs--
	return true
}

// historyLine makes one history line of a (multi-line) entry. The history file holds a line per
// entry, so line breaks become spaces; a -- comment, which a line break ended, becomes a /* */
// comment, so that recalling `SELECT 1 -- note` + `;` runs that statement instead of waiting for
// the ';' the comment swallowed. Quoted text is copied as it is (a line break inside a string
// becomes a space: the history file cannot hold it). A dot command is kept as typed: its -- are flags
// (.load x --label y), not comments.
func historyLine(text string) string {
	if t := strings.TrimSpace(text); strings.HasPrefix(t, ".") && !strings.ContainsAny(t, "\r\n") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '\n' || c == '\r' {
			b.WriteByte(' ')
			continue
		}
		end, kind := queries.TokenEnd(text, i) // the last byte of a token copied whole
		if end < 0 {                           // unclosed: the rest of the entry
			end = len(text) - 1
		}
		if kind == queries.TokenLineComment {
			// Comments nest in DuckDB: the comment's own /* and */ must not open or close one.
			body := strings.NewReplacer("/*", "/ *", "*/", "* /").Replace(strings.TrimRight(text[i+2:end+1], "\r"))
			b.WriteString("/*" + body + " */")
		} else {
			b.WriteString(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(text[i : end+1]))
		}
		i = end
	}
	return strings.TrimSpace(b.String())
}

// completer completes table, view, macro and function names, SQL keywords, dot commands and their
// arguments (.mode's formats, on/off, command names after .help, object names after .describe, .schema
// and .tables, SQL after .chart) and file names (after .read, .load, .once, .output, .report and
// .unload, and inside a '…' string).
type completer struct {
	s      *session
	pasted *pasteAwareStdin
}

var sqlKeywords = []string{"SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "JOIN", "LEFT JOIN",
	"USING", "WITH", "AS", "AND", "OR", "NOT", "DESC", "HAVING", "DISTINCT", "COUNT", "CREATE TABLE", "DESCRIBE",
	"SUMMARIZE", "INSERT INTO", "UPDATE", "QUALIFY", "OVER", "PARTITION BY"}

// afterLabelFlag matches a dot command's arguments up to a --label whose value is being typed.
var afterLabelFlag = regexp.MustCompile(`(^|\s)--label\s+$`)

// dotFlags are the flags of the dot commands that take any.
var dotFlags = map[string][]string{"load": {"--label", "--replace"}, "unload": {"--label"}}

// literalTab is the completion that inserts a tab character.
var literalTab = [][]rune{{'\t'}}

// fileArgCommands are the dot commands whose arguments are file or directory names.
var fileArgCommands = map[string]bool{"read": true, "load": true, "once": true, "output": true, "report": true, "unload": true}

func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	if c.pasted.takePastedTab() {
		return literalTab, 0
	}
	text := string(line[:pos])
	trimmed := strings.TrimLeft(text, " \t")
	if strings.HasPrefix(trimmed, ".") {
		cmd, args, hasArgs := strings.Cut(trimmed[1:], " ")
		if !hasArgs {
			var out [][]rune
			for name := range dotCommands {
				if strings.HasPrefix(name, cmd) {
					out = append(out, []rune(name[len(cmd):]+" "))
				}
			}
			sortRunes(out)
			return out, len(cmd)
		}
		_, last, lastAt, quote := scanArgs(args, true)
		word, typed := "", ""
		if last != nil {
			word, typed = *last, args[lastAt:]
		}
		switch name, _ := dotCommandName(cmd); {
		case name == "chart":
			return c.completeSQL(args)
		case name == "mode":
			return completeWords(Formats, word), utf8.RuneCountInString(typed)
		case name == "headers" || name == "timer":
			return completeWords([]string{"on", "off"}, word), utf8.RuneCountInString(typed)
		case name == "help":
			return completeWords(slices.Sorted(maps.Keys(dotCommands)), word), utf8.RuneCountInString(typed)
		case name == "describe" || name == "schema" || name == "tables":
			return completeWords(c.objectNames(word), word), utf8.RuneCountInString(typed)
		case (name == "load" || name == "unload") && afterLabelFlag.MatchString(args[:len(args)-len(typed)]):
			return completeWords(c.labels(), word), utf8.RuneCountInString(typed)
		case dotFlags[name] != nil && strings.HasPrefix(word, "-"):
			return completeWords(dotFlags[name], word), utf8.RuneCountInString(typed)
		case fileArgCommands[name] && typed == "~":
			return [][]rune{{'/'}}, 1 // (completed as a path, ~ named its parent's entries too)
		case fileArgCommands[name]:
			return fileArgs(completeFiles(word), quote), utf8.RuneCountInString(typed)
		}
		return nil, 0
	}
	return c.completeSQL(text)
}

// completeSQL completes the last word of text, a statement being typed.
func (c *completer) completeSQL(text string) ([][]rune, int) {
	if at := openIdentifier(text); at >= 0 {
		// "My Table: a name that needs its quotes, completed with the closing one
		word := text[at+1:]
		var out [][]rune
		for _, rest := range completeWords(c.publicNames(word), word) {
			if r := strings.TrimSuffix(string(rest), " "); !strings.Contains(r, `"`) {
				out = append(out, []rune(r+`" `))
			}
		}
		return out, utf8.RuneCountInString(word)
	}
	// Inside a quoted string: a file name ('sample.json', read_csv('data/x.csv')), or a tab.
	if quote := openQuote(text); quote >= 0 {
		word := text[quote+1:]
		if out := completeFiles(word); len(out) > 0 {
			return out, len(word)
		}
		return literalTab, 0
	}
	start := strings.LastIndexAny(text, " \t\n(,.=<>") + 1
	word := text[start:]
	if word == "" {
		return literalTab, 0 // indentation
	}
	names := sqlKeywords
	for _, n := range c.publicNames(word) {
		if plainIdentifier.MatchString(n) { // (the others complete after a ")
			names = append(names, n)
		}
	}
	return completeWords(names, word), utf8.RuneCountInString(word)
}

// objectNames returns the tables, views and macros to offer for word after .describe, .schema and
// .tables (documented analyses included, Go table functions such as critical_path among them), hiding
// internal names as publicNames does. Names that need quotes are left out: those commands take a name
// as typed.
func (c *completer) objectNames(word string) []string {
	var names []string
	for _, d := range queries.Docs() {
		names = append(names, d.Name)
	}
	rows, err := c.s.db.SQL.Query(`SELECT table_name FROM duckdb_tables() WHERE NOT internal
        UNION SELECT view_name FROM duckdb_views() WHERE NOT internal
        UNION SELECT function_name FROM duckdb_functions() WHERE function_type IN ('table_macro', 'macro') AND NOT internal`)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil {
				names = append(names, n)
			}
		}
	}
	var out []string
	for _, n := range names {
		if plainIdentifier.MatchString(n) && !(strings.HasPrefix(n, "_") && !strings.HasPrefix(word, "_")) && !sqlfuncs.IsInternal(n) {
			out = append(out, n)
		}
	}
	return out
}

// labels returns the trace sets loaded (after .load and .unload's --label).
func (c *completer) labels() []string {
	var out []string
	rows, err := c.s.db.SQL.Query(`SELECT DISTINCT label FROM traces ORDER BY label`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var l string
		if rows.Scan(&l) == nil && !strings.ContainsAny(l, " \t'\"\\") {
			out = append(out, l)
		}
	}
	return out
}

// plainIdentifier matches the names SQL takes without quotes.
var plainIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// publicNames returns the catalog's names to offer for word: internal names (_hta_frame, …) are the
// public ones' machinery, not offered to someone typing a public name; the Go table functions among them
// not at all, since a statement that calls one is refused (sqlfuncs.RefuseInternalCall).
func (c *completer) publicNames(word string) []string {
	var names []string
	for _, cand := range c.candidates() {
		if strings.HasPrefix(cand, "_") && !strings.HasPrefix(word, "_") || sqlfuncs.IsInternal(cand) {
			continue
		}
		names = append(names, cand)
	}
	return names
}

// fileArgs writes completeFiles' rests as a dot command's argument reads them (splitArgs): outside quotes
// a space, quote or backslash after a backslash; inside quote, a file's name closed by it (a directory's
// stays open for more), and a name holding quote left out.
func fileArgs(rests [][]rune, quote byte) [][]rune {
	var out [][]rune
	for _, r := range rests {
		rest := string(r)
		switch {
		case quote == 0:
			rest = argEscaper.Replace(rest)
		case strings.IndexByte(rest, quote) >= 0:
			continue
		case !strings.HasSuffix(rest, "/"):
			rest += string(quote)
		}
		out = append(out, []rune(rest))
	}
	return out
}

var argEscaper = strings.NewReplacer(`\`, `\\`, " ", `\ `, "\t", "\\\t", "'", `\'`, `"`, `\"`)

// completeWords returns the rest of each of names that starts with word, ignoring case, followed by a
// space. The rest takes the case word is typed in (sel → select, SEL → SELECT; selECT before), where word
// has one.
func completeWords(names []string, word string) [][]rune {
	lower, upper := strings.ToLower(word), strings.ToUpper(word)
	var out [][]rune
	seen := map[string]bool{}
	for _, cand := range names {
		if len(cand) < len(word) || !strings.EqualFold(cand[:len(word)], word) {
			continue
		}
		rest := cand[len(word):]
		switch {
		case word == lower && word != upper:
			rest = strings.ToLower(rest)
		case word == upper && word != lower:
			rest = strings.ToUpper(rest)
		}
		if !seen[rest] {
			seen[rest] = true
			out = append(out, []rune(rest+" "))
		}
	}
	sortRunes(out)
	return out
}

// completeFiles returns the rest of each file or directory name that starts with word, a path: a
// directory's rest ends in "/", a file's in nothing (a closing quote or more arguments may follow).
func completeFiles(word string) [][]rune {
	dir, base := filepath.Split(word)
	entries, err := os.ReadDir(cmp.Or(dir, "."))
	if err != nil {
		return nil
	}
	var out [][]rune
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		rest := name[len(base):]
		if e.IsDir() {
			rest += "/"
		}
		out = append(out, []rune(rest))
	}
	sortRunes(out)
	return out
}

// openQuote returns the position of the ' that opens a string still open at the end of text, or -1
// (also for a "…" identifier or a comment).
func openQuote(text string) int {
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		if end < 0 {
			if kind == queries.TokenQuoted && text[i] != '"' && text[i] != '$' {
				return strings.IndexByte(text[i:], '\'') + i
			}
			return -1
		}
		i = end
	}
	return -1
}

// openIdentifier returns the position of the " that opens an identifier still open at the end of text,
// or -1.
func openIdentifier(text string) int {
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		if end < 0 {
			if kind == queries.TokenQuoted && text[i] == '"' {
				return i
			}
			return -1
		}
		i = end
	}
	return -1
}

func sortRunes(out [][]rune) {
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
}

// candidates returns the names of the catalog's tables, views, functions and columns.
func (c *completer) candidates() []string {
	var out []string
	rows, err := c.s.db.SQL.Query(`SELECT table_name FROM duckdb_tables() WHERE NOT internal
        UNION SELECT view_name FROM duckdb_views() WHERE NOT internal
        UNION SELECT function_name FROM duckdb_functions() WHERE function_type IN ('table_macro', 'macro', 'table', 'scalar', 'aggregate')
        UNION SELECT column_name FROM duckdb_columns() WHERE NOT internal`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			out = append(out, n)
		}
	}
	return out
}
