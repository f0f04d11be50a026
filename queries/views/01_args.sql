-- The parameter checks of the analysis macros: a parameter of the wrong type or out of range is one error
-- naming the macro and the parameter, never a binder or cast error about an internal function, and NULL
-- takes the default. Installed first: macros can only use macros defined before them.

-- _int_list_arg(x, what) / _str_list_arg(x, what): a list parameter of an analysis macro (ranks, streams, steps;
-- allowlist patterns) as BIGINT[] / VARCHAR[], NULL as NULL; anything else (a bare 0, ['a'] for ranks, 'fwd' for
-- patterns) is an error naming the parameter (what) instead of a binder error about len() or list_contains(). Every
-- type binds (the cast goes through VARCHAR, or to_json), and for a constant argument DuckDB folds the whole
-- expression to the list. An empty integer list is NULL too ("all"), so that a filter is the one expression
-- coalesce(list_contains(list, v), true): every use of a macro parameter is bound again, 0.1-0.2 ms each. A NULL
-- element is an error: it matched nothing, so ranks := [NULL] was an empty result.
CREATE OR REPLACE MACRO _int_list_arg(x, what) AS
    CASE WHEN x IS NULL THEN NULL::BIGINT[]
         WHEN typeof(x) NOT IN ('TINYINT[]', 'SMALLINT[]', 'INTEGER[]', 'BIGINT[]', 'HUGEINT[]', 'UTINYINT[]',
                                'USMALLINT[]', 'UINTEGER[]', 'UBIGINT[]', 'UHUGEINT[]', '"NULL"[]')
             THEN error(format('{} must be a list of integers such as [0, 1], not {}', what, typeof(x)))
         WHEN list_count(x::VARCHAR::VARCHAR[]) < len(x::VARCHAR::VARCHAR[])
             THEN error(format('{} must not hold NULL: {}', what, x::VARCHAR))
         -- an element beyond BIGINT (a HUGEINT list) is NULL here, where the cast gave "Could not convert string
         -- '9223372036854775808' to INT64"
         WHEN list_count(TRY_CAST(x::VARCHAR AS BIGINT[])) < len(x::VARCHAR::VARCHAR[])
             THEN error(format('{} is out of range: {} (BIGINTs, at most 9223372036854775807 either way)', what, x::VARCHAR))
         ELSE nullif(x::VARCHAR::BIGINT[], []) END;

-- _ranks_loaded(ranks, streams, fn): one row: ranks and streams, the macro's parameters as _int_list_arg's lists
-- (an error for a list that is not one), and ranks_ok = true, or the error "fn: ranks: no trace with rank N is
-- loaded (ranks loaded: …)" when ranks names a rank no loaded trace has, else "fn: streams: no GPU work on stream
-- N in the loaded traces (streams: …)" for a stream (NULL streams: not checked): a typo gave an empty result
-- ("streams: none" when no trace has GPU work: the NULL list made the message, and so the check, NULL).
-- A macro that filters few rows filters with the lists of this row rather than its own _int_list_arg: each
-- mention of a parameter binds its expression again (0.1-0.2 ms for _int_list_arg), and the one-element list's
-- lambda here mentions each once (idle_time_breakdown on df_index_resolver bound 6 of them, ~1 ms of its 3.5).
-- The check's subqueries are planned only for a list (query()).
CREATE OR REPLACE MACRO _ranks_loaded(ranks, streams, fn) AS TABLE
SELECT * FROM query(list_transform(
    [[_int_list_arg(ranks, fn || ': ranks')::VARCHAR, _int_list_arg(streams, fn || ': streams')::VARCHAR, fn]],
    lambda p: CASE WHEN p[1] IS NULL AND p[2] IS NULL
                       THEN 'SELECT true AS ranks_ok, NULL::BIGINT[] AS ranks, NULL::BIGINT[] AS streams'
                   ELSE format(
    'SELECT coalesce((SELECT error(msg) FROM (
         SELECT msg FROM (
             SELECT 0 AS o, format(''{{}}: ranks: no trace with rank {{}} is loaded (ranks loaded: {{}})'', {0}, x,
                                   coalesce((SELECT string_agg(r::VARCHAR, '', '' ORDER BY r) FROM (SELECT DISTINCT rank AS r FROM traces)), ''none'')) AS msg
             FROM unnest({1}::BIGINT[]) u(x) WHERE x NOT IN (SELECT rank FROM traces)
             UNION ALL
             SELECT 1, format(''{{}}: streams: no GPU work on stream {{}} in the loaded traces (streams: {{}})'', {0}, x,
                              coalesce((SELECT string_agg(s::VARCHAR, '', '' ORDER BY s) FROM (SELECT DISTINCT stream AS s FROM _gpu_frame_default WHERE gpu_work)), ''none''))
             FROM unnest({2}::BIGINT[]) u(x) WHERE x NOT IN (SELECT stream FROM _gpu_frame_default WHERE gpu_work)
         ) ORDER BY o LIMIT 1)), true) AS ranks_ok, nullif({1}::BIGINT[], []) AS ranks, nullif({2}::BIGINT[], []) AS streams',
    '''' || replace(p[3], '''', '''''') || '''', coalesce(p[1], '[]'), coalesce(p[2], '[]')) END)[1]);

-- _arg_check(ok, what, v, rule): true, or the error "what must be rule, not v" when ok is false. A NULL argument
-- (ok NULL) passes: NULL means the default. Macros select it as a one-row FROM item (args_check), which DuckDB
-- runs even when the analysis has no rows; in a WHERE over the rows it ran only when there were some.
CREATE OR REPLACE MACRO _arg_check(ok, what, v, rule) AS
    CASE WHEN ok IS NOT DISTINCT FROM false THEN error(format('{} must be {}, not {}', what, rule, v::VARCHAR)) ELSE true END;

-- _quoted(v): v as SQL writes a string literal, for error messages ('' shows, and so do spaces around a name).
CREATE OR REPLACE MACRO _quoted(v) AS '''' || replace(v::VARCHAR, '''', '''''') || '''';

-- _num_check(ok, what, v, rule): _arg_check for a numeric parameter v, which must also be a finite number of a
-- numeric type: NaN passed "num_kernels >= 0 AND num_kernels = trunc(num_kernels)" (DuckDB orders NaN above every
-- number, and NaN = NaN), true became 1 and the string '0.5' a number. The macros read such a parameter as
-- TRY_CAST(v AS DOUBLE), in ok too, which binds whatever v's type (a list or a date is NULL there, and an error
-- here): used raw, [1] or a DATE gave a binder error about coalesce() or trunc() naming no parameter.
CREATE OR REPLACE MACRO _num_check(ok, what, v, rule) AS
    CASE WHEN v IS NOT NULL AND typeof(v) NOT IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT',
                                                  'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT', 'FLOAT', 'DOUBLE')
              AND NOT typeof(v) LIKE 'DECIMAL(%)'
             -- (a number in quotes read "must be between 0 and 1, not 0.5", as if its value were wrong)
             THEN error(CASE WHEN typeof(v) = 'VARCHAR' THEN format('{} must be {}, given as a number, not the text {}', what, rule, _quoted(v))
                             ELSE format('{} must be {}, not {} ({})', what, rule, v::VARCHAR, typeof(v)) END)
         ELSE _arg_check(ok AND isfinite(TRY_CAST(v AS DOUBLE)), what, v, rule) END;

-- _bool_check(v, what): true, or _bool_arg's error when v is neither NULL nor what DuckDB casts to a boolean from
-- its text ('yes', 't', 1; not 2, as _bool_arg). The macros read such a parameter as TRY_CAST(v AS BOOLEAN),
-- which binds whatever v's type: used raw, 1.5 gave a binder error about coalesce() and 2 was true.
CREATE OR REPLACE MACRO _bool_check(v, what) AS
    CASE WHEN v IS NOT NULL AND TRY_CAST(v::VARCHAR AS BOOLEAN) IS NULL
             THEN error(format('{} must be true or false, not {} ({})', what, v::VARCHAR, typeof(v)))
         ELSE true END;

-- _int_arg(x, dflt, what): x as a BIGINT (dflt when NULL; a whole 1.0 is 1), or the error "what must be an integer,
-- not x (type)": a cast rounded 0.7 to 1 and picked another rank without a word.
-- These three check and return one evaluation of x, through a one-element list's lambda: a macro parameter is an
-- expression that every mention evaluates again, so a volatile argument (random()) passed the NULL check with one
-- value and reached a Go table function as another, NULL, which aborts the process. (DuckDB may still evaluate
-- the whole argument more than once: nextval() in a table function's argument skips values.)
CREATE OR REPLACE MACRO _int_arg(x, dflt, what) AS list_transform([x], lambda v:
    CASE WHEN v IS NULL THEN dflt::BIGINT
         WHEN typeof(v) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER',
                            'UBIGINT', 'UHUGEINT')
              AND TRY_CAST(v::VARCHAR AS BIGINT) IS NOT NULL
             THEN v::VARCHAR::BIGINT
         WHEN typeof(v) IN ('HUGEINT', 'UBIGINT', 'UHUGEINT')
             THEN error(format('{} is out of range: {} (a BIGINT, at most 9223372036854775807 either way)', what, v::VARCHAR))
         WHEN (typeof(v) IN ('FLOAT', 'DOUBLE') OR typeof(v) LIKE 'DECIMAL(%)')
              AND TRY_CAST(v::VARCHAR AS DOUBLE) = trunc(TRY_CAST(v::VARCHAR AS DOUBLE))
              AND abs(TRY_CAST(v::VARCHAR AS DOUBLE)) < 9.2e18
             THEN TRY_CAST(v::VARCHAR AS DOUBLE)::BIGINT
         ELSE error(format('{} must be an integer, not {} ({})', what, v::VARCHAR, typeof(v))) END)[1];

-- _float_arg(x, dflt, what): x, a number of any numeric type, as a DOUBLE (dflt when NULL), or the error "what
-- must be a number, not x (type)" (a boolean or a list gave DuckDB's COALESCE binder error, naming no parameter).
CREATE OR REPLACE MACRO _float_arg(x, dflt, what) AS list_transform([x], lambda v:
    CASE WHEN v IS NULL THEN dflt::DOUBLE
         WHEN typeof(v) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER',
                            'UBIGINT', 'UHUGEINT', 'FLOAT', 'DOUBLE') OR typeof(v) LIKE 'DECIMAL(%)'
             THEN v::VARCHAR::DOUBLE
         ELSE error(format('{} must be a number, not {} ({})', what, v::VARCHAR, typeof(v))) END)[1];

-- _str_arg(x, dflt, what) / _bool_arg(x, dflt, what): a string / boolean parameter (dflt when NULL), or the error
-- "what must be …, not x (type)": a list given as output_dir became a directory named [x], a number given as a
-- label a binder error naming an internal function; a string holding a NUL is refused too. (Every branch binds
-- whatever x's type: the casts go through VARCHAR.)
CREATE OR REPLACE MACRO _str_arg(x, dflt, what) AS list_transform([x], lambda v:
    CASE WHEN v IS NULL THEN dflt::VARCHAR
         WHEN typeof(v) = 'VARCHAR' AND contains(v::VARCHAR, chr(0))
             -- the Go functions get C strings, which end at a NUL: the rest would be dropped unseen
             THEN error(format('{} must not contain a NUL character (chr(0))', what))
         WHEN typeof(v) = 'VARCHAR' THEN v::VARCHAR
         ELSE error(format('{} must be a string, not {} ({})', what, v::VARCHAR, typeof(v))) END)[1];
CREATE OR REPLACE MACRO _bool_arg(x, dflt, what) AS list_transform([x], lambda v:
    CASE WHEN v IS NULL THEN dflt::BOOLEAN
         -- what SET VARIABLE hta_compat and _hta_mode take too: what DuckDB casts to a boolean ('yes', 't', 1)
         WHEN TRY_CAST(v::VARCHAR AS BOOLEAN) IS NOT NULL THEN v::VARCHAR::BOOLEAN
         ELSE error(format('{} must be true or false, not {} ({})', what, v::VARCHAR, typeof(v))) END)[1];

CREATE OR REPLACE MACRO _str_list_arg(x, what) AS
    CASE WHEN x IS NULL THEN NULL::VARCHAR[]
         WHEN typeof(x) NOT IN ('VARCHAR[]', '"NULL"[]')
             THEN error(format('{} must be a list of strings such as [''forward''], not {}', what, typeof(x)))
         WHEN list_count(from_json(to_json(x), '["VARCHAR"]')) < len(from_json(to_json(x), '["VARCHAR"]'))
             THEN error(format('{} must not hold NULL: {}', what, x::VARCHAR))
         ELSE from_json(to_json(x), '["VARCHAR"]') END;
