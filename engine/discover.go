package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RankFrom says how ranks are assigned to the files of a trace set.
type RankFrom string

const (
	// RankAuto uses distributedInfo.rank, else a rank pattern in the file name, else file order.
	RankAuto RankFrom = "auto"
	// RankFile uses only the file name pattern: a file without one is an error.
	RankFile RankFrom = "file"
	// RankIndex numbers the files in order.
	RankIndex RankFrom = "index"
)

// ParseRankFrom validates a --rank-from value.
// ErrNoSuchPath: a trace path given does not exist. Paths are checked before anything loads, so none of
// the set's paths is loaded then.
var ErrNoSuchPath = errors.New("no such file or directory")

func ParseRankFrom(s string) (RankFrom, error) {
	switch RankFrom(s) {
	case RankAuto, RankFile, RankIndex:
		return RankFrom(s), nil
	}
	return "", fmt.Errorf("--rank-from %q: want auto, file or index", s)
}

// Discover expands the arguments into trace files: a directory contributes the files directly
// inside it (not recursive) named *.json or *.json.gz in any case (which covers *.pt.trace.json[.gz]),
// sorted by name, except hidden ones (a name starting with a dot), the files tracesql's exports write
// (writtenBy) and JSON compressed another way (*.json.zst, …, as it is not read), each listed in
// repeated, skipped; a file is taken as given. A file named more than once (`T T`, a file and its directory,
// a symbolic link to a file already named) is kept the first time and the others are listed in
// repeated, with why: loaded twice into one set, it would count twice, as two ranks, or clash with
// itself over its rank. A directory entry that is a link to a directory is not a trace: left out.
func Discover(args []string) (files []string, fromDir []bool, repeated []LoadResult, err error) {
	seen := map[string]bool{}
	var infos []os.FileInfo // of files, for links to one of them under another name
	add := func(abs string, dir bool) {
		if seen[abs] {
			repeated = append(repeated, LoadResult{Path: abs, Skipped: SkippedNamedTwice})
			return
		}
		seen[abs] = true
		if st, err := os.Stat(abs); err == nil { // (a file that cannot be read is the loader's to report)
			if dir && st.IsDir() {
				return
			}
			for i, other := range infos {
				if other != nil && os.SameFile(st, other) {
					repeated = append(repeated, LoadResult{Path: abs, Skipped: "the same file as " + files[i]})
					return
				}
			}
			infos = append(infos, st)
		} else {
			infos = append(infos, nil)
		}
		files = append(files, abs)
		fromDir = append(fromDir, dir)
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			named := a // by its absolute path, as every other load error names its file
			if abs, aerr := filepath.Abs(a); aerr == nil {
				named = abs
			}
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil, nil, fmt.Errorf("load %s: %w", named, ErrNoSuchPath)
			}
			return nil, nil, nil, fmt.Errorf("load %s: %w", named, err)
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				// A FIFO, /dev/stdin or <(…) is read up to four times (the NCCL sniff, the rank plan, the parse):
				// the first open of a FIFO with no writer blocked in a system call no signal stops, and a pipe
				// read once looked empty to the next reader.
				return nil, nil, nil, fmt.Errorf("load %s: not a regular file (%s): tracesql reads a trace file more than once; save it to a file first", a, fileKind(st.Mode()))
			}
			abs, _ := filepath.Abs(a)
			add(abs, false)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("load %s: cannot read directory: %w", a, err)
		}
		var found, subdirs []string
		var unread, hidden []LoadResult
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				subdirs = append(subdirs, n)
			}
			if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
				abs, _ := filepath.Abs(filepath.Join(a, n))
				if lower := strings.ToLower(n); strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".json.gz") {
					if strings.HasPrefix(n, ".") {
						// As a shell's *.json: macOS's ._rank0.json (AppleDouble) and Emacs's .#rank0.json lock
						// link are no traces, and failed the whole set.
						hidden = append(hidden, LoadResult{Path: abs, Skipped: "a hidden file (name it to load it)"})
						continue
					}
					found = append(found, abs)
				} else if how := unreadCompression(lower); how != "" {
					// A rank of the job compressed another way: passed over without a word, it went missing.
					unread = append(unread, LoadResult{Path: abs, Skipped: how + "-compressed: tracesql reads .json and .json.gz (decompress it, or recompress it with gzip)"})
				}
			}
		}
		sort.Slice(unread, func(i, j int) bool { return naturalLess(unread[i].Path, unread[j].Path) })
		sort.Slice(hidden, func(i, j int) bool { return naturalLess(hidden[i].Path, hidden[j].Path) })
		repeated = append(repeated, unread...)
		repeated = append(repeated, hidden...)
		if len(found) == 0 {
			if len(hidden) > 0 {
				return nil, nil, nil, fmt.Errorf("load %s: no *.json or *.json.gz trace files in the directory, only hidden ones such as %s (name one to load it)", a, filepath.Base(hidden[0].Path))
			}
			if len(unread) > 0 {
				return nil, nil, nil, fmt.Errorf("load %s: no *.json or *.json.gz trace files in the directory: %s is %s", a, filepath.Base(unread[0].Path), unread[0].Skipped)
			}
			// Subdirectories are not searched (one directory is one trace set): name them.
			sub := ""
			if len(subdirs) > 0 {
				sort.Slice(subdirs, func(i, j int) bool { return naturalLess(subdirs[i], subdirs[j]) })
				sub = fmt.Sprintf(" (its subdirectories, such as %s, are not searched: name them, with --label for each set)", filepath.Join(a, subdirs[0]))
			}
			return nil, nil, nil, fmt.Errorf("load %s: no *.json or *.json.gz trace files in the directory%s", a, sub)
		}
		sort.Slice(found, func(i, j int) bool { return naturalLess(found[i], found[j]) })
		var exports []LoadResult
		for _, f := range found {
			if by := writtenBy(filepath.Base(f)); by != "" {
				// Beside its source it has the source's rank: loading both would be a rank clash.
				exports = append(exports, LoadResult{Path: f, Skipped: "written by " + by + " (name the file to load it)"})
				continue
			}
			add(f, true)
		}
		if len(exports) == len(found) {
			// an export's output directory: loading nothing and going on ran every query on an empty database
			return nil, nil, nil, fmt.Errorf("load %s: no trace files in the directory, only %d file(s) written by tracesql's exports (name one to load it)", a, len(exports))
		}
		repeated = append(repeated, exports...)
	}
	return files, fromDir, repeated, nil
}

// writtenBy names the tracesql (and HTA) export that writes files named like name, or "": overlays and
// counters traces are copies of a trace, found beside it when written into the trace directory.
func writtenBy(name string) string {
	switch {
	case strings.HasPrefix(name, "overlaid_critical_path_"):
		return "export_critical_path_overlay"
	case strings.HasPrefix(name, "overlaid_"):
		return "export_kernel_sequences_overlay"
	case strings.Contains(name, "_with_counters.json"):
		return "export_counters_trace"
	}
	return ""
}

// rankInName matches rank3, rank-3, rank_3, worker3, worker_3, "worker 3"; rankSpans keeps those that
// start a word (not frank7, not prerank2; trainRank3 in camel case does). The last one in the base name
// wins (directories do not count), a rank over a worker: in rank6_worker9 the worker is a local number
// (a DataLoader's or a host's), the rank the job's.
var rankInName = regexp.MustCompile(`(?i)(?:rank|worker)[-_ ]?(\d+)`)

// rankSpans returns the index pairs of rankInName's matches in name that start a word: at the start,
// after a character that is not a letter, or as the capitalised part of a camel-case name. Go's regexp
// has no look-behind, and a boundary consumed by the pattern would hide a match that follows another
// (rank1rank2) and eat the separator that inflate keeps.
func rankSpans(name string) [][]int {
	var out [][]int
	for _, m := range rankInName.FindAllStringSubmatchIndex(name, -1) {
		start := m[0]
		if start > 0 {
			prev, cur := name[start-1], name[start]
			isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
			if isLetter(prev) && !(prev >= 'a' && prev <= 'z' && cur >= 'A' && cur <= 'Z') {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// stripRanks removes the rank spans from name.
func stripRanks(name string) string {
	spans := rankSpans(name)
	for i := len(spans) - 1; i >= 0; i-- {
		name = name[:spans[i][0]] + name[spans[i][1]:]
	}
	return name
}

// RankFromName returns the rank written in the file's base name, if any (and if it fits a rank, an
// int32: a load reports one that does not).
func RankFromName(path string) (int, bool) {
	digits, ok := rankDigitsInName(path)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	return int(n), err == nil
}

// rankDigitsInName returns the digits of the rank pattern in the file's base name, if any.
func rankDigitsInName(path string) (string, bool) {
	base := filepath.Base(path)
	spans := rankSpans(base)
	if len(spans) == 0 {
		return "", false
	}
	last := spans[len(spans)-1]
	for i := len(spans) - 1; i >= 0; i-- {
		if strings.EqualFold(base[spans[i][0]:spans[i][0]+4], "rank") {
			last = spans[i]
			break
		}
	}
	return base[last[2]:last[3]], true
}

// naturalLess orders file names as people number them: runs of digits compare by value (trace_2 before
// trace_10, where byte order puts trace_10 first), everything else byte by byte. File order numbers the
// ranks of files that carry no rank themselves (--rank-from index, or auto's last resort), so byte order
// gave the eleventh file rank 2. Equal values with different zero padding (07, 7) fall back to byte order.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			na := strings.TrimLeft(a[i:ei], "0")
			nb := strings.TrimLeft(b[j:ej], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	if i < len(a) || j < len(b) {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// unreadCompression names the compression of a JSON file (lower-case name) that a directory load does
// not read: "" for any other file.
func unreadCompression(lower string) string {
	for _, c := range []struct{ suffix, name string }{
		{".json.zst", "zstd"}, {".json.zstd", "zstd"}, {".json.bz2", "bzip2"}, {".json.xz", "xz"},
		{".json.lz4", "lz4"}, {".json.zip", "zip"}, {".json.7z", "7z"},
	} {
		if strings.HasSuffix(lower, c.suffix) {
			return c.name
		}
	}
	return ""
}

// fileKind names the kind of a file that is neither a regular file nor a directory.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}
