import json, sys
from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff
T = "/work/shared/traces/hta/"
out = "./sq_ref_"  # files written as sq_ref_<name>
ctl = LabeledTrace(label="control", trace_dir=T + "trace_diff/control")
tst = LabeledTrace(label="test", trace_dir=T + "trace_diff/test")
base = LabeledTrace(label="base", trace_dir=T + "trace_compare/base")
test = LabeledTrace(label="test", trace_dir=T + "trace_compare/test")
for dev in DeviceType:
    for short in (False, True):
        df = TraceDiff.compare_traces(base, test, 1, 1, 1010, 1010, device_type=dev, use_short_name=short)
        df.to_csv(out + f"trace_compare_{dev.name.lower()}_{'short' if short else 'full'}.csv", index=True)
    df = TraceDiff.compare_traces(ctl, tst, device_type=dev)
    df.to_csv(out + f"trace_diff_{dev.name.lower()}.csv", index=True)
    json.dump(TraceDiff.ops_diff(ctl, tst, device_type=dev), open(out + f"trace_diff_ops_diff_{dev.name.lower()}.json", "w"), indent=1)
    json.dump(TraceDiff.ops_diff(base, test, 1, 1, 1010, 1010, device_type=dev), open(out + f"trace_compare_ops_diff_{dev.name.lower()}.json", "w"), indent=1)
json.dump(dict(control_ranks=ctl.ranks(), control_iterations=ctl.iterations(), test_ranks=tst.ranks(), test_iterations=tst.iterations()), open(out + "inputs.json", "w"))
