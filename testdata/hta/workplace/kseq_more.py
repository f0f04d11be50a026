#!/usr/bin/python3
"""Writes negative_queue_length_values_check/frequent_cuda_kernel_sequences_more.json and one CSV per case: HTA 0.6.1's
get_frequent_cuda_kernel_sequences for operators whose counts depend on HTA's own call-stack nesting (an event that
never leaves HTA's stack puts every later step's ops one level deeper, so HTA counts one step of five). The run_reference
output checks aten::linear only, where nothing of that shows. Same HTA and packages as README.md:
PYTHONPATH=$HTA_SRC /usr/bin/python3 kseq_more.py ../../../../shared/traces/hta"""
import json
import os
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis

CASES = [("aten::mm", 1), ("aten::copy_", 1), ("autograd::engine", 1), ("aten::mm", 3)]
name = "negative_queue_length_values_check"
here = os.path.dirname(os.path.abspath(__file__))
ta = TraceAnalysis(trace_files={0: os.path.join(sys.argv[1], name, "rank0.json.gz")}, trace_dir="")
out = []
for op, min_len in CASES:
    df = ta.get_frequent_cuda_kernel_sequences(operator_name=op, output_dir=tempfile.mkdtemp(), min_pattern_len=min_len,
                                               rank=0, top_k=5, visualize=False)
    csv = "frequent_cuda_kernel_sequences_%s_m%d.csv" % (op.replace(":", "_"), min_len)
    df.to_csv(os.path.join(here, name, csv), index=False)
    out.append(dict(operator_name=op, rank=0, min_pattern_len=min_len, csv=csv))
with open(os.path.join(here, name, "frequent_cuda_kernel_sequences_more.json"), "w") as f:
    json.dump(out, f, indent=1)
