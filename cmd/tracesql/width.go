package main

import (
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"
)

// Terminal display width of text, for aligning table columns and bar labels. Counting runes
// misaligns CJK and emoji (two cells each) and combining marks (none). The module has no
// width library (chzyer/readline's own table knows only Han, Hangul and kana, not emoji or
// fullwidth forms), so this is a compact version of Unicode's East Asian Width property
// (UAX #11, Wide and Fullwidth), as go-runewidth and wcwidth use it.

// wideRanges are the code points two cells wide, sorted, inclusive.
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251},
	{0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393},
	{0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E},
	{0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567},
	{0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5},
	{0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC},
	{0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
	{0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

// runeWidth is the number of terminal cells r takes: 0 for combining marks and format
// characters (zero-width joiner, variation selectors), 2 for wide and fullwidth characters.
func runeWidth(r rune) int {
	switch {
	case r < 0x300: // ASCII and Latin-1: the common case, one cell (controls are escaped before)
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || (0x1160 <= r && r <= 0x11FF):
		// Hangul medial vowels and final consonants join the preceding initial consonant.
		return 0
	}
	i := sort.Search(len(wideRanges), func(i int) bool { return wideRanges[i][1] >= r })
	if i < len(wideRanges) && wideRanges[i][0] <= r {
		return 2
	}
	return 1
}

// widthAfter is the number of cells r takes after prev (0 at the start): an emoji joined to the one before
// by a zero-width joiner (a family, 👨‍👩‍👧) or a skin-tone modifier after one (👍🏽) is drawn inside
// that one's two cells, as terminals draw the grapheme cluster (letters or CJK joined so stay apart).
func widthAfter(prev, r rune) int {
	if prev == 0x200D && isEmoji(r) || isEmoji(prev) && 0x1F3FB <= r && r <= 0x1F3FF {
		return 0
	}
	return runeWidth(r)
}

// isEmoji reports the pictographic blocks that zero-width joiners and skin tones combine.
func isEmoji(r rune) bool {
	return 0x2600 <= r && r <= 0x27BF || 0x1F300 <= r && r <= 0x1FAFF
}

// displayWidth is the number of terminal cells s takes.
func displayWidth(s string) int {
	n := 0
	var prev rune
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			prev = rune(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += widthAfter(prev, r)
		i += size
		prev = r
	}
	return n
}

// truncateWidth cuts s to at most width cells, ending it with "…" when something was cut.
// Combining marks, and emoji joined to the one before, stay with the character they follow.
func truncateWidth(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	n := 0
	var prev rune
	for i, r := range s {
		w := widthAfter(prev, r)
		if w > 0 && n+w > width-1 {
			return s[:i] + "…"
		}
		n += w
		prev = r
	}
	return s
}

// minFitWidth is the narrowest fitColumns makes a text column that is wider: enough for the start of a
// name.
const minFitWidth = 12

// fitColumns fits a table whose columns need widths (terminal cells, without borders) into screen cells
// (0 = any width). It narrows widths in place, the widest first, down to minFitWidth, a numeric column
// (numeric[i]) no narrower than its values (floors[i]: a number cut with "…" reads as another
// number), and returns the indexes of the columns to show, in order; when narrowing is not enough,
// middle columns are left out and -1 marks the place of the "…" column that stands for them (the last
// columns too, on a screen too narrow for the first and the last).
func fitColumns(widths, floors []int, numeric []bool, screen int) []int {
	all := make([]int, len(widths))
	for i := range all {
		all[i] = i
	}
	total := func(ws []int) int {
		t := 1
		for _, w := range ws {
			t += w + 3
		}
		return t
	}
	if screen <= 0 || total(widths) <= screen {
		return all
	}
	floor := func(i int) int {
		if numeric[i] {
			return max(floors[i], minFitWidth)
		}
		return minFitWidth
	}
	// Narrow: lower a common cap until the table fits or every wide column is at its floor.
	capped := func(i, limit int) int { return min(widths[i], max(limit, floor(i))) }
	need := func(limit int) int {
		t := 1
		for i := range widths {
			t += capped(i, limit) + 3
		}
		return t
	}
	limit := slices.Max(widths)
	for limit > 1 && need(limit) > screen {
		limit--
	}
	for i := range widths {
		widths[i] = capped(i, limit)
	}
	if total(widths) <= screen {
		return all
	}
	// Leave out middle columns: take columns from both ends, the left first, while they and the "…" column
	// fit (at least one column from each end, as DuckDB shows).
	used := 1 + 4 // the outer border and the "…" column
	left, right := []int{}, []int{}
	l, r := 0, len(widths)-1
	for l <= r {
		if w := widths[l] + 3; len(left) <= len(right) && (used+w <= screen || len(left) == 0) {
			left, used, l = append(left, l), used+w, l+1
		} else if w := widths[r] + 3; used+w <= screen || len(right) == 0 {
			right, used, r = append(right, r), used+w, r-1
		} else {
			break
		}
	}
	if l > r {
		return all // two columns that do not fit even alone: shown whole, wider than the screen
	}
	if used > screen {
		// The two end columns alone are wider than the screen: the left ones and the "…" column, if
		// they fit; else every column, since leaving some out would hide data and still not fit.
		left, used = left[:0], 1+4
		for i := 0; i < len(widths)-1 && used+widths[i]+3 <= screen; i++ {
			left, used = append(left, i), used+widths[i]+3
		}
		if len(left) == 0 {
			return all
		}
		return append(left, -1)
	}
	out := append(left, -1)
	for k := len(right) - 1; k >= 0; k-- {
		out = append(out, right[k])
	}
	return out
}
