package engine

import "tracesql/internal/decimal"

// The loader's exact number parsing (internal/decimal).
var (
	usToNs        = decimal.MicrosToNanos
	parseInt      = decimal.Int
	decimalScaled = decimal.Scaled
	errRange      = decimal.ErrRange
)
