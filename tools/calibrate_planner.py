#!/usr/bin/env python3
"""Predicted against measured step time of pipeline, hybrid and multi-process plans on this machine's
CPU (docs/planner.md, "Calibration"). Each plan is one `baton train` run that profiles the model on
the spot (a stage's share of the cores), plans it, prints the simulator's predicted step and then
measures the real one ("step time: predicted P ms, measured M ms"); runs across processes start
under mpirun. Usage:
  tools/calibrate_planner.py --baton build/bin/baton [--rounds 3] [--steps 30] [--json FILE]
                             [--train-arg=ARG ...]

Rounds go plan by plan, all plans once per round, so a change in the machine's load spreads over
every plan. Reported per plan: the median over rounds of predicted, measured and
error = (predicted - measured) / measured. Model: ResNet-20 on random 3x32x32 images, batch 64,
SGD with momentum, float32. Exit status 1 when a run fails (its output is shown).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# (label, processes (0: threads in one process), stage workers, baton train arguments). A stage
# worker is a pipeline position of a group (a thread, or a process under mpirun); more workers than
# cores is oversubscribed.
PLANS = [
    ("1 stage", 0, 1, ["--stages", "1", "--micro-batches", "1"]),
    ("2 stages, 1F1B, M=4", 0, 2, ["--stages", "2", "--micro-batches", "4"]),
    ("2 stages, GPipe, M=4", 0, 2, ["--stages", "2", "--micro-batches", "4", "--schedule", "gpipe"]),
    ("4 stages on 2 positions, interleaved, M=4", 0, 2,
     ["--stages", "2", "--micro-batches", "4", "--schedule", "interleaved"]),
    ("2 groups x 1 stage, M=2", 0, 2, ["--groups", "2", "--stages", "1", "--micro-batches", "2"]),
    ("3 stages, 1F1B, M=8", 0, 3, ["--stages", "3", "--micro-batches", "8"]),
    ("4 stages, GPipe, M=8", 0, 4, ["--stages", "4", "--micro-batches", "8", "--schedule", "gpipe"]),
    ("2 groups x 2 stages, 1F1B, M=2", 0, 4, ["--groups", "2", "--stages", "2", "--micro-batches", "2"]),
    ("2 stages, 1F1B, M=4", 2, 2, ["--stages", "2", "--micro-batches", "4"]),
    ("2 stages, GPipe, M=8", 2, 2, ["--stages", "2", "--micro-batches", "8", "--schedule", "gpipe"]),
    ("2 groups x 1 stage, M=2", 2, 2, ["--groups", "2", "--stages", "1", "--micro-batches", "2"]),
    ("4 stages, 1F1B, M=8", 4, 4, ["--stages", "4", "--micro-batches", "8"]),
    # Free replication: the antichain partitioner chooses the stages and their replicas (the chosen
    # layout of each round is reported); 3 devices, so unequal layouts such as 2-1 can be chosen.
    ("free replication over 3 devices, 1F1B, M=8", 0, 3,
     ["--stages", "3", "--micro-batches", "8", "--replication", "free", "--partitioner", "antichain"]),
]

STEP_LINE = re.compile(r"step time: predicted ([0-9.]+) ms, measured ([0-9.]+) ms")
PLAN_LINE = re.compile(r"^pipeline: (.*?), \w+ profile on", re.MULTILINE)


def run_plan(args, processes, plan_args):
    command = [args.baton, "train", "--model", "resnet20", "--device", "cpu", "--workers", "1",
               "--data", f"synthetic:3x32x32:10:{64 * (args.steps + 1)}", "--batch-size", "64",
               "--steps", str(args.steps), "--log-every", str(args.steps), "--eval-every", "0",
               "--lr", "0.01", "--momentum", "0.9", *args.train_arg, *plan_args]
    if processes:
        command = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(processes), *command]
    process = subprocess.run(command, capture_output=True, text=True)
    match = STEP_LINE.search(process.stdout)
    chosen = PLAN_LINE.search(process.stdout)
    if process.returncode != 0 or not match or not chosen:
        sys.exit(f"calibrate_planner: {' '.join(command)} failed (exit {process.returncode}):\n"
                 f"{process.stdout[-2000:]}{process.stderr[-2000:]}")
    return float(match.group(1)), float(match.group(2)), chosen.group(1)


def write_atomically(path, data):
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(f.name, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baton", required=True, help="the baton binary, e.g. build/bin/baton")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30, help="training steps per run (the first is not timed)")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--json", help="also write the table as JSON to this file (atomically)")
    parser.add_argument("--train-arg", action="append", default=[],
                        help="an argument added to every baton train run, e.g. --train-arg=--no-channels-last "
                             "(repeat for several)")
    args = parser.parse_args()
    if args.rounds < 1 or args.steps < 2:
        sys.exit("calibrate_planner: --rounds must be >= 1 and --steps >= 2")
    if not os.access(args.baton, os.X_OK):
        sys.exit(f"calibrate_planner: --baton {args.baton}: not an executable file")
    plans = PLANS if shutil.which(args.mpirun) else [p for p in PLANS if p[1] == 0]
    if len(plans) < len(PLANS):
        print(f"calibrate_planner: {args.mpirun} not found: the multi-process plans are left out", file=sys.stderr)

    samples = {i: [] for i in range(len(plans))}
    for round_index in range(args.rounds):
        for i, (_, processes, _, plan_args) in enumerate(plans):
            samples[i].append(run_plan(args, processes, plan_args))
        print(f"round {round_index + 1} of {args.rounds} done", file=sys.stderr)

    rows = []
    cores = len(os.sched_getaffinity(0))
    print("| plan | mode | stage workers / cores | predicted ms | measured ms | error | rounds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for i, (label, processes, workers, plan_args) in enumerate(plans):
        predicted = statistics.median(p for p, _, _ in samples[i])
        measured = statistics.median(m for _, m, _ in samples[i])
        errors = [100.0 * (p - m) / m for p, m, _ in samples[i]]
        error = statistics.median(errors)
        mode = f"{processes} processes (mpirun)" if processes else "threads, one process"
        chosen = sorted({c for _, _, c in samples[i]})
        shown = label if "--replication" not in plan_args else f"{label} (chose: {'; '.join(chosen)})"
        print(f"| {shown} | {mode} | {workers} / {cores} | {predicted:.1f} | {measured:.1f} | {error:+.1f}% "
              f"| {', '.join(f'{e:+.1f}%' for e in errors)} |")
        rows.append({"plan": label, "processes": processes, "stage_workers": workers, "arguments": plan_args,
                     "oversubscribed": workers > cores, "predicted_ms": predicted,
                     "measured_ms": measured, "error_percent": error,
                     "rounds": [{"predicted_ms": p, "measured_ms": m, "plan": c} for p, m, c in samples[i]]})
    fitting = [r for r in rows if not r["oversubscribed"]]
    within = sum(1 for r in fitting if abs(r["error_percent"]) <= 10.0)
    print(f"{within} of the {len(fitting)} plans whose stage workers fit on the {cores} cores within 10% "
          f"(oversubscribed: {len(rows) - len(fitting)}); load average {os.getloadavg()[0]:.2f}")
    if args.json:
        write_atomically(args.json, {"model": "resnet20", "batch": 64, "steps": args.steps, "rounds": args.rounds,
                                     "train_arguments": args.train_arg,
                                     "cores": cores, "plans": rows})


if __name__ == "__main__":
    main()
