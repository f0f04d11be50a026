package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chzyer/readline"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

const (
	prompt     = "tracesql> "
	contPrompt = "     ...> "
)

// readPiped runs statements from a non-terminal stdin. It does not use readline, which is quadratic
// in line length on piped input (stack.md §1.5): a scanner with a large buffer, no prompts, and the
// session goes on after an error, as the REPL does; the exit status says whether any failed. An error
// names the line its statement starts on ("stdin:5: ..."), as for -f -.
func (s *session) readPiped(ctx context.Context, in io.Reader) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	var buf stmtBuffer
	s.failed = false
	s.piped = true
	defer func() { s.piped = false }()
	defer func(script, where string) { s.script, s.where = script, where }(s.script, s.where)
	s.script = "stdin"
	first := true
	for sc.Scan() {
		text := sc.Text()
		if first {
			text = strings.TrimPrefix(text, "\ufeff") // as runScript
			first = false
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
	if err := sc.Err(); err != nil {
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
// cancels the running query, Ctrl-D exits.
func (s *session) repl(ctx context.Context, stdout, stderr io.Writer) int {
	historyFile := ""
	if home, err := os.UserHomeDir(); err == nil {
		historyFile = filepath.Join(home, ".tracesql_history")
	} // else no history file: "" would put it in the current directory
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 prompt,
		HistoryFile:            historyFile,
		DisableAutoSaveHistory: true,
		AutoComplete:           &completer{s: s},
		InterruptPrompt:        "^C",
		EOFPrompt:              ".quit",
		Stdout:                 stdout,
		Stderr:                 stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: %v\n", err)
		return 1
	}
	defer rl.Close()
	// One writer for both: readline makes a new one per Stdout() call, and the table format fits the
	// screen only while s.out is s.stdout.
	w := rl.Stdout()
	s.stdout, s.out = w, w
	s.errOut, s.terminal = rl.Stderr(), true
	fmt.Fprintln(s.out, `Enter ".help" for usage hints; statements end with ";".`)
	var buf stmtBuffer
	var entry []string
	for !s.quit {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			entry = entry[:0]
			rl.SetPrompt(prompt)
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			// A statement typed without its ';' runs, as piped input's last one does.
			if err := s.runPending(ctx, &buf); err != nil {
				s.reportErr(err)
			} else if h := historyLine(strings.Join(entry, "\n")); h != "" {
				rl.SaveHistory(h)
			}
			break
		}
		entry = append(entry, line)
		if err := s.feed(ctx, &buf, line, false); err != nil {
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
	return s.quitStatus(0)
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

// completer completes table, view, macro and function names, SQL keywords and dot commands.
type completer struct {
	s *session
}

var sqlKeywords = []string{"SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "JOIN", "LEFT JOIN",
	"USING", "WITH", "AS", "AND", "OR", "NOT", "DESC", "HAVING", "DISTINCT", "COUNT", "CREATE TABLE", "DESCRIBE",
	"SUMMARIZE", "INSERT INTO", "UPDATE", "QUALIFY", "OVER", "PARTITION BY"}

func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	start := strings.LastIndexAny(text, " \t(,.=<>") + 1
	if strings.HasPrefix(strings.TrimSpace(text), ".") && !strings.Contains(strings.TrimSpace(text), " ") {
		start = strings.Index(text, ".") + 1
		var out [][]rune
		for name := range dotCommands {
			if strings.HasPrefix(name, text[start:]) {
				out = append(out, []rune(name[len(text[start:]):]+" "))
			}
		}
		return out, len(text) - start
	}
	word := text[start:]
	if word == "" {
		return nil, 0
	}
	var out [][]rune
	seen := map[string]bool{}
	for _, cand := range c.candidates() {
		if strings.HasPrefix(cand, "_") && !strings.HasPrefix(word, "_") || sqlfuncs.IsInternal(cand) {
			// Internal names (_hta_frame, …) are the public ones' machinery, not offered to someone typing a
			// public name; the Go table functions among them not at all, since a statement that calls one is
			// refused (sqlfuncs.RefuseInternalCall).
			continue
		}
		if strings.HasPrefix(strings.ToLower(cand), strings.ToLower(word)) && !seen[cand] {
			seen[cand] = true
			out = append(out, []rune(cand[len(word):]+" "))
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out, len(word)
}

func (c *completer) candidates() []string {
	out := append([]string(nil), sqlKeywords...)
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
