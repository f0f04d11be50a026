package sqlfuncs

import "testing"

// TestHTAWholeMicros: the compat times are HTA's float64 rounding (Python's float of the µs text,
// math.ceil / math.floor; the expected values were computed so), not exact decimal rounding: at
// epoch-scale µs a float64 resolves 0.25 µs, so 1712195495438025.025 µs starts at …025, not …026.
func TestHTAWholeMicros(t *testing.T) {
	for _, c := range []struct{ ts, dur, start, end int64 }{
		{1712195495438025025, 624, 1712195495438025000, 1712195495438025000},
		{1712195495521130028, 1000, 1712195495521130000, 1712195495521131000},
		{1712195495521130028, 0, 1712195495521130000, 1712195495521130000},
		{1712195495521130999, 1, 1712195495521131000, 1712195495521131000},
		{4500000000000300, 700, 4500000000001000, 4500000000001000},
		{3605057445513336, 2999, 3605057445514000, 3605057445516000},
		{-1500, 1000, -1000, -1000}, // integer division would have rounded toward zero
		{-1500, 400, -1000, -2000},
		{1000, 0, 1000, 1000},
		{7, 993, 1000, 1000},
	} {
		if start, end := htaWholeMicros(c.ts, c.dur); start != c.start || end != c.end {
			t.Errorf("htaWholeMicros(%d, %d) = %d, %d, want %d, %d", c.ts, c.dur, start, end, c.start, c.end)
		}
	}
}

// TestAppendTS: default mode writes exact µs with three decimals, the sign in front of the magnitude (r72 #4:
// -979,750 ns came out -980.250, half a µs early); compat writes HTA's truncated whole µs.
func TestAppendTS(t *testing.T) {
	for _, c := range []struct {
		ns            int64
		compat, float bool
		want          string
	}{
		{1700000000000050250, false, false, "1700000000000050.250"},
		{1000, false, false, "1"},
		{0, false, false, "0"},
		{-979750, false, false, "-979.750"},
		{-250, false, false, "-0.250"},
		{-1000, false, false, "-1"},
		{-9223372036854775808, false, false, "-9223372036854775.808"},
		{9223372036854775807, false, false, "9223372036854775.807"},
		{1500, true, false, "1"},
		{1500, true, true, "1.0"},
	} {
		if got := string(appendTS(nil, c.ns, c.compat, c.float)); got != c.want {
			t.Errorf("appendTS(%d, compat %v, float %v) = %s, want %s", c.ns, c.compat, c.float, got, c.want)
		}
	}
}
