#!/usr/bin/python3
"""Writes htastack.json: threads of events with many ties (zero-length events, shared starts and ends, children that
outlive their parents) and the parent HTA 0.6.1 gives each event, the golden output of TestHTACallStacksMatchHTA.
The events go through the steps of HTA's CallStackGraph._construct_call_stack_graph: pandas melt, sort_values("time"),
HTA's own sort_events, and its stack. Debian 12's Python 3.11.2, pandas 1.5.3 and numpy 1.24.2, as the workplace's
HTA reference: PYTHONPATH=$HTA_SRC python3 htastack_gen.py > htastack.json"""
import json
import random
import sys

import numpy as np
import pandas as pd
from hta.common.trace_call_stack import sort_events

random.seed(20261124)


def hta_parents(ts, dur):
    df = pd.DataFrame(dict(index=range(len(ts)), ts=ts, dur=dur))
    df["end"] = df["ts"] + df["dur"]
    events = (
        df.melt(id_vars=["index", "dur"], value_vars=["ts", "end"], var_name="kind", value_name="time")
        .replace({"ts": -1, "end": 1})
        .sort_values("time")
    ).to_numpy()
    sort_events(events)
    stack, parent = [], {}
    for idx, _dur, kind, _time in events:
        if kind == -1:
            parent[int(idx)] = stack[-1] if stack else -1
            stack.append(int(idx))
        elif stack:
            stack.pop(-1)
    return [int(parent[i]) for i in range(len(ts))]


cases = []
for n in (3, 8, 20, 60, 200, 700):
    for grid in (3, 10, 50):
        for zeros in (0.0, 0.3):
            ts, dur = [], []
            for _ in range(n):
                t = random.randint(0, grid) * 10
                d = 0 if random.random() < zeros else random.randint(1, grid) * 10
                ts.append(t)
                dur.append(d)
            cases.append(dict(ts=ts, dur=dur, parent=hta_parents(ts, dur)))
print(json.dumps(dict(python=sys.version.split()[0], pandas=pd.__version__, numpy=np.__version__, cases=cases),
                 separators=(",", ":")))
