package sqlfuncs

import (
	"fmt"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// cpTable is a result computed at bind time, held in typed columns; FillChunk only copies.
type cpTable struct {
	cols []*cpColumn
	n    int
	pos  int
}

type cpKind int

const (
	cpInt cpKind = iota
	cpFloat
	cpString
	cpBool
)

type cpColumn struct {
	name string
	kind cpKind
	i64  []int64
	f64  []float64
	str  []string
	b    []bool
	null []bool // nil when the column has no NULLs
}

func (t *cpTable) col(name string, kind cpKind) *cpColumn {
	c := &cpColumn{name: name, kind: kind}
	t.cols = append(t.cols, c)
	return c
}

func (c *cpColumn) setNull(row int) {
	if c.null == nil {
		c.null = make([]bool, row+1, cap(c.i64)+cap(c.f64)+cap(c.str)+cap(c.b)+row+1)
	}
	for len(c.null) <= row {
		c.null = append(c.null, false)
	}
	c.null[row] = true
}

// Appenders (a nullable value: pass ok=false for NULL).
func (c *cpColumn) addInt(v int64, ok bool) {
	if !ok {
		c.setNull(len(c.i64))
	}
	c.i64 = append(c.i64, v)
}
func (c *cpColumn) addFloat(v float64, ok bool) {
	if !ok {
		c.setNull(len(c.f64))
	}
	c.f64 = append(c.f64, v)
}
func (c *cpColumn) addString(v string, ok bool) {
	if !ok {
		c.setNull(len(c.str))
	}
	c.str = append(c.str, v)
}
func (c *cpColumn) addBool(v bool, ok bool) {
	if !ok {
		c.setNull(len(c.b))
	}
	c.b = append(c.b, v)
}

func (c *cpColumn) isNull(row int) bool { return c.null != nil && row < len(c.null) && c.null[row] }

func (c *cpColumn) typeInfo() duckdb.TypeInfo {
	t := map[cpKind]duckdb.Type{cpInt: duckdb.TYPE_BIGINT, cpFloat: duckdb.TYPE_DOUBLE,
		cpString: duckdb.TYPE_VARCHAR, cpBool: duckdb.TYPE_BOOLEAN}[c.kind]
	ti, err := duckdb.NewTypeInfo(t)
	if err != nil {
		panic(err) // primitive types cannot fail
	}
	return ti
}

func (t *cpTable) ColumnInfos() []duckdb.ColumnInfo {
	out := make([]duckdb.ColumnInfo, len(t.cols))
	for i, c := range t.cols {
		out[i] = duckdb.ColumnInfo{Name: c.name, T: c.typeInfo()}
	}
	return out
}

func (t *cpTable) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(t.n), Exact: true}
}

func (t *cpTable) Init() {}

func (t *cpTable) FillChunk(chunk duckdb.DataChunk) error {
	size := min(duckdb.GetDataChunkCapacity(), t.n-t.pos)
	for ci, c := range t.cols {
		for i := 0; i < size; i++ {
			r := t.pos + i
			var err error
			if c.isNull(r) {
				err = chunk.SetValue(ci, i, nil)
			} else {
				switch c.kind {
				case cpInt:
					err = duckdb.SetChunkValue(chunk, ci, i, c.i64[r])
				case cpFloat:
					err = duckdb.SetChunkValue(chunk, ci, i, c.f64[r])
				case cpString:
					err = duckdb.SetChunkValue(chunk, ci, i, c.str[r])
				case cpBool:
					err = duckdb.SetChunkValue(chunk, ci, i, c.b[r])
				}
			}
			if err != nil {
				return fmt.Errorf("column %s row %d: %w", c.name, r, err)
			}
		}
	}
	t.pos += size
	return chunk.SetSize(size)
}
