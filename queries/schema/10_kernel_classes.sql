-- @table kernel_classes  Kernel classification as data: the first row (lowest priority) whose pattern matches a
-- GPU event's name gives its kernel type. Every analysis reads it; insert rows to teach tracesql new kernels, e.g.
-- INSERT INTO kernel_classes VALUES (5, '^myCollective', 'COMMUNICATION', 'all').
-- @column priority     Lower wins (NULL: never applies); between rules of one priority, the first pattern in sort order
-- @column pattern      Regular expression searched in the name (RE2; anchor with ^ for a prefix); not NULL
-- @column kernel_type  COMMUNICATION, MEMORY, COMPUTATION or OTHER (anything else is an error naming the rule)
-- @column applies_to   all (or NULL); default (only outside compat mode); hta_compat (only when hta_compat is set)
CREATE TABLE IF NOT EXISTS kernel_classes (priority INTEGER, pattern VARCHAR, kernel_type VARCHAR, applies_to VARCHAR);

-- Seeded once: HTA 0.6.1's get_kernel_type rules (Python re.match, so anchored at the start), with its hip quirk
-- (any name starting with "hip", hipMemcpy included, is COMMUNICATION) kept for compat mode only, plus the
-- collective libraries HTA does not know (RCCL, HCCL, DeepEP, DeepSeek's EP kernels, ncclDevKernel).
INSERT INTO kernel_classes
SELECT * FROM (VALUES
    (10, '^nccl', 'COMMUNICATION', 'all'),
    (11, '^hip', 'COMMUNICATION', 'hta_compat'),
    (12, '^hccl', 'COMMUNICATION', 'all'),
    (13, 'ncclKernel', 'COMMUNICATION', 'all'),
    (14, 'ncclDevKernel', 'COMMUNICATION', 'default'),
    (15, 'rccl', 'COMMUNICATION', 'default'),
    (16, 'deep_ep', 'COMMUNICATION', 'default'),
    (17, 'dpsk::ep', 'COMMUNICATION', 'default'),
    (20, '^(hip)?Memcpy', 'MEMORY', 'all'),
    (21, '^(hip)?Memset', 'MEMORY', 'all'),
    (22, '^dma', 'MEMORY', 'all'),
    (30, '^nccl|Memcpy|Memset|dma|Sync|^Stream Wait Event|^cuda.*LaunchKernel|^runFunction|^hip|^job_exe|^packet|^pe_exe|^cpum_exe_subgraph|^hccl|^collective_subgraph_execution', 'OTHER', 'all'),
    (100, '', 'COMPUTATION', 'all')
) v(priority, pattern, kernel_type, applies_to)
WHERE NOT EXISTS (SELECT 1 FROM kernel_classes);
