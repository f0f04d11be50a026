// Package engine opens the DuckDB database, discovers trace files, stream-parses Kineto / Chrome
// trace JSON and bulk-loads it into the raw tables, then installs the schema and views of package
// queries. It opens trace files through internal/traceio, the one place they are opened and
// decompressed, which the exports of package sqlfuncs (that rewrite a loaded trace file) read through too.
package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// DB is an open tracesql database: DuckDB with the tracesql schema and views installed.
type DB struct {
	SQL *sql.DB
	// funcs is the Go table functions' pool of connections to the same DuckDB instance. Their queries
	// (a compat frame's, on a goroutine) ran on SQL's pool and could hand their connection back after
	// the session's: its next statement then ran on a connection without its SET VARIABLE and TEMP
	// tables (review r77 #1: compat mode silently lost in 6 of 10 runs).
	funcs *sql.DB
	Path  string // "" for in-memory
	// ReadOnly: opened with OpenReadOnly; nothing can be loaded or changed, and other processes may read
	// the file at the same time.
	ReadOnly bool

	loadMu *sync.Mutex // serialises trace_id allocation and the insert transaction (shared by the opens of a file)
	// catalog is DuckDB's name of this database ("memory", or the file's), which ATTACH or USE by a
	// user does not change: catalog queries keep to it.
	catalog string

	shared *sharedFile // the file's entry in openFiles; nil for an in-memory database
	closed bool        // this handle was closed (under openFiles' lock)
	// opened is the file DuckDB opened (and locked), stat'ed once the open succeeded: Discard removes
	// the path only while it still names that file.
	opened os.FileInfo
	stored *storedState // shared by the handles of one file, as the DuckDB instance is (stored.go)
}

// sharedFile counts the open handles of one database file in this process.
type sharedFile struct {
	key     string
	handles int
	first   *DB // the handle the others copy
}

// openFiles holds the database files open in this process. duckdb-go opens one DuckDB instance per file
// and process (its instance cache), so a second open of a file gets the first's instance: registering
// tracesql's functions on it again raced with the first open's (two concurrent read-only opens of one file
// failed 6 times in 20 with "could not create scalar UDF"), and would have bound them to the second DB's
// connection pool. A second open shares the first's DB instead, until the last Close.
var openFiles = struct {
	sync.Mutex
	m map[string]*sharedFile
}{m: map[string]*sharedFile{}}

// Open opens (creating if needed) the database at path, or an in-memory one for "", and installs the
// schema and views. A database written by another tracesql version gets the current definitions
// (and its tables are migrated); one written by this version is used as it is.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, false)
}

// NotOpenedError is an Open failure before DuckDB opened the file: nothing of this process is in
// it, so a file that appeared at that path meanwhile is another process's (one that holds its lock),
// not a half-made database of this one to remove.
type NotOpenedError struct{ Err error }

// Error leaves out database/sql's "could not connect to database" prefix: the message already says
// which database could not be opened.
func (e *NotOpenedError) Error() string {
	return strings.TrimPrefix(e.Err.Error(), "database/sql/driver: could not connect to database: ")
}
func (e *NotOpenedError) Unwrap() error { return e.Err }

// ErrReadOnly is the error of a load or other change asked of a database opened with OpenReadOnly.
var ErrReadOnly = errors.New("the database is open read-only (--readonly)")

// ErrTransactionOpen is the error of a load, unload, import or report asked for inside the user's
// BEGIN … COMMIT: each runs in a transaction of its own, DuckDB does not nest them, and the refused BEGIN
// would abort the user's transaction (its work lost at the ROLLBACK that follows).
var ErrTransactionOpen = errors.New("a transaction is open (BEGIN): COMMIT or ROLLBACK it first")

// TransactionOpen reports whether conn is inside an explicit transaction. In auto-commit mode each
// statement runs in a transaction of its own, so two reads of txid_current() differ; inside BEGIN … they
// are equal. An aborted transaction answers every query with an error that says so.
func TransactionOpen(ctx context.Context, conn *sql.Conn) (bool, error) {
	var a, b int64
	for _, id := range []*int64{&a, &b} {
		if err := conn.QueryRowContext(ctx, `SELECT txid_current()`).Scan(id); err != nil {
			if strings.Contains(err.Error(), "transaction is aborted") {
				return true, nil
			}
			return false, err
		}
	}
	return a == b, nil
}

// connOutsideTransaction takes a connection of the pool for a change that runs in its own transaction:
// the session's statements run on the pool too, and the connection it hands out is the one a user's
// BEGIN left open.
func (db *DB) connOutsideTransaction(ctx context.Context) (*sql.Conn, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	open, err := TransactionOpen(ctx, conn)
	if err == nil && open {
		err = ErrTransactionOpen
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// Catalog is DuckDB's name of this database ("memory", or the file's stem): the catalog that holds
// tracesql's tables and views whatever database a user's USE made the default.
func (db *DB) Catalog() string { return db.catalog }

// CheckNoTransaction is ErrTransactionOpen when the connection the pool hands out next (the session's)
// is inside the user's transaction, for a change that is refused there before it starts work.
func (db *DB) CheckNoTransaction(ctx context.Context) error {
	conn, err := db.connOutsideTransaction(ctx)
	if err != nil {
		return err
	}
	return conn.Close()
}

// OpenReadOnly opens the existing database file at path for reading only: any number of processes may
// read one file at the same time this way, where DuckDB lets one process open it for writing and no one
// else. Nothing is installed, so the file must have been written (or last opened for writing) by this
// version of tracesql.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("open read-only: a database file is needed (--db FILE)")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database %s read-only: %w", path, &NotOpenedError{err})
	}
	return open(ctx, path, true)
}

func open(ctx context.Context, path string, readOnly bool) (*DB, error) {
	if path == "" {
		return openInstance(ctx, path, readOnly)
	}
	// DuckDB opens a JSON, CSV or Parquet file as a database of one view, which tracesql then refuses as
	// someone else's file: name the usual slip (a trace given to --db) instead.
	lower := strings.ToLower(path)
	for _, ext := range []string{".json", ".json.gz", ".gz", ".csv", ".tsv", ".parquet"} {
		if strings.HasSuffix(lower, ext) {
			return nil, fmt.Errorf("open database %s: a %s file is a trace or data file, not a database (traces are loaded as arguments; --db names the .duckdb file tracesql keeps)", path, ext)
		}
	}
	if err := checkDatabaseFile(path); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, &NotOpenedError{err})
	}
	key, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	openFiles.Lock()
	defer openFiles.Unlock()
	if sf := openFiles.m[key]; sf != nil {
		if sf.first.ReadOnly != readOnly {
			return nil, fmt.Errorf("open database %s: already open in this process %s", path,
				map[bool]string{true: "read-only", false: "for writing"}[sf.first.ReadOnly])
		}
		// A handle of its own, so that closing it twice cannot close another's.
		h := *sf.first
		h.closed = false
		sf.handles++
		return &h, nil
	}
	db, err := openInstance(ctx, path, readOnly)
	if err != nil {
		if !readOnly && (strings.Contains(err.Error(), "Permission denied") || strings.Contains(err.Error(), "Operation not permitted") ||
			strings.Contains(err.Error(), "Read-only file system")) {
			err = fmt.Errorf("%w (a file you may only read opens with --readonly)", err)
		}
		return nil, err
	}
	if !readOnly {
		// DuckDB holds its lock on this file now: no other process can have made another at the path
		// since, short of removing it by name.
		if db.opened, err = os.Stat(path); err != nil {
			db.closePools()
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
	}
	db.shared = &sharedFile{key: key, handles: 1, first: db}
	openFiles.m[key] = db.shared
	return db, nil
}

func openInstance(ctx context.Context, path string, readOnly bool) (*DB, error) {
	dsn := path
	q := url.Values{}
	if readOnly {
		q.Set("access_mode", "READ_ONLY")
	}
	q.Set("threads", fmt.Sprint(runtime.NumCPU()))
	for k, v := range memorySettings(path, readOnly) { // load.go: spill to disk rather than run out of memory
		q.Set(k, v)
	}
	if dsn != "" {
		dsn += "?" + q.Encode()
	} else {
		dsn = "?" + q.Encode()
	}
	connector, err := duckdb.NewConnector(dsn, nil)
	if v := strings.TrimSpace(os.Getenv(MemoryLimitEnv)); err == nil && strings.HasPrefix(v, "-") {
		// DuckDB takes a negative size for "its default" (80 % of RAM, more than tracesql's own).
		err = errors.New("memory_limit: a size must be positive")
	}
	if err != nil {
		if v := os.Getenv(MemoryLimitEnv); v != "" && strings.Contains(err.Error(), "memory_limit") {
			err = fmt.Errorf("%s=%q is not a memory size (e.g. 4GB, 512MiB or 60%%): %w", MemoryLimitEnv, v, err)
		}
		return nil, fmt.Errorf("open database %s: %w", displayPath(path), &NotOpenedError{err})
	}
	db := &DB{SQL: sql.OpenDB(connector), funcs: sql.OpenDB(instanceConnector{connector}), Path: path, ReadOnly: readOnly,
		loadMu: &sync.Mutex{}, stored: &storedState{}}
	// Table functions query on a second connection while the first runs (stack.md §1.4): never cap at 1.
	db.SQL.SetMaxIdleConns(4)
	db.funcs.SetMaxIdleConns(4)
	// The catalog first: install's ownership check reads the catalog by its name.
	if err := db.SQL.QueryRowContext(ctx, `SELECT current_database()`).Scan(&db.catalog); err != nil {
		db.closePools()
		return nil, fmt.Errorf("open database %s: %w", displayPath(path), err)
	}
	if err := db.install(ctx); err != nil {
		db.closePools()
		return nil, fmt.Errorf("open database %s: %w", displayPath(path), err)
	}
	return db, nil
}

// checkDatabaseFile refuses, before DuckDB sees them, a path DuckDB cannot be given (its connection
// string ends the path at a '?') and another engine's database: DuckDB opens a SQLite file through its
// sqlite extension, which it tried to download.
func checkDatabaseFile(path string) error {
	if strings.Contains(path, "?") {
		return errors.New("a '?' in a database path cannot be passed to DuckDB (it starts the connection's options): rename the file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // a new file, or one DuckDB explains
	}
	defer f.Close()
	head := make([]byte, 16)
	if n, _ := io.ReadFull(f, head); n == len(head) && string(head) == "SQLite format 3\x00" {
		return errors.New("a SQLite database, not a DuckDB file (--db names the .duckdb file tracesql keeps)")
	}
	return nil
}

// instanceConnector connects to the DuckDB instance of a connector another pool owns: it has no Close,
// so closing its pool leaves the instance to the owner's.
type instanceConnector struct{ driver.Connector }

// closePools closes the table functions' pool, then the session's, which closes the instance.
func (db *DB) closePools() error {
	db.funcs.Close()
	return db.SQL.Close()
}

func displayPath(p string) string {
	if p == "" {
		return "(in-memory)"
	}
	return p
}

func (db *DB) install(ctx context.Context) error {
	// Functions first: the macros in queries wrap them.
	if err := sqlfuncs.Register(ctx, sqlfuncs.Env{DB: db.funcs, StoredFresh: db.stored.fresh.Load}); err != nil {
		return fmt.Errorf("install functions: %w", err)
	}
	sum := installHash()
	if db.Path != "" {
		// A file written by this very tracesql already holds every table, view and macro: re-creating
		// them costs most of a re-open (hundreds of statements, each logged and checkpointed).
		var stored string
		err := db.SQL.QueryRowContext(ctx, `SELECT hash FROM _tracesql_install`).Scan(&stored)
		if err == nil && stored == sum {
			return nil
		}
		if db.ReadOnly {
			if err != nil {
				// Someone else's database gets the same refusal as without --readonly; only a file
				// that may be tracesql's (empty, or of a version before the marker) is worth opening
				// once for writing.
				if err := db.checkOwnership(ctx); err != nil {
					return err
				}
				return errors.New("not written by tracesql (no tracesql schema): open it once without --readonly")
			}
			return errors.New("written by another version of tracesql: open it once without --readonly to bring its views up to date")
		}
		// The marker of any tracesql version makes the file ours. Without one, look before the first
		// statement that could change the file: someone else's DuckDB file must come out of a refused
		// open exactly as it went in.
		if err != nil {
			if err := db.checkOwnership(ctx); err != nil {
				return err
			}
		}
	}
	// One transaction: each statement committed on its own wrote and synced the write-ahead log, ~180
	// syncs that made creating a database file take 1.4 s (0.35 s of it CPU); and an install that fails
	// half-way now leaves the file as it was.
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("install schema: %w", err)
	}
	defer tx.Rollback() // after Commit, a no-op
	var traces int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'traces'`).Scan(&traces); err != nil {
		return fmt.Errorf("install schema: %w", err)
	}
	for _, stmts := range [][]string{queries.Schema(), {migrateMarker}, queries.Views()} {
		for _, s := range stmts {
			if s == migrateMarker {
				if err := migrate(ctx, tx); err != nil {
					return fmt.Errorf("migrate: %w", err)
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("install schema: %s%w", installTarget(s), err)
			}
		}
	}
	if traces > 0 {
		usable, err := rulesUsable(ctx, tx)
		if err != nil {
			return fmt.Errorf("install schema: %w", err)
		}
		for _, s := range frameInserts(0, math.MaxInt64, usable) {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("build the analysis frame: %w", RuleError(ctx, db.SQL, err))
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE OR REPLACE TABLE _tracesql_install AS SELECT ?::VARCHAR AS hash`, sum); err != nil {
		return fmt.Errorf("install schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("install schema: commit: %w", err)
	}
	return nil
}

// installTarget names what an install statement creates, "view kernels: ", for its error: DuckDB's own
// message often names only a column or a function inside it.
func installTarget(stmt string) string {
	target := ""
	queries.DDLTargets(stmt, func(verb, kind, name, _ string) {
		if target == "" && verb == "create" {
			target = kind + " " + name + ": "
		}
	})
	return target
}

// migrateMarker separates the tables from the views in install order: migrate runs there.
const migrateMarker = "-- migrate"

// installHash identifies the schema and views this binary installs.
func installHash() string {
	h := sha256.New()
	for _, stmts := range [][]string{queries.Schema(), queries.Views()} {
		for _, s := range stmts {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Discard removes the database file and its WAL, then closes the database; it is for a file this
// process created and put nothing in that is worth keeping (HoldsNothing). The file is removed while
// DuckDB still holds its lock: removing it by name after Close (as before) deleted whatever another
// process had made at the path in between, another tracesql's loaded traces included. Nothing is
// removed, and the database stays open (for Close), when the path no longer names the file this
// handle opened, when a checkpoint cannot empty the WAL, or when another handle of this process has
// the file open.
func (db *DB) Discard(ctx context.Context) error {
	if err := db.removeFile(ctx); err != nil {
		return fmt.Errorf("discard database %s: %w", displayPath(db.Path), err)
	}
	if err := db.closePools(); err != nil {
		return fmt.Errorf("discard database %s: close: %w", db.Path, err)
	}
	return nil
}

// removeFile is Discard but for closing DuckDB: it removes the open database's file, its WAL and its
// (empty) spill directory, and marks the handle closed, so that Close does nothing more and no open of
// the path in this process joins it. On an error nothing is removed and the handle is as it was.
func (db *DB) removeFile(ctx context.Context) error {
	if db.shared == nil || db.ReadOnly {
		return errors.New("not a file open for writing")
	}
	openFiles.Lock()
	defer openFiles.Unlock()
	if db.closed {
		return errors.New("already closed")
	}
	if db.shared.handles > 1 {
		return fmt.Errorf("still open in %d other handles of this process", db.shared.handles-1)
	}
	// DuckDB's lock keeps other processes out of this file, not off its name: the path may name another
	// file by now (moved aside and made anew), which is not this handle's to remove.
	cur, err := os.Lstat(db.Path)
	if err != nil {
		return err
	}
	if db.opened == nil || !cur.Mode().IsRegular() || !os.SameFile(cur, db.opened) {
		return errors.New("the path no longer names the file this process opened")
	}
	// The checkpoint writes the WAL into the file and deletes it. DuckDB's Close then has nothing to
	// write, so it touches neither name again: with a WAL left, its closing checkpoint would delete
	// the .wal by name, by then the WAL of a database another process opened at the path.
	if _, err := db.SQL.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	wal := db.Path + ".wal"
	if fi, err := os.Lstat(wal); err == nil && fi.Size() > 0 {
		return errors.New("its write-ahead log is not empty after a checkpoint")
	}
	if _, err := os.Lstat(wal + ".checkpoint"); err == nil {
		return errors.New("a checkpoint of its write-ahead log is under way")
	}
	if err := os.Remove(db.Path); err != nil {
		return err
	}
	// The file is gone: what is left is tidying, and a failure there loses nothing.
	os.Remove(wal)
	os.Remove(memorySettings(db.Path, db.ReadOnly)["temp_directory"]) // (Close's reason; only while empty)
	db.closed = true
	db.shared.handles--
	delete(openFiles.m, db.shared.key)
	return nil
}

// Close checkpoints (so the .duckdb file is complete without its WAL) and closes the database.
func (db *DB) Close() error {
	if db.shared != nil {
		openFiles.Lock()
		defer openFiles.Unlock()
		if db.closed {
			return nil
		}
		db.closed = true
		if db.shared.handles--; db.shared.handles > 0 {
			return nil
		}
		delete(openFiles.m, db.shared.key)
	}
	if db.Path != "" {
		db.SQL.Exec("CHECKPOINT")
	}
	err := db.closePools()
	os.Remove(memorySettings(db.Path, db.ReadOnly)["temp_directory"]) // DuckDB leaves its spill directory behind, empty
	return err
}

// migrate brings a database written by another tracesql version to the current tables before the views
// are installed: events gets link_idx and flows args if they have none, and the stored frame is dropped, to be rebuilt
// after the views with the current definition (rebuildFrame). The compat frame was a table once.
func migrate(ctx context.Context, tx *sql.Tx) error {
	// The stored frame is rebuilt; the compat frame is a view now. Whatever they were, they go.
	for _, t := range rebuiltFrames {
		var kind string
		err := tx.QueryRowContext(ctx, `SELECT 'TABLE' FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = $1
			UNION ALL SELECT 'VIEW' FROM duckdb_views() WHERE schema_name = 'main' AND view_name = $1`, t).Scan(&kind)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DROP "+kind+" "+t+" CASCADE"); err != nil {
			return fmt.Errorf("drop old %s: %w", t, err)
		}
	}
	// Loads before 2026-11-22 left the views of their Arrow scans (_tracesql_load_N) in the database.
	// (read in a function of its own, so that the rows are closed before the drops run)
	stale, err := func() ([]string, error) {
		rows, err := tx.QueryContext(ctx, `SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND view_name LIKE '\_tracesql\_load\_%' ESCAPE '\'`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var stale []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			stale = append(stale, v)
		}
		return stale, rows.Err()
	}()
	if err != nil {
		return fmt.Errorf("find stale load views: %w", err)
	}
	for _, v := range stale {
		if _, err := tx.ExecContext(ctx, "DROP VIEW IF EXISTS "+v); err != nil {
			return fmt.Errorf("drop stale view %s: %w", v, err)
		}
	}
	for _, c := range migratedColumns {
		if has, err := hasTableColumn(ctx, tx, c.table, c.column); err != nil {
			return err
		} else if has {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.column+" "+c.typ); err != nil {
			return fmt.Errorf("add %s.%s: %w", c.table, c.column, err)
		}
		if c.table == "events" && c.column == "link_idx" {
			if _, err := tx.ExecContext(ctx, fillLinksSQL("true")); err != nil {
				return fmt.Errorf("fill events.link_idx: %w", err)
			}
		}
	}
	return nil
}

// rebuiltFrames are the stored analysis frames (and the compat frame, a table once) that migrate drops
// whatever kind of object they are, to be installed afresh.
var rebuiltFrames = []string{"_hta_frame_default", "_gpu_frame_default", "_trace_summary", "_type_segments", "_compat_fixups", "_queue_summary", "_idle_summary", "_memory_bw_stats", "_hta_frame_compat"}

// migratedColumns are the columns tracesql added to its raw tables after their first version, which
// migrate adds to a file written before them. (Columns are only ever added: checkOwnership takes a
// table with these missing, and nothing else different, for an older tracesql's.)
var migratedColumns = []struct{ table, column, typ string }{
	{"flows", "args", "JSON"},               // before 2026-11-23 flows kept no args: theirs stay NULL
	{"traces", "loader_version", "INTEGER"}, // before 2026-11-24: NULL is version 1 (StaleTraces)
	{"events", "link_idx", "BIGINT"},        // before 2026-11-21: filled in SQL as the loader fills it
}

// StaleTraces returns how many loaded trace files an older loader derived (LoaderVersion), and the
// path and label of the first: their derived columns differ from what a load gives now, until they
// are reloaded with LoadOptions.Replace (into the same label).
func (db *DB) StaleTraces(ctx context.Context) (n int, first, label string, err error) {
	return db.tracesWhere(ctx, `coalesce(loader_version, 1) < ?`)
}

// NewerTraces is StaleTraces for the files a newer tracesql loaded (a loader version above this one's):
// their derived columns follow rules this binary does not know, and its views may not read them right.
func (db *DB) NewerTraces(ctx context.Context) (n int, first, label string, err error) {
	return db.tracesWhere(ctx, `loader_version > ?`)
}

// tracesWhere counts the traces rows matching cond (a predicate with one ? for LoaderVersion), with the
// path and label of the first by (label, path).
func (db *DB) tracesWhere(ctx context.Context, cond string) (n int, first, label string, err error) {
	err = db.SQL.QueryRowContext(ctx, `SELECT count(*), coalesce(arg_min(path, (label, path)), ''), coalesce(min(label), '')
		FROM traces WHERE `+cond, LoaderVersion).Scan(&n, &first, &label)
	if err != nil {
		return 0, "", "", fmt.Errorf("loader versions: %w", err)
	}
	return n, first, label, nil
}

// hasTableColumn reports whether table (in main) has the column.
func hasTableColumn(ctx context.Context, q rowsQuerier, table, column string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_columns()
		WHERE schema_name = 'main' AND table_name = $1 AND column_name = $2`, table, column).Scan(&n)
	return n > 0, err
}

// fillLinksSQL sets events.link_idx of the rows matching where (a predicate on events) in SQL, for data
// that did not come through the loader, which computes it in Go (derive.go, links): the same pairing.
func fillLinksSQL(where string) string {
	return `UPDATE events e SET link_idx = l.linked FROM (
	    WITH s AS (
	        SELECT trace_id, ev_idx, correlation,
	               (coalesce(stream, -1) >= 0 AND correlation >= 0) OR coalesce(name IN ('Event Sync', 'Context Sync'), false) AS gpu
	        FROM events
	        WHERE (` + where + `) AND dur IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace' AND correlation IS NOT NULL AND correlation <> -1
	    )
	    SELECT a.trace_id, a.ev_idx, max(b.ev_idx) AS linked
	    FROM s a JOIN s b ON a.trace_id = b.trace_id AND a.correlation = b.correlation AND a.gpu <> b.gpu
	    GROUP BY ALL
	) l WHERE e.trace_id = l.trace_id AND e.ev_idx = l.ev_idx`
}

// frameInserts store the default analysis frame (queries/views/10_hta_frame.sql) of the traces with
// first <= trace_id <= last: _hta_frame_default, then what is derived from it (derivedFrameInserts).
func frameInserts(first, last int64, rulesUsable bool) []string {
	return append([]string{baseFrameInsert(first, last)}, derivedFrameInserts(first, last, rulesUsable)...)
}

// rulesUsable reports whether every kernel_classes rule can apply (_kernel_classes_usable). When one cannot,
// derivedFrameInserts store only what the rules do not decide, so that a typo in a rule keeps no trace from
// loading and no database file from opening (after an upgrade the open rebuilds the frames, and a failing
// rebuild had left no way to reach the row); the analyses then name the row when queried.
func rulesUsable(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var ok bool
	if err := q.QueryRowContext(ctx, "SELECT _kernel_classes_usable()").Scan(&ok); err != nil {
		return false, fmt.Errorf("check kernel_classes: %w", err)
	}
	return ok, nil
}

func baseFrameInsert(first, last int64) string {
	return fmt.Sprintf(`INSERT INTO _hta_frame_default SELECT * FROM _hta_frame_source WHERE trace_id BETWEEN %d AND %d`, first, last)
}

// derivedFrameInserts store, from _hta_frame_default, its GPU rows with their derived columns, the
// per-trace results (_trace_summary, _type_segments, _queue_summary, _idle_summary, _memory_bw_stats) and what
// the compat frame needs (_compat_fixups).
// Without usable rules the traces' _trace_summary rows are stale (_trace_busy_source) and they have no
// _type_segments or _memory_bw_stats rows.
func derivedFrameInserts(first, last int64, rulesUsable bool) []string {
	inserts := []string{
		fmt.Sprintf(`INSERT INTO _gpu_frame_default SELECT * FROM _gpu_frame_source(%d, %d)`, first, last),
		fmt.Sprintf(`INSERT INTO _compat_fixups SELECT * FROM _compat_fixups_source(%d, %d)`, first, last),
		fmt.Sprintf(`INSERT INTO _queue_summary SELECT * FROM _queue_summary_source(%d, %d)`, first, last),
		fmt.Sprintf(`INSERT INTO _idle_summary SELECT * FROM _idle_summary_source(%d, %d)`, first, last),
	}
	if !rulesUsable {
		return append(inserts, fmt.Sprintf(`INSERT INTO _trace_summary SELECT * FROM _trace_busy_source(%d, %d)`, first, last))
	}
	// what kernel_classes decides: computed again for the traces whose _trace_summary.classes_fp is stale (stored.go)
	return append(inserts,
		fmt.Sprintf(`INSERT INTO _trace_summary SELECT * FROM _trace_summary_source(%d, %d)`, first, last),
		fmt.Sprintf(`INSERT INTO _type_segments SELECT * FROM _type_sweep(%d, %d, false)`, first, last),
		fmt.Sprintf(`INSERT INTO _memory_bw_stats SELECT * FROM _memory_bw_stats_source(%d, %d)`, first, last))
}

// frameTableName is the table a frameInserts statement fills (for the load timing report).
func frameTableName(stmt string) string {
	f := strings.Fields(stmt)
	if len(f) > 2 {
		return f[2]
	}
	return stmt
}
