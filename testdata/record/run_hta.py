#!/usr/bin/env python3
"""Run HTA 0.6.1 on the traces record.py made, writing outputs in the layout of the workplace's HTA
reference (../shared/reference/hta/README.md), so tracesql's reference tests can check them too.

It drives the workplace's reference runner (run_reference.py, which only calls HTA's public API) with
the recorded trace directories, and adds the control-vs-test trace diff with HTA's defaults.

Usage (the variable makes numpy 2.5 sort ties as tracesql's compat mode does; README.md):
    NPY_DISABLE_CPU_FEATURES="X86_V4 X86_V3" PYTHONPATH=$HTA_SRC python3 run_hta.py --runner .../run_reference.py --traces TRACES --out OUT [--dirs control,test,graphed]
TRACES holds recorded/control/, recorded/test/ and recorded/graphed/ (as record.py and record_graphed.py
--out TRACES/recorded write them). With --dirs naming some of them, OUT's errors.csv, timings.csv and
key_numbers.json keep their rows for the others, and the trace diff runs only when control and test are
both named.

Plotting is not part of any number HTA computes. Where plotly is not installed (the GPU machines have
no package index), a stand-in module that accepts and ignores every call is put on the path first.
"""
import argparse
import csv
import importlib.util
import json
import os
import sys
import tempfile

STUB = '''
class _Ignore:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return _Ignore()
    def __getattr__(self, name): return _Ignore()
    def __iter__(self): return iter(())
BaseFigure = _Ignore
def __getattr__(name): return _Ignore()
'''


def ensure_plotly():
    try:
        import plotly  # noqa: F401
        return
    except ImportError:
        pass
    root = tempfile.mkdtemp(prefix="plotly_stub")
    pkg = os.path.join(root, "plotly")
    os.makedirs(pkg)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(STUB + '__version__ = "stub"\n')
    for sub in ("express", "graph_objects", "subplots", "io", "basedatatypes"):
        with open(os.path.join(pkg, sub + ".py"), "w") as f:
            f.write(STUB)
    sys.path.insert(0, root)


def read_summaries(out):
    """The rows of OUT's errors.csv, timings.csv and key_numbers.json before this run, if any."""
    got = {}
    for name in ("errors.csv", "timings.csv"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            with open(p, newline="") as f:
                r = csv.DictReader(f)
                got[name] = (r.fieldnames, list(r))
    for name in ("key_numbers.json", "versions.json"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            with open(p) as f:
                got[name] = json.load(f)
    return got


def merge_summaries(out, earlier, ran):
    """Put back the earlier rows of the trace directories this run did not redo, before this run's."""
    for name in ("errors.csv", "timings.csv"):
        if name not in earlier:
            continue
        fields, rows = earlier[name]
        p = os.path.join(out, name)
        with open(p, newline="") as f:
            now = list(csv.DictReader(f))
        kept = [row for row in rows if row["trace_dir"] not in ran]
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(kept + now)
    if "key_numbers.json" in earlier:
        p = os.path.join(out, "key_numbers.json")
        with open(p) as f:
            now = json.load(f)
        merged = {k: v for k, v in earlier["key_numbers.json"].items() if k not in ran}
        merged.update(now)
        with open(p, "w") as f:
            json.dump(merged, f, indent=1)
    # The versions of this run go beside its outputs when they differ from the earlier run's.
    p = os.path.join(out, "versions.json")
    with open(p) as f:
        now = json.load(f)
    if earlier.get("versions.json", now) != now:
        for rel in ran:
            with open(os.path.join(out, rel, "versions.json"), "w") as f:
                json.dump(now, f, indent=1)
        with open(p, "w") as f:
            json.dump(earlier["versions.json"], f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True, help="path of run_reference.py")
    ap.add_argument("--traces", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dirs", default="control,test,graphed", help="the directories of TRACES/recorded to run HTA on")
    a = ap.parse_args()
    ensure_plotly()
    spec = importlib.util.spec_from_file_location("run_reference", a.runner)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)

    cp = [("ProfilerStep", 0, None, "ProfilerStep_0"), ("ProfilerStep", 1, None, "ProfilerStep_1")]
    names = [d.strip() for d in a.dirs.split(",") if d.strip()]
    ref.TRACE_DIRS = {f"recorded/{d}": dict(cp=cp) for d in names}
    earlier = read_summaries(a.out)
    sys.argv = [a.runner, "--traces", a.traces, "--out", a.out, "--only", *ref.TRACE_DIRS]
    ref.main()
    merge_summaries(a.out, earlier, set(ref.TRACE_DIRS))
    if not {"control", "test"} <= set(names):
        return

    # Trace diff, control vs test, with HTA's defaults (first rank, first iteration of each side).
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    r = ref.Runner(a.traces, a.out, "recorded/trace_diff_results")
    c_dir = os.path.join(a.traces, "recorded/control")
    t_dir = os.path.join(a.traces, "recorded/test")
    ok, ctl = r.timed("LabeledTrace[recorded/control]", lambda: LabeledTrace(label="control", trace_dir=c_dir))
    ok2, tst = r.timed("LabeledTrace[recorded/test]", lambda: LabeledTrace(label="test", trace_dir=t_dir))
    if ok and ok2:
        r.write_json(dict(control_ranks=ctl.ranks(), control_iterations=ctl.iterations(),
                          test_ranks=tst.ranks(), test_iterations=tst.iterations()), "trace_diff_inputs.json")
        for dev in (DeviceType.CPU, DeviceType.GPU, DeviceType.ALL):
            ok, df = r.timed(f"compare_traces[recorded,{dev.name}]", lambda: TraceDiff.compare_traces(
                ctl, tst, device_type=dev, use_short_name=False))
            if ok:
                r.write_df(df, f"trace_diff_{dev.name.lower()}.csv", index=True)
            ok, d = r.timed(f"ops_diff[recorded,{dev.name}]", lambda: TraceDiff.ops_diff(ctl, tst, device_type=dev))
            if ok:
                r.write_json(d, f"trace_diff_ops_diff_{dev.name.lower()}.json")
    print(f"errors: {len(ref.ERRORS)}")
    for e in ref.ERRORS:
        print(" ", e["trace_dir"], e["analysis"], e["error"][:200])


if __name__ == "__main__":
    main()
