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
	// lazy: the value of row r, computed only when FillChunk copies a projected column (a
	// million-row path costs nothing for count(*) or a query reading two columns). ok=false: NULL.
	lazyI func(r int) (int64, bool)
	lazyF func(r int) (float64, bool)
	lazyS func(r int) (string, bool)
}

func (c *cpColumn) isLazy() bool { return c.lazyI != nil || c.lazyF != nil || c.lazyS != nil }

// Lazy columns: values computed on demand.
func (t *cpTable) lazyInt(name string, v func(r int) (int64, bool)) {
	t.cols = append(t.cols, &cpColumn{name: name, kind: cpInt, lazyI: v})
}
func (t *cpTable) lazyFloat(name string, v func(r int) (float64, bool)) {
	t.cols = append(t.cols, &cpColumn{name: name, kind: cpFloat, lazyF: v})
}
func (t *cpTable) lazyString(name string, v func(r int) (string, bool)) {
	t.cols = append(t.cols, &cpColumn{name: name, kind: cpString, lazyS: v})
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

// projected reports whether column ci is in the chunk. duckdb-go silently ignores values set on a
// column the query does not read (projection pushdown), but builds an fmt error for every such
// value first, which made count(*) over a big table cost more than computing it. So: set row 0 (a
// safe value of the column's type), then read it back: reading an unprojected column is an error.
func (t *cpTable) projected(chunk duckdb.DataChunk, ci int) bool {
	var err error
	switch t.cols[ci].kind {
	case cpInt:
		err = duckdb.SetChunkValue(chunk, ci, 0, int64(0))
	case cpFloat:
		err = duckdb.SetChunkValue(chunk, ci, 0, float64(0))
	case cpString:
		err = duckdb.SetChunkValue(chunk, ci, 0, "")
	case cpBool:
		err = duckdb.SetChunkValue(chunk, ci, 0, false)
	}
	if err != nil {
		return true // let the fill report it
	}
	_, err = chunk.GetValue(ci, 0)
	return err == nil
}

func (t *cpTable) FillChunk(chunk duckdb.DataChunk) error {
	size := min(duckdb.GetDataChunkCapacity(), t.n-t.pos)
	for ci, c := range t.cols {
		if size > 0 && !t.projected(chunk, ci) {
			continue
		}
		if c.isLazy() {
			if err := c.fillLazy(chunk, ci, t.pos, size); err != nil {
				return err
			}
			continue
		}
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

func (c *cpColumn) fillLazy(chunk duckdb.DataChunk, ci, pos, size int) error {
	for i := 0; i < size; i++ {
		r := pos + i
		var err error
		ok := true
		switch {
		case c.lazyI != nil:
			var v int64
			if v, ok = c.lazyI(r); ok {
				err = duckdb.SetChunkValue(chunk, ci, i, v)
			}
		case c.lazyF != nil:
			var v float64
			if v, ok = c.lazyF(r); ok {
				err = duckdb.SetChunkValue(chunk, ci, i, v)
			}
		default:
			var v string
			if v, ok = c.lazyS(r); ok {
				err = duckdb.SetChunkValue(chunk, ci, i, v)
			}
		}
		if !ok {
			err = chunk.SetValue(ci, i, nil)
		}
		if err != nil {
			return fmt.Errorf("column %s row %d: %w", c.name, r, err)
		}
	}
	return nil
}
