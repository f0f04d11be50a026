-- @title Communication–computation overlap per rank
-- @about Share of each rank's communication time during which computation also runs (higher is better);
-- @about ranks without communication have no bar.
-- @chart bar
-- @x label, rank
-- @y comp_comm_overlap_pct (%)
-- @xlabel label · rank
-- @ylabel overlapped communication (%)
SELECT label, rank, comp_comm_overlap_pct
FROM comm_comp_overlap
ORDER BY label, rank;
