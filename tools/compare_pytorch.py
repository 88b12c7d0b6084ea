#!/usr/bin/env python3
"""Trains the same model with the same batch, threads and optimiser in baton and in PyTorch on this
machine, interleaved, and prints both throughputs, their ratio and the peak memory of each.

PyTorch is an optional dependency, needed by this script only (docs/cpu.md, "Side by side with
PyTorch"). Usage:
  tools/compare_pytorch.py --baton build/bin/baton --model resnet20 --batch 64 --threads 2
  tools/compare_pytorch.py --baton build/bin/baton --model resnet50 --batch 8 --threads 2
  tools/compare_pytorch.py --baton build-gpu/bin/baton --model resnet50 --batch 64 --device cuda
  tools/compare_pytorch.py --baton build/bin/baton --model token-mlp --batch 64 --threads 2
  tools/compare_pytorch.py --check build/tests/tools/sequence_reference   (float64 checks, tools/pytorch_checks.py)

Each round runs baton, then PyTorch, as separate processes (rounds alternate, so a change in the
machine's load hits both). A run trains `--steps` steps and measures samples/s over intervals of
`--interval` steps, leaving out the first interval (warm-up). Reported: the median interval of every
round, per framework, and the largest resident set (ru_maxrss) of any of its runs.
Model, data and optimiser: ResNet-20 (CIFAR, 1x1-conv + BN shortcuts, as baton's resnet20) on
3x32x32 images with 10 classes, torchvision's ResNet-50 on 3x224x224 with 1000 classes, or
token-mlp (one-hot over a vocabulary of 256, Linear 256→64, ReLU, Linear 64→256 at each of 32
positions, the cross-entropy averaged over all positions) on random token ids; random images; SGD with momentum 0.9, weight decay 5e-4, learning rate 0.01; float32.
With --device cuda both train on GPU 0 (PyTorch with cuDNN's autotuner off, as baton picks its
algorithms by heuristics), both in strict float32 unless --tf32 lets both use TF32 tensor cores for
convolutions and matrix products (PyTorch's own default allows TF32 in cuDNN's convolutions only); PyTorch reads each step's loss back to the host. Peak memory stays the
process's resident set (host memory), also on the GPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MODELS = {"resnet20": (32, 10), "resnet50": (224, 1000), "token-mlp": (32, 256)}  # image size or length, classes


def baton_data(args):
    size, classes = MODELS[args.model]
    samples = args.batch * (args.steps + 1)
    if args.model == "token-mlp":
        return f"tokens:{classes}:{size}:{samples}"
    return f"synthetic:3x{size}x{size}:{classes}:{samples}"


def baton_round(args, env):
    with tempfile.TemporaryDirectory() as folder:
        metrics = os.path.join(folder, "metrics.jsonl")
        command = [args.baton, "train", "--model", args.model, "--device", baton_device(args), "--workers", "1",
                   "--data", baton_data(args),
                   "--batch-size", str(args.batch), "--steps", str(args.steps), "--log-every", str(args.interval),
                   "--eval-every", "0", "--lr", "0.01", "--momentum", "0.9", "--weight-decay", "5e-4",
                   "--lr-schedule", "constant", "--metrics", metrics] + (["--tf32"] if args.tf32 else [])
        env = dict(env, BATON_NUM_THREADS=str(args.threads))
        process = subprocess.run(["/usr/bin/env", "python3", __file__, "--peak-of", *command], env=env,
                                 capture_output=True, text=True)
        if process.returncode != 0:
            sys.exit(f"compare_pytorch: baton failed:\n{process.stderr[-2000:]}")
        peak = json.loads(process.stdout.strip().splitlines()[-1])["peak_mib"]
        with open(metrics) as f:
            rates = [r["samples_per_second"] for r in map(json.loads, f) if r.get("type") == "train"]
    return rates[1:], peak


def baton_device(args):
    return "cuda:0" if args.device == "cuda" else "cpu"


def torch_round(args, env):
    command = ["/usr/bin/env", "python3", __file__, "--peak-of", sys.executable, __file__, "--torch-worker",
               "--model", args.model, "--batch", str(args.batch), "--threads", str(args.threads), "--device", args.device,
               *(["--tf32"] if args.tf32 else []),
               "--steps", str(args.steps), "--interval", str(args.interval)]
    process = subprocess.run(command, env=env, capture_output=True, text=True)
    if process.returncode != 0:
        sys.exit(f"compare_pytorch: PyTorch failed:\n{process.stderr[-2000:]}")
    lines = process.stdout.strip().splitlines()
    return json.loads(lines[-2])["rates"][1:], json.loads(lines[-1])["peak_mib"]


def peak_of(command):
    """Runs command, passes its output through, then prints its peak resident set as JSON."""
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(code)
    sys.stdout.flush()
    print(json.dumps({"peak_mib": usage.ru_maxrss / 1024.0}), flush=True)


def cifar_resnet20(torch, classes):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(y + (x if self.downsample is None else self.downsample(x)))

    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        for b in range(3):
            layers.append(Block(cin, cout, stride if b == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes)]
    return nn.Sequential(*layers)


def token_mlp(torch, vocabulary):
    nn = torch.nn

    class OneHot(nn.Module):
        def forward(self, tokens):
            return nn.functional.one_hot(tokens, vocabulary).float()

    return nn.Sequential(OneHot(), nn.Linear(vocabulary, 64), nn.ReLU(), nn.Linear(64, vocabulary))


def torch_worker(args):
    import time
    import torch
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    size, classes = MODELS[args.model]
    if args.model == "resnet20":
        model = cifar_resnet20(torch, classes)
    elif args.model == "token-mlp":
        model = token_mlp(torch, classes)
    else:
        import torchvision
        model = torchvision.models.resnet50(num_classes=classes)
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    model.to(device).train()
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    cross_entropy = torch.nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(0)
    if args.model == "token-mlp":  # per position: logits [n, T, V] and targets [n, T] as rows of one mean
        def loss_fn(logits, labels):
            return cross_entropy(logits.reshape(-1, classes), labels.reshape(-1))
        batches = [(torch.randint(0, classes, (args.batch, size), generator=generator),
                    torch.randint(0, classes, (args.batch, size), generator=generator)) for _ in range(4)]
    else:
        loss_fn = cross_entropy
        batches = [(torch.rand(args.batch, 3, size, size, generator=generator) * 2 - 1,
                    torch.randint(0, classes, (args.batch,), generator=generator)) for _ in range(4)]
    batches = [(images.to(device), labels.to(device)) for images, labels in batches]
    rates, start = [], time.perf_counter()
    for step in range(1, args.steps + 1):
        images, labels = batches[step % len(batches)]
        optimiser.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimiser.step()
        loss.item()
        if step % args.interval == 0:
            now = time.perf_counter()
            rates.append(args.interval * args.batch / (now - start))
            start = now
    print(json.dumps({"rates": rates, "torch": torch.__version__}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baton", default="build/bin/baton", help="the baton executable")
    parser.add_argument("--model", choices=sorted(MODELS), default="resnet20")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--tf32", action="store_true", help="both may use TF32 tensor cores (GPU)")
    parser.add_argument("--steps", type=int, default=0, help="steps per run (default: 6 intervals)")
    parser.add_argument("--interval", type=int, default=0,
                        help="steps per measured interval (default: 10, ResNet-50 5, token-mlp 20)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--check", metavar="REFERENCE",
                        help="instead: float64 checks against PyTorch of the results REFERENCE "
                             "(tests/tools/sequence_reference) writes (tools/pytorch_checks.py)")
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--peak-of", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_of:
        return peak_of(args.peak_of)
    if args.check:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import pytorch_checks
        return pytorch_checks.check(args.check)
    args.interval = args.interval or {"resnet50": 5, "token-mlp": 20}.get(args.model, 10)
    args.steps = args.steps or 6 * args.interval
    if args.torch_worker:
        return torch_worker(args)
    try:
        import torch
    except ImportError:
        sys.exit("compare_pytorch: PyTorch is not installed (pip install torch torchvision); it is only needed here")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    results = {"baton": ([], []), "pytorch": ([], [])}
    for round_index in range(args.rounds):
        for name, run in (("baton", baton_round), ("pytorch", torch_round)):
            rates, peak = run(args, env)
            results[name][0].extend(rates)
            results[name][1].append(peak)
            print(f"round {round_index + 1}: {name:8s} median {statistics.median(rates):8.1f} samples/s, "
                  f"peak {peak:7.0f} MiB", flush=True)
    summary = {name: {"samples_per_second": statistics.median(rates), "peak_mib": max(peaks), "intervals": rates}
               for name, (rates, peaks) in results.items()}
    ratio = summary["baton"]["samples_per_second"] / summary["pytorch"]["samples_per_second"]
    print(f"{args.model}, batch {args.batch}, {args.device}{' tf32' if args.tf32 else ''}, {args.threads} threads, torch {torch.__version__}: "
          f"baton {summary['baton']['samples_per_second']:.1f} samples/s, "
          f"PyTorch {summary['pytorch']['samples_per_second']:.1f} samples/s, baton / PyTorch {ratio:.2f}x; "
          f"peak memory baton {summary['baton']['peak_mib']:.0f} MiB, PyTorch {summary['pytorch']['peak_mib']:.0f} MiB")
    if args.json:
        report = {"model": args.model, "batch": args.batch, "device": args.device, "tf32": args.tf32, "threads": args.threads, "steps": args.steps,
                  "interval": args.interval, "rounds": args.rounds, "torch": torch.__version__,
                  "ratio": ratio, **summary}
        with open(args.json + ".tmp", "w") as f:
            json.dump(report, f, indent=1)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
