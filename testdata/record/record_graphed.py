#!/usr/bin/env python3
"""Record a small PyTorch-profiler trace of a training step replayed as one CUDA graph, for what
record.py and record_compiled.py lack:
  * kernels launched by cudaGraphLaunch: one runtime call, many kernels (and memsets) under its
    correlation id, none with a launch call of its own;
  * beside them, eager work on the same stream (the input copies into the graph's static tensors, an
    evaluation forward pass) and a side stream that waits on the graph's output;
  * the profiler's memory records (profile_memory: `[memory]` instant events) and FLOP counts
    (with_flops).

Usage (on the GPU machine; PyTorch 2.11 with CUDA): python3 record_graphed.py --out DIR
Output: DIR/graphed/rank0.graphed.pt.trace.json.gz
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from record import gzip_trace


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    static_x = torch.randn(64, 256, device=dev)
    static_y = torch.randint(0, 10, (64,), device=dev)

    # Warm up on a side stream before capture, as CUDA graph capture requires.
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(warm)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()

    host = [(torch.randn(64, 256).pin_memory(), torch.randint(0, 10, (64,)).pin_memory()) for _ in range(4)]
    held_out = torch.randn(256, 256, device=dev)
    side = torch.cuda.Stream()

    def step(i):
        x, y = host[i % 4]
        with record_function("## h2d ##"):
            static_x.copy_(x, non_blocking=True)
            static_y.copy_(y, non_blocking=True)
        with record_function("## train (graph replay) ##"):
            graph.replay()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            with record_function("## loss copy ##"):
                kept = static_loss.detach().clone()
        with record_function("## eval ##"):
            with torch.no_grad():
                pred = model(held_out).argmax(dim=1)
        side.synchronize()
        return kept.item(), int(pred[0])

    out_dir = os.path.join(a.out, "graphed")
    os.makedirs(out_dir, exist_ok=True)
    raw = os.path.join(out_dir, "rank0.graphed.pt.trace.json")
    torch.cuda.synchronize()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=0, warmup=1, active=a.steps, repeat=1),
        record_shapes=True,
        profile_memory=True,
        with_flops=True,
        on_trace_ready=lambda p: p.export_chrome_trace(raw),
    ) as prof:
        for i in range(a.steps + 1):
            step(i)
            prof.step()
    gzip_trace(raw)


if __name__ == "__main__":
    main()
