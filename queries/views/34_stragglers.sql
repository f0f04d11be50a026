-- Straggler detection (HTA get_potential_stragglers with its find_stragglers_with_late_start_comm_kernels metric).

-- @macro potential_stragglers(num_candidates := 2, profiler_steps := NULL, hta_compat := NULL)  One row per straggler
-- candidate of each trace set (label), most often flagged first: the ranks whose dominant communication kernel
-- starts latest. profiler_steps: a list of ProfilerStep numbers to look at (NULL or [] = all). hta_compat: true or false
-- overrides the session's hta_compat for this call (NULL = the session's). A trace set of one rank, or with no
-- communication kernel in the steps looked at, has no row (HTA raises an error there).
-- @column label          Trace set
-- @column rank           Candidate rank
-- @column flagged_steps  Steps in which the rank's kernel start was among the num_candidates latest
-- @column seq            Candidate order (0 = strongest)
--
-- Method (HTA's): mean step time T = (last end − first start of the selected steps' events) / #steps; communication
-- kernels on a stream > 0 in a selected step lasting >= 1% of T; the last of each (rank, stream, step, name); the
-- (stream, name) whose duration/T varies most across ranks (mean over steps of the sample std); per step, the ranks
-- whose (start − first start)/T is at least the num_candidates-th largest are flagged; ranks by flag count, then
-- (default mode) the later mean start past each step's threshold, then rank number; the first num_candidates.
-- Default mode: communication kernels as comm_kernels counts them (_comm_kernel: NCCL kernels by name, and every
-- kernel_type COMMUNICATION: ncclDevKernel, RCCL, … — HTA only knows names starting with ncclKernel, quirk §7.8), step 0 counts (HTA skips iteration 0),
-- the 1% floor holds for a (stream, step, name)'s longest kernel across ranks (HTA: for each rank's, which left out the
-- late rank, whose kernel waits for no one and is the shortest), a step counts only where more ranks than
-- num_candidates have the kernel or every rank that has it anywhere does (HTA flagged a rank alone in a step), and
-- ranks flagged equally often go latest first (HTA: by rank number up to 16 ranks, so with num_candidates := 3 the latest rank came
-- last, and in numpy's quicksort order above).
-- Compat mode (HTA 0.6.1): names starting with ncclKernel, steps > 0. Where HTA raises (no step selected, fewer
-- ranks than num_candidates) the result is empty / every rank is flagged.
CREATE OR REPLACE MACRO potential_stragglers(num_candidates := 2, profiler_steps := NULL, hta_compat := NULL) AS TABLE
WITH
k AS (SELECT greatest(_int_arg(num_candidates, 2, 'potential_stragglers: num_candidates'), 1) AS k),
steps AS (
    SELECT DISTINCT label, TRY_CAST(regexp_extract(name, '^ProfilerStep\s*#\s*(\d+)', 1) AS BIGINT) AS step
    FROM _hta_frame_mode(_hta_mode(hta_compat, 'potential_stragglers')) WHERE starts_with(name, 'ProfilerStep')
),
-- a listed step no trace has is an error: an empty result read as "no stragglers"
step_check AS (
    SELECT coalesce((SELECT error(format('potential_stragglers: profiler_steps: no trace has ProfilerStep#{} (steps loaded: {}{})', x,
                                         coalesce((SELECT string_agg(s::VARCHAR, ', ' ORDER BY s) FROM (SELECT DISTINCT step AS s FROM steps WHERE step IS NOT NULL)), 'none'),
                                         CASE WHEN _hta_mode(hta_compat, 'potential_stragglers') THEN '; compat mode drops each trace''s last ProfilerStep, as HTA' ELSE '' END))
                     FROM unnest(coalesce(_int_list_arg(profiler_steps, 'potential_stragglers: profiler_steps'), [])) u(x)
                     WHERE x NOT IN (SELECT step FROM steps WHERE step IS NOT NULL) LIMIT 1), true) AS ok
),
valid AS (
    SELECT label, step FROM steps, step_check
    WHERE step IS NOT NULL AND step_check.ok
      AND coalesce(list_contains(_int_list_arg(profiler_steps, 'potential_stragglers: profiler_steps'), step), true)
),
df AS (
    SELECT f.* FROM _ct_frame_pos_of(_hta_mode(hta_compat, 'potential_stragglers')) f JOIN valid v ON v.label = f.label AND v.step = f.iteration
),
span AS (
    SELECT label, min(ts) AS t_min, (max(ts + dur) - min(ts)) / count(DISTINCT iteration) AS mean_iter
    FROM df GROUP BY label
),
long_comm AS (
    SELECT d.label, d.rank, d.stream, d.iteration, d.name, d.ts, d.dur, d.frame_part, d.ev_idx
    FROM df d JOIN span s USING (label)
    LEFT JOIN _kernel_types_mode(_hta_mode(hta_compat, 'potential_stragglers')) kt ON kt.name = d.name
    WHERE d.stream > 0 AND (d.dur >= s.mean_iter * 0.01 OR NOT _hta_mode(hta_compat, 'potential_stragglers'))
      AND CASE WHEN _hta_mode(hta_compat, 'potential_stragglers') THEN d.iteration > 0 AND starts_with(d.name, 'ncclKernel')
               ELSE d.iteration >= 0 AND _comm_kernel(d.name, kt.kernel_type) END
),
last_comm AS (
    SELECT l.label, l.rank, l.stream, l.iteration, l.name,
           arg_max(l.ts, (l.frame_part, l.ev_idx)) AS ts, arg_max(l.dur, (l.frame_part, l.ev_idx)) AS dur
    FROM long_comm l GROUP BY ALL
),
-- default mode: the 1 % floor holds for the collective (its longest kernel across ranks), not for each rank's
-- kernel; the rank that arrives last waits for no one, so its kernel is the shortest, and it fell under the floor
metric AS (
    SELECT c.*, (c.ts - s.t_min) / s.mean_iter AS start_metric, c.dur / s.mean_iter AS duration
    FROM last_comm c JOIN span s USING (label)
    QUALIFY _hta_mode(hta_compat, 'potential_stragglers')
         OR max(c.dur) OVER (PARTITION BY c.label, c.stream, c.iteration, c.name) >= s.mean_iter * 0.01
),
spread AS (
    SELECT label, stream, name, avg(sd) AS mean_sd
    FROM (SELECT label, stream, iteration, name, stddev_samp(duration) AS sd FROM metric GROUP BY ALL)
    GROUP BY ALL
),
pick AS (
    SELECT label, stream, name FROM spread WHERE mean_sd IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY label ORDER BY mean_sd DESC, stream, name) = 1
),
cand AS (
    SELECT m.* FROM metric m JOIN pick p USING (label, stream, name)
),
-- default mode counts a step only where more ranks than num_candidates have the kernel, or every rank that has
-- it anywhere does: a rank alone in a step (profiling windows that do not line up) is late against no one
threshold AS (
    SELECT label, iteration,
           coalesce(list_sort(list(start_metric), 'DESC')[(SELECT k FROM k)], min(start_metric)) AS th,
           _hta_mode(hta_compat, 'potential_stragglers') OR count(*) > (SELECT k FROM k)
               OR count(*) = (SELECT count(DISTINCT rank) FROM cand a WHERE a.label = cand.label) AS counted
    FROM cand GROUP BY label, iteration
),
flags AS (
    SELECT c.label, c.rank, sum(CASE WHEN t.counted AND c.start_metric >= t.th THEN 1 ELSE 0 END)::BIGINT AS flagged_steps,
           -- per step, how far past that step's threshold: the metric itself grows with the step number
           avg(CASE WHEN t.counted THEN c.start_metric - t.th END) AS lateness
    FROM cand c JOIN threshold t USING (label, iteration)
    GROUP BY ALL
),
-- compat: HTA's Series(flag count, index rank ascending).sort_values(ascending=False), which pandas does as numpy's
-- quicksort of the reversed values, reversed back: ties above 16 ranks do not come in rank order, and the first
-- num_candidates are another set of ranks
hta_order AS (
    SELECT label, unnest(list_transform(perm, lambda p: ranks_rev[p + 1])) AS rank, unnest(range(n - 1, -1, -1)) AS seq
    FROM (SELECT label, _np_argsort(list(flagged_steps ORDER BY rank DESC)) AS perm,
                 list(rank ORDER BY rank DESC) AS ranks_rev, count(*) AS n
          FROM flags GROUP BY label)
)
SELECT label, rank, flagged_steps, seq FROM (
    SELECT f.*, CASE WHEN _hta_mode(hta_compat, 'potential_stragglers') THEN h.seq
                     ELSE row_number() OVER (PARTITION BY f.label ORDER BY f.flagged_steps DESC, f.lateness DESC, f.rank) - 1 END AS seq
    FROM flags f LEFT JOIN hta_order h USING (label, rank)
), (SELECT _arg_check(_int_arg(num_candidates, 2, 'potential_stragglers: num_candidates') >= 1, 'potential_stragglers: num_candidates', num_candidates, 'an integer >= 1') AS args_ok) args_check
WHERE seq < (SELECT k FROM k) AND args_check.args_ok
ORDER BY label, seq;
