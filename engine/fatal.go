package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// DuckDB stops using a database after a fatal error, typically a write that failed in a checkpoint
// (a full disk), and from then on answers every statement with one long message: "FATAL Error: Failed:
// database has been invalidated because of a previous fatal error. … Original error: "Failed to create
// checkpoint because of error: FATAL Error: … IO Error: Could not write file …: No space left on
// device"". What was committed before stays in the write-ahead log, which the next open replays.

// IsFatal reports whether err reads as DuckDB's fatal error, or its "database has been invalidated"
// that every later statement gets: by its message alone (DB.Fatal asks the database too).
func IsFatal(err error) bool {
	if err == nil {
		return false
	}
	var ce *CheckpointError
	if errors.As(err, &ce) {
		return IsFatal(ce.Err)
	}
	var fe *fatalError
	if errors.As(err, &fe) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database has been invalidated") || strings.Contains(msg, "FATAL Error")
}

// fatalCause is the innermost reason in DuckDB's nested fatal message: the text after its last
// "Error: ", without the closing quote of the "Original error".
func fatalCause(msg string) string {
	if i := strings.LastIndex(msg, "Error: "); i >= 0 {
		msg = msg[i+len("Error: "):]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg), `"`))
}

// FatalError returns err, when it is DuckDB's fatal error, as one line that names the database, the
// cause, and what is kept; other errors are returned as they are.
func FatalError(db *DB, err error) error {
	var ce *CheckpointError
	if !IsFatal(err) || db == nil || errors.As(err, &ce) { // (a CheckpointError says it all)
		return err
	}
	fe := &fatalError{path: db.Path, cause: fatalCause(err.Error()), err: err}
	var le *LoadError
	if errors.As(err, &le) {
		fe.file = le.Path
	}
	return fe
}

type fatalError struct {
	path, cause string
	file        string // the trace file whose load met the error ("" none)
	err         error
}

func (e *fatalError) Error() string {
	load := ""
	if e.file != "" {
		load = "load " + e.file + ": " // the file is named, as every failed file is (review r68 #2)
	}
	if e.path == "" {
		return fmt.Sprintf("%sthe in-memory database can no longer be used after a fatal error (%s): start tracesql again", load, e.cause)
	}
	return fmt.Sprintf("%sdatabase %s can no longer be used in this run after a fatal error (%s); %s: run tracesql again once the cause is fixed", load, e.path, e.cause, committedWhere(e.path))
}

// committedWhere says where a database's committed work is after a fatal error: in its write-ahead log,
// which the next open replays, or, when there is none (every commit checkpointed), in the file itself.
func committedWhere(path string) string {
	if _, err := os.Stat(path + ".wal"); err == nil {
		return fmt.Sprintf("what was committed is kept (its write-ahead log %s.wal is replayed on the next open)", path)
	}
	return "what was committed before is kept in it"
}

func (e *fatalError) Unwrap() error { return e.err }

// CheckpointError is a checkpoint that failed after the files of a Load had been committed: they are in
// the write-ahead log, and the failure is the database's, not any file's.
type CheckpointError struct {
	Path   string
	Loaded int // files committed by the Load
	Err    error
}

func (e *CheckpointError) Error() string {
	if e.Loaded == 0 {
		return fmt.Sprintf("checkpoint of %s failed (%s); no file was loaded, and %s: run tracesql again once the cause is fixed",
			e.Path, fatalCause(e.Err.Error()), committedWhere(e.Path))
	}
	return fmt.Sprintf("checkpoint of %s after the load failed (%s); the %d file(s) loaded are committed in its write-ahead log %s.wal, which the next open replays: run tracesql again once the cause is fixed",
		e.Path, fatalCause(e.Err.Error()), e.Loaded, e.Path)
}

func (e *CheckpointError) Unwrap() error { return e.Err }

// checkpointAfterLoad runs the checkpoint Load defers to its last file; loaded counts the files it
// committed, for the error. Only a fatal failure is one: the files are committed, and another (none
// is known) leaves the WAL for a later checkpoint, as DuckDB's own would.
func (db *DB) checkpointAfterLoad(loaded int) error {
	if _, err := db.SQL.Exec("CHECKPOINT"); err != nil && db.Fatal(err) {
		if db.Path == "" {
			return fmt.Errorf("checkpoint after the load: %w", err)
		}
		return &CheckpointError{Path: db.Path, Loaded: loaded, Err: err}
	}
	return nil
}

// Fatal reports whether err is DuckDB's fatal error and the database really is unusable: IsFatal reads
// the message, which a user's own error('FATAL Error …') can imitate; this one asks the database.
func (db *DB) Fatal(err error) bool {
	if db == nil || db.SQL == nil || !IsFatal(err) {
		return false
	}
	_, qerr := db.SQL.Exec("SELECT 1")
	return qerr != nil && IsFatal(qerr)
}
