#!/usr/bin/env python3
"""Record small real PyTorch-profiler (Kineto) traces on a CUDA machine for tracesql's tests.

One training job, profiled for a few steps, that has what the critical-path and breakdown analyses
must handle and the public traces lack in one place:
  * the autograd engine's device thread running the backward pass beside the main Python thread,
    and a third Python thread (a metrics logger) that competes for the GIL;
  * DataLoader work on the CPU (a resize inside __getitem__), pinned host-to-device copies;
  * several CUDA streams: a side stream that waits on the compute stream (cudaStreamWaitEvent),
    records an event, and is waited for with cudaEventSynchronize and cudaStreamSynchronize;
  * every kind of synchronisation: loss.item() (a synchronous copy), torch.cuda.synchronize();
  * a single-process NCCL all-reduce of the gradients (record_param_comms, nccl:all_reduce; with one
    rank NCCL launches nothing for it) and an out-of-place all-gather (with one rank: a
    device-to-device copy on the compute stream);
  * Kineto's cuda_sync events, where this PyTorch can record them.

Usage (on the GPU machine; PyTorch 2.11 with CUDA):
    python3 record.py --out DIR [--variant control|test] [--steps 3]
The 'test' variant changes the batch size and widens one layer, so that trace_diff has something to
find between the two. Output: DIR/<variant>/rank0.<variant>.pt.trace.json.gz
"""
import argparse
import gzip
import os
import queue
import shutil
import threading

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class ResizedImages(torch.utils.data.Dataset):
    """Random images resized on the CPU, as a data pipeline's transform would."""

    def __init__(self, n, size, seed):
        g = torch.Generator().manual_seed(seed)
        self.raw = torch.rand(n, 3, size + 8, size + 8, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)
        self.size = size

    def __len__(self):
        return len(self.raw)

    def __getitem__(self, i):
        img = F.interpolate(self.raw[i : i + 1], size=(self.size, self.size), mode="bilinear", align_corners=False)
        return img[0], self.labels[i]


def build_model(width):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(width, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )


def metrics_logger(inbox, outbox):
    """A second Python thread: summarises each step's loss history on the CPU while the main thread
    goes on, so the GIL is shared by three threads (main, autograd, logger)."""
    history = []
    while True:
        item = inbox.get()
        if item is None:
            return
        with record_function("## metrics ##"):
            history.append(item)
            t = torch.tensor(history, dtype=torch.float64)
            outbox.put((float(t.mean()), float(t.std()) if len(history) > 1 else 0.0))


def gzip_trace(raw):
    """Replace the exported trace raw by raw + ".gz" and print its size."""
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    print(raw + ".gz", os.path.getsize(raw + ".gz"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", choices=["control", "test"], default="control")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--port", default="29511")
    a = ap.parse_args()

    batch, width = (16, 16) if a.variant == "control" else (24, 24)
    torch.manual_seed(0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = a.port
    dist.init_process_group("nccl", rank=0, world_size=1)
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)

    model = build_model(width).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    side = torch.cuda.Stream()
    loader = torch.utils.data.DataLoader(
        ResizedImages(batch * (a.steps + 4), 32, seed=1), batch_size=batch, num_workers=0, pin_memory=True
    )
    inbox, outbox = queue.Queue(), queue.Queue()
    logger = threading.Thread(target=metrics_logger, args=(inbox, outbox), name="metrics_logger")
    logger.start()

    def train_step(x, y):
        with record_function("## h2d ##"):
            x = x.to(dev, non_blocking=True)
            y = y.to(dev, non_blocking=True)
        with record_function("## forward ##"):
            out = model(x)
        with record_function("## loss ##"):
            loss = F.cross_entropy(out, y)
        with record_function("## backward ##"):
            loss.backward()
        with record_function("## allreduce ##"):
            flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            dist.all_reduce(flat)
        with record_function("## allgather ##"):
            # Out of place, so even a one-rank communicator does GPU work: a device-to-device copy
            # (on the compute stream in PyTorch 2.11); the in-place all-reduce above does none.
            gathered = torch.empty_like(flat)
            dist.all_gather_into_tensor(gathered, flat)
            flat = gathered
        # Side stream: the gradient norm, computed beside the optimizer step.
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            with record_function("## grad_norm ##"):
                norm = torch.linalg.vector_norm(flat)
            done = torch.cuda.Event()
            done.record(side)
        with record_function("## optimizer ##"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        done.synchronize()  # cudaEventSynchronize
        side.synchronize()  # cudaStreamSynchronize
        loss_value = loss.item()  # synchronous device-to-host copy
        inbox.put(loss_value)
        torch.cuda.synchronize()  # cudaDeviceSynchronize
        outbox.get()
        return norm

    tmp = os.path.join(a.out, a.variant)
    os.makedirs(tmp, exist_ok=True)
    raw = os.path.join(tmp, f"rank0.{a.variant}.pt.trace.json")

    def save(prof):
        prof.export_chrome_trace(raw)

    try:  # cuda_sync events (Context Sync, Stream Sync, Event Sync, Wait Event) when this PyTorch has them
        experimental = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    except (AttributeError, TypeError):
        experimental = None
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        experimental_config=experimental,
        schedule=schedule(wait=1, warmup=1, active=a.steps, repeat=1),
        record_shapes=True,
        with_stack=True,
        on_trace_ready=save,
    ) as prof:
        for i, (x, y) in enumerate(loader):
            if i >= a.steps + 2:
                break
            train_step(x, y)
            prof.step()

    inbox.put(None)
    logger.join()
    dist.destroy_process_group()
    gzip_trace(raw)


if __name__ == "__main__":
    main()
