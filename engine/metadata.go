package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// traceInfo is what the top-level metadata says about the file: the values that go into typed
// columns of traces, checked so that a bad one is named rather than failing the INSERT with DuckDB's
// conversion error.
type traceInfo struct {
	rank *int
	// rankErr: distributedInfo.rank is there but is no rank. It matters only where the rank is taken
	// from distributedInfo (--rank-from auto), so pickRank reports it, not readMetadata.
	rankErr               error
	backend               any
	worldSize, baseTimeNS any
	schemaVersion         any
	// warnings name the values that only fill a column and are not what it holds: each column is left
	// NULL (the value stays in traces.metadata) and the file loads, as Perfetto, which reads none of
	// them, opens it. Only the rank decides what a file is.
	warnings []string
}

// maxRank is the largest rank: traces.rank and events.rank are INTEGER.
const maxRank = math.MaxInt32

var errNotInteger = errors.New("not an integer")

func readMetadata(meta map[string]json.RawMessage) traceInfo {
	var ti traceInfo
	if raw, ok := meta["distributedInfo"]; ok && !isNull(raw) {
		var di map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &di) != nil {
			ti.rankErr = fmt.Errorf("distributedInfo is %s, want an object; --rank-from file or index ignores it", kindOf(firstByte(raw)))
			return ti
		}
		if v, ok := di["rank"]; ok && !isNull(v) {
			n, err := metaInt(v)
			switch {
			case err != nil:
				ti.rankErr = metaError("distributedInfo.rank", v, err)
			case n < 0 || n > maxRank:
				ti.rankErr = fmt.Errorf("distributedInfo.rank %s is out of range (want 0 to %d)", clip(v), maxRank)
			default:
				r := int(n)
				ti.rank = &r
			}
			if ti.rankErr != nil {
				ti.rankErr = fmt.Errorf("%w; --rank-from file or index ignores it", ti.rankErr)
			}
		}
		if v, ok := di["backend"]; ok && !isNull(v) {
			var b string
			if json.Unmarshal(v, &b) != nil {
				ti.warnings = append(ti.warnings, fmt.Sprintf("distributedInfo.backend is %s, want a string", kindOf(firstByte(v))))
			} else {
				ti.backend = b
			}
		}
		if v, ok := di["world_size"]; ok && !isNull(v) {
			if n, err := metaInt(v); err != nil {
				ti.warnings = append(ti.warnings, metaError("distributedInfo.world_size", v, err).Error())
			} else {
				ti.worldSize = n
			}
		}
	}
	for _, f := range []struct {
		key string
		to  *any
	}{{"baseTimeNanoseconds", &ti.baseTimeNS}, {"schemaVersion", &ti.schemaVersion}} {
		if v, ok := meta[f.key]; ok && !isNull(v) {
			if n, err := metaInt(v); err != nil {
				ti.warnings = append(ti.warnings, metaError(f.key, v, err).Error())
			} else {
				*f.to = n
			}
		}
	}
	return ti
}

// metaInt parses a metadata value that goes into a BIGINT column: a JSON integer, also written as
// an integral decimal (8.0, 1e3) or as a string holding one ("8"), as the loader always took them.
func metaInt(v json.RawMessage) (int64, error) {
	text := numberText(v)
	n, err := parseInt(text)
	if err != nil {
		return 0, err
	}
	// parseInt rounds a fraction away; here a fraction means the value is not what the column holds.
	// The exponent is small once parseInt has accepted it, so big.Rat cannot blow up.
	if bytes.ContainsAny(text, ".eE") {
		if r, ok := new(big.Rat).SetString(string(text)); !ok || !r.IsInt() {
			return 0, errNotInteger
		}
	}
	return n, nil
}

// metaError names a metadata value that is not an int64 integer.
func metaError(key string, v json.RawMessage, err error) error {
	if errors.Is(err, errRange) {
		return fmt.Errorf("%s %s is out of range (want an integer that fits 64 bits)", key, clip(v))
	}
	return fmt.Errorf("%s %s is not an integer", key, clip(v))
}

func firstByte(v json.RawMessage) byte {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// rankFromOrder reports whether pickRank takes the file's rank from its place in the load's file order:
// neither its metadata nor its name gives one.
func rankFromOrder(from RankFrom, info traceInfo, path string) bool {
	if from == RankAuto && (info.rankErr != nil || info.rank != nil) {
		return false
	}
	if from != RankIndex {
		if _, ok := rankDigitsInName(path); ok || from == RankFile {
			return false
		}
	}
	return true
}

func pickRank(from RankFrom, info traceInfo, path string, index int) (int, error) {
	if from == RankAuto {
		if info.rankErr != nil {
			return 0, info.rankErr
		}
		if info.rank != nil {
			return *info.rank, nil
		}
	}
	if from != RankIndex {
		if digits, ok := rankDigitsInName(path); ok {
			r, err := strconv.ParseInt(digits, 10, 32)
			if err != nil {
				hint := "--rank-from index ignores it"
				if from == RankAuto {
					hint = "distributedInfo.rank or --rank-from index replaces it"
				}
				return 0, fmt.Errorf("rank %s in the file name is out of range (want 0 to %d; %s)", clip([]byte(digits)), maxRank, hint)
			}
			return int(r), nil
		}
		if from == RankFile {
			// Asked for explicitly, the name is the only source: file order would be a silent guess.
			return 0, errors.New("no rank in the file name (want rank3, rank-3, rank_3, worker3 or worker 3; --rank-from auto or index numbers such files in order)")
		}
	}
	return index, nil
}
