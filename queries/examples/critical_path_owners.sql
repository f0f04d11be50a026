-- Who owns the critical path? Join the path's attributed events with a CSV of name patterns → teams.
-- Run from the repository root: tracesql TRACE -f queries/examples/critical_path_owners.sql
-- An event matching several patterns counts for the first (lowest row number) one, unmatched time is 'unowned'.
CREATE OR REPLACE TEMP TABLE owners AS
SELECT row_number() OVER () AS priority, * FROM read_csv('queries/examples/owners.csv', header = true);

SELECT coalesce(o.team, 'unowned') AS team, round(sum(cp.weight_us), 3) AS critical_us,
       round(100 * sum(cp.weight_us) / (SELECT sum(weight_us) FROM critical_path()), 2) AS critical_pct
FROM critical_path() cp
LEFT JOIN LATERAL (SELECT team FROM owners o WHERE cp.name LIKE o.pattern ORDER BY priority LIMIT 1) o ON true
GROUP BY ALL
ORDER BY critical_us DESC;
