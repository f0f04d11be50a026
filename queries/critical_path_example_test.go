package queries_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/internal/htaref"
)

// TestCriticalPathOwnersExample runs queries/examples/critical_path_owners.sql (the owners CSV join)
// on cuda_event_sync: the teams' shares add up to the whole path.
func TestCriticalPathOwnersExample(t *testing.T) {
	d := cpFindDir(t, "critical_path/cuda_event_sync")
	db := htaref.Open(t, d).SQL
	b, err := os.ReadFile(filepath.Join("examples", "critical_path_owners.sql"))
	if err != nil {
		t.Fatal(err)
	}
	// The example reads the CSV relative to the repository root; tests run in queries/.
	sqlText := strings.ReplaceAll(string(b), "'queries/examples/owners.csv'", "'examples/owners.csv'")
	stmts := strings.Split(sqlText, ";")
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), stmts[0]); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(t.Context(), stmts[1])
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var total float64
	teams := map[string]float64{}
	for rows.Next() {
		var team string
		var us, pct float64
		if err := rows.Scan(&team, &us, &pct); err != nil {
			t.Fatal(err)
		}
		teams[team] = us
		total += pct
	}
	if total < 99.9 || total > 100.1 || teams["pytorch-core"] <= 0 {
		t.Errorf("teams %v, pct sum %v", teams, total)
	}
	t.Logf("%v", teams)
}
