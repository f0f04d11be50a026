package main

import (
	"bytes"
	"fmt"
	"os"
)

// readSQLFile reads a -f or .read file and checks that it is SQL text. A trace or a database
// handed to them by mistake (a .json.gz, a .duckdb) would otherwise run as hundreds of
// statements, each a parser error on a line of binary or JSON.
func readSQLFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if err := checkSQLText(b); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return string(b), nil
}

// checkSQLText refuses what cannot be SQL: gzip data, binary data (a NUL byte) and a text that
// opens as JSON does ({ or [ cannot start a SQL statement).
func checkSQLText(b []byte) error {
	const traceHint = "load a trace with .load FILE or as an argument: tracesql FILE"
	switch head := bytes.TrimLeft(b, " \t\r\n\ufeff"); {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return fmt.Errorf("gzip-compressed data, not SQL text (%s)", traceHint)
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}) || bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return fmt.Errorf("UTF-16 text (it starts with a UTF-16 byte-order mark), not UTF-8: save it as UTF-8")
	case bytes.IndexByte(b, 0) >= 0:
		return fmt.Errorf("binary data (a NUL byte at offset %d), not SQL text", bytes.IndexByte(b, 0))
	case len(head) > 0 && (head[0] == '{' || head[0] == '['):
		return fmt.Errorf("JSON, not SQL text (%s)", traceHint)
	}
	return nil
}
