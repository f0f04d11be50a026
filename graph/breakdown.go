package graph

import (
	"regexp"
	"strings"
)

// Bound-by categories (HTA's BoundType values).
const (
	BoundKernelKernel  = "gpu_kernel_kernel_overhead"
	BoundLaunch        = "gpu_kernel_launch_overhead"
	BoundDataLoading   = "data_loading"
	BoundCPU           = "cpu_bound"
	BoundGPUCompute    = "gpu_compute_bound"
	BoundCommunication = "gpu_communication_bound"
)

var commKernel = regexp.MustCompile(`^nccl|^hip|^hccl|ncclKernel`)
var memoryKernel = regexp.MustCompile(`^(hip)?Memcpy|^(hip)?Memset|^dma`)

// ShortName is HTA's shortened event name: argument lists, template arguments and "->" removed,
// then the last space-separated word; memory kernels keep their name.
func ShortName(name string) string {
	if memoryKernel.MatchString(name) || (!strings.Contains(name, "<") && !strings.Contains(name, "(")) {
		return name
	}
	s := strings.ReplaceAll(name, "->", "")
	stack := make([]rune, 0, len(s))
	for _, c := range s {
		switch c {
		case '>', ')':
			open := '<'
			if c == ')' {
				open = '('
			}
			for len(stack) > 0 && stack[len(stack)-1] != open {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		default:
			stack = append(stack, c)
		}
	}
	out := string(stack)
	if i := strings.LastIndexByte(out, ' '); i >= 0 {
		out = out[i+1:]
	}
	return out
}

// BoundRules is what bound_by reads besides the graph: the data-load patterns for CPU events and, for GPU
// events, which names are communication.
type BoundRules struct {
	DataLoad []*regexp.Regexp // searched in HTA's shortened name, as HTA does
	// DataLoadNames (default mode): substrings looked for in the full name as well, as data_load_events
	// picks its nodes; the shortened name drops "(…)", so 'enumerate(DataLoader)' made the DataLoader's
	// own nodes cpu_bound.
	DataLoadNames []string
	// Comm is the set of GPU event names whose kernel type is COMMUNICATION (kernel_classes, so that rows a
	// user adds count here as in every analysis); nil: HTA's rule 1 on the shortened name (compat mode).
	Comm map[string]bool
}

// gpuBound is bound_by of GPU work named name (the full name).
func (r BoundRules) gpuBound(name string) string {
	comm := false
	if r.Comm != nil {
		comm = r.Comm[name]
	} else {
		comm = commKernel.MatchString(ShortName(name))
	}
	if comm {
		return BoundCommunication
	}
	return BoundGPUCompute
}

// nameBound is the bucket of time spent in an event named name: CPU work is data_loading when a
// data-load pattern finds the shortened name, else cpu_bound; GPU work is communication or compute.
func (r BoundRules) nameBound(name string, cpu bool) string {
	if !cpu {
		return r.gpuBound(name)
	}
	for _, p := range r.DataLoadNames {
		if strings.Contains(name, p) {
			return BoundDataLoading
		}
	}
	s := ShortName(name)
	for _, re := range r.DataLoad {
		if re.MatchString(s) {
			return BoundDataLoading
		}
	}
	return BoundCPU
}

// boundByEdge returns the label an edge gets from its type alone (r < 0), or else the event whose name
// decides it.
func (g *CPGraph) boundByEdge(e int32) (label string, r int32) {
	switch g.G.Type[e] {
	case EdgeKernelKernel:
		return BoundKernelKernel, -1
	case EdgeLaunchDelay:
		return BoundLaunch, -1
	case EdgeDependency, EdgeSyncDependency, EdgeCrossThread:
		return "", -1
	}
	return "", g.Attr[e]
}

// Bounder classifies critical-path edges as HTA's breakdown does, with the classification of each
// attributed event's name memoised (the shortened-name regexps cost ~2 µs per edge otherwise). One per
// call: not safe for concurrent use.
type Bounder struct {
	g     *CPGraph
	names nameBounds
}

// nameBounds memoises BoundRules.nameBound per name symbol and side (CPU or GPU).
type nameBounds struct {
	rules BoundRules
	syms  []string
	memo  []int8 // per symbol*2 + (CPU ? 1 : 0): index into boundNames + 1, 0 = unknown
}

var boundNames = [...]string{BoundDataLoading, BoundCPU, BoundCommunication, BoundGPUCompute}

func newNameBounds(rules BoundRules, syms []string) nameBounds {
	return nameBounds{rules: rules, syms: syms, memo: make([]int8, 2*len(syms))}
}

func (m *nameBounds) of(sym int32, cpu bool) string {
	k := 2 * int(sym)
	if cpu {
		k++
	}
	if v := m.memo[k]; v > 0 {
		return boundNames[v-1]
	}
	s := m.rules.nameBound(m.syms[sym], cpu)
	for i, n := range boundNames {
		if n == s {
			m.memo[k] = int8(i + 1)
		}
	}
	return s
}

// NewBounder returns a Bounder for g and the given rules.
func (g *CPGraph) NewBounder(rules BoundRules) *Bounder {
	return &Bounder{g: g, names: newNameBounds(rules, g.F.Syms)}
}

// BoundBy classifies edge e: by type, else by its attributed event (CPU: data_loading when a data-load
// pattern finds the shortened name, else cpu_bound; GPU: communication when the name is a collective
// (rules.Comm), else compute). "" for dependency and sync edges and for edges without an attributed
// event.
func (b *Bounder) BoundBy(e int32) string {
	g := b.g
	label, r := g.boundByEdge(e)
	if r < 0 {
		return label
	}
	return b.names.of(g.F.Name[r], g.F.Stream[r] < 0)
}

// DataLoadRegexps compiles data-load patterns as regular expressions (HTA's bound_by uses re.search),
// falling back to a literal match for a pattern that does not compile.
func DataLoadRegexps(patterns []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			re = regexp.MustCompile(regexp.QuoteMeta(p))
		}
		out = append(out, re)
	}
	return out
}
