// Package decimal converts the decimal text of JSON numbers to integers exactly, without float64: trace
// timestamps are epoch microseconds with three decimals, and 1.7e15 µs · 1000 needs 61 bits, more than a float64
// mantissa holds. The loader parses with it, and the exports that write times derived from a trace's own.
package decimal

import (
	"errors"
	"math"
)

var (
	ErrNotNumber = errors.New("not a number")
	ErrRange     = errors.New("out of range")
)

// MicrosToNanos converts the decimal text of a JSON number in microseconds to integer nanoseconds exactly,
// without going through float64: Kineto writes epoch microseconds with three decimals, and
// 1.7e15 µs · 1000 needs 61 bits, more than a float64 mantissa holds. Digits beyond nanoseconds
// are rounded half away from zero. Exponent notation is accepted.
func MicrosToNanos(b []byte) (int64, error) {
	return Scaled(b, 3)
}

// Int parses the text of a JSON integer (or an integral decimal such as 12.0) exactly.
func Int(b []byte) (int64, error) {
	return Scaled(b, 0)
}

// Scaled returns the number written in b multiplied by 10^scale, rounded half away from zero.
func Scaled(b []byte, scale int) (int64, error) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64 // significant digits, as an integer
	exp := 0        // power of ten applied to mant
	digits := 0
	overflowDigits := 0 // digits dropped because mant would overflow (integer part)
	var dropped byte    // first dropped fractional digit, for rounding
	droppedNonzero := false
	seenDot := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if mant > (math.MaxUint64-9)/10 {
				if !seenDot {
					overflowDigits++
				} else if dropped == 0 && !droppedNonzero {
					dropped = c
					droppedNonzero = c != '0'
				}
				continue
			}
			mant = mant*10 + uint64(c-'0')
			if seenDot {
				exp--
			}
		case c == '.' && !seenDot:
			seenDot = true
		case c == 'e' || c == 'E':
			e, err := parseSmallExp(b[i+1:])
			if err != nil {
				return 0, err
			}
			exp += e
			i = len(b)
		default:
			return 0, ErrNotNumber
		}
	}
	if digits == 0 {
		return 0, ErrNotNumber
	}
	exp += scale + overflowDigits
	// A mantissa below 2^64 scaled by 10^-21 or less rounds to 0 (0e999 and 1e-400 are valid JSON for 0).
	if mant == 0 || exp < -21 {
		return 0, nil
	}
	// Apply the exponent: multiply, or divide with rounding.
	for exp > 0 {
		if mant > math.MaxUint64/10 {
			return 0, ErrRange
		}
		mant *= 10
		exp--
	}
	roundUp := dropped >= '5'
	for exp < 0 {
		d := mant % 10
		mant /= 10
		roundUp = d >= 5
		exp++
	}
	if roundUp {
		mant++
	}
	if neg && mant == 1<<63 {
		return math.MinInt64, nil
	}
	if mant > math.MaxInt64 {
		return 0, ErrRange
	}
	if neg {
		return -int64(mant), nil
	}
	return int64(mant), nil
}

func parseSmallExp(b []byte) (int, error) {
	i, neg, e := 0, false, 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, ErrNotNumber
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return 0, ErrNotNumber
		}
		// saturated: beyond this any mantissa is 0 or out of range, which the caller decides
		e = min(e*10+int(b[i]-'0'), 100000)
	}
	if neg {
		e = -e
	}
	return e, nil
}
