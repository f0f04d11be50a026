//go:build duckdb_arrow

package sqlfuncs

import (
	"errors"
	"testing"
)

// TestCPSymbolDict: hashes decode to the strings' numbers in order; a hash no string has is -1; two strings of
// one hash are errCPSymbolMiss, which falls back to reading the strings. Hashes
// equal in their low bits share a slot chain.
func TestCPSymbolDict(t *testing.T) {
	d, err := newCPSymbolDict([]cpSymbolEntry{{"", 7}, {"cpu_op", 7 + 1<<40}, {"aten::mm", 8}, {"k", 1<<63 | 7}})
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[uint64]int32{7: 0, 7 + 1<<40: 1, 8: 2, 1<<63 | 7: 3, 9: -1, 7 + 1<<41: -1} {
		if got := d.lookup(h); got != want {
			t.Errorf("lookup(%#x) = %d, want %d", h, got, want)
		}
	}
	if len(d.syms) != 4 || d.syms[1] != "cpu_op" {
		t.Errorf("syms %q", d.syms)
	}
	if _, err := newCPSymbolDict([]cpSymbolEntry{{"a", 5}, {"b", 5}}); !errors.Is(err, errCPSymbolMiss) {
		t.Errorf("two strings of one hash: %v, want errCPSymbolMiss", err)
	}
	empty, err := newCPSymbolDict(nil)
	if err != nil || empty.lookup(0) != -1 {
		t.Errorf("empty dict: %v", err)
	}
	// a table exactly half full still ends every probe at an empty slot
	var many []cpSymbolEntry
	for i := range 8 {
		many = append(many, cpSymbolEntry{string(rune('a' + i)), uint64(i) << 4})
	}
	full, err := newCPSymbolDict(many)
	if err != nil {
		t.Fatal(err)
	}
	if full.lookup(3) != -1 || full.lookup(7<<4) != 7 {
		t.Errorf("half-full table: %d %d", full.lookup(3), full.lookup(7<<4))
	}
}
