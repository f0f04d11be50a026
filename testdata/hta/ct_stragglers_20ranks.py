#!/usr/bin/python3
"""HTA's potential stragglers on 20 hand-built ranks (TestPotentialStragglersTieOrder builds the same traces).

Ranks 3 and 11 start their collective late in step 1, ranks 5 and 17 in step 2, and rank r starts r µs later
than rank 0 otherwise: flag counts tie, and with more than 16 ranks numpy's quicksort (pandas' sort_values)
does not keep the tied ranks in rank order. Usage, with HTA 0.6.1 importable (PYTHONPATH=$HTA_SRC):
    python3 ct_stragglers_20ranks.py OUT_DIR
It writes the traces to OUT_DIR and prints get_potential_stragglers(num_candidates=k) for k = 1..5; with Debian
12's pandas 1.5.3 and numpy 1.24.2 (the workplace reference's):
    1 [11]  2 [11, 3]  3 [19, 11, 3]  4 [19, 11, 18, 3]  5 [19, 11, 18, 3, 17]
"""
import json
import os
import sys

from hta.trace_analysis import TraceAnalysis

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
late = {1: {3, 11}, 2: {5, 17}}
for r in range(20):
    ev = []
    for s in (1, 2):
        b = 1000 * s
        ev.append(dict(ph="X", cat="user_annotation", name=f"ProfilerStep#{s}", pid=1, tid=1, ts=b, dur=1000, args={}))
        ev.append(dict(ph="X", cat="cuda_runtime", name="cudaLaunchKernel", pid=1, tid=1, ts=b + 10, dur=5, args={"correlation": s}))
        ev.append(dict(ph="X", cat="kernel", name="ncclKernel_AllReduce_RING_LL_Sum_float", pid=0, tid=7,
                       ts=b + 100 + (300 if r in late[s] else 0) + r, dur=200, args={"stream": 7, "correlation": s, "device": 0}))
    with open(f"{out}/rank-{r}.json", "w") as f:
        json.dump({"distributedInfo": {"rank": r, "world_size": 20}, "traceEvents": ev}, f)
ta = TraceAnalysis(trace_dir=out)
print("  ".join(f"{k} {ta.get_potential_stragglers(num_candidates=k)}" for k in range(1, 6)))
