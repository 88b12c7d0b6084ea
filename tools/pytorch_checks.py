"""Float64 checks of baton against PyTorch (tools/compare_pytorch.py --check REFERENCE).

REFERENCE is tests/tools/sequence_reference (built with the tests): it writes baton's float64 inputs,
parameters, outputs and gradients of OneHot, Linear over the last dimension of [N, T, features], the
per-position cross-entropy over [N, T, V] and the whole token-mlp model. This recomputes each from
the same inputs and parameters with PyTorch in float64, prints the largest absolute and relative
difference of every case, and fails when one is over the tolerance.
"""
import json
import os
import subprocess
import sys
import tempfile

TOLERANCE = 1e-12  # |baton - torch| <= TOLERANCE * max(|torch|, 1), every element


def tensors(torch, group):
    return {name: torch.tensor(t["values"], dtype=torch.float64).reshape(t["shape"]) for name, t in group.items()}


def one_hot(torch, case):
    tokens = tensors(torch, case["inputs"])["tokens"].long()
    classes = case["outputs"]["one_hot"]["shape"][-1]
    return {"outputs": {"one_hot": torch.nn.functional.one_hot(tokens, classes).double()}}


def linear_rank3(torch, case):
    x = tensors(torch, case["inputs"])["x"].requires_grad_()
    p = {name: t.requires_grad_() for name, t in tensors(torch, case["params"]).items()}
    y = torch.nn.functional.linear(x, p["linear.weight"], p["linear.bias"])
    y.backward(tensors(torch, case["output_grads"])["linear"])
    return {"outputs": {"linear": y}, "input_grads": {"x": x.grad}, "grads": {n: t.grad for n, t in p.items()}}


def cross_entropy(torch, case):
    inputs = tensors(torch, case["inputs"])
    logits, labels = inputs["logits"].requires_grad_(), inputs["labels"].long()
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                             label_smoothing=case["label_smoothing"])
    loss.backward()
    return {"outputs": {"loss": loss}, "input_grads": {"logits": logits.grad}}


def token_mlp(torch, case):
    inputs = tensors(torch, case["inputs"])
    tokens, labels = inputs["tokens"].long(), inputs["labels"].long()
    p = {name: t.requires_grad_() for name, t in tensors(torch, case["params"]).items()}
    vocabulary = p["head.weight"].shape[0]
    x = torch.nn.functional.one_hot(tokens, vocabulary).double()
    hidden = torch.relu(torch.nn.functional.linear(x, p["hidden.0.weight"], p["hidden.0.bias"]))
    logits = torch.nn.functional.linear(hidden, p["head.weight"], p["head.bias"])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocabulary), labels.reshape(-1))
    loss.backward()
    return {"outputs": {"loss": loss, "head": logits}, "grads": {n: t.grad for n, t in p.items()}}


CASES = {"one_hot": one_hot, "linear_rank3": linear_rank3, "cross_entropy": cross_entropy, "token_mlp": token_mlp}


def compare(torch, case, expected):
    """(largest abs difference, largest relative difference, worst value name) over every tensor baton wrote."""
    worst = (0.0, 0.0, "")
    for group in ("outputs", "input_grads", "grads"):
        baton = tensors(torch, case.get(group, {}))
        if set(baton) != set(expected.get(group, {})):
            sys.exit(f"compare_pytorch: case {case['name']}: baton wrote {group} {sorted(baton)}, "
                     f"PyTorch computed {sorted(expected.get(group, {}))}")
        for name, value in baton.items():
            reference = expected[group][name].detach().reshape(value.shape)
            diff = (value - reference).abs()
            relative = (diff / reference.abs().clamp(min=1.0)).max().item()
            if relative >= worst[1]:
                worst = (max(worst[0], diff.max().item()), relative, f"{group}/{name}")
            else:
                worst = (max(worst[0], diff.max().item()), worst[1], worst[2])
    return worst


def check(reference):
    try:
        import torch
    except ImportError:
        print("compare_pytorch: skipped: PyTorch is not installed (pip install torch); it is only needed here")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "reference.json")
        process = subprocess.run([reference, path], capture_output=True, text=True)
        if process.returncode != 0:
            sys.exit(f"compare_pytorch: {reference} failed:\n{process.stderr[-2000:]}")
        with open(path) as f:
            cases = json.load(f)["cases"]
    failed = []
    for case in cases:
        if case["name"] not in CASES:
            sys.exit(f"compare_pytorch: {reference} wrote case '{case['name']}', expected one of {sorted(CASES)}")
        absolute, relative, where = compare(torch, case, CASES[case["name"]](torch, case))
        label = case["name"] + (f" (label smoothing {case['label_smoothing']})" if "label_smoothing" in case else "")
        print(f"{label:36s} float64, torch {torch.__version__}: max abs diff {absolute:.3e}, "
              f"max rel diff {relative:.3e} ({where})", flush=True)
        if relative > TOLERANCE:
            failed.append(label)
    if failed:
        sys.exit(f"compare_pytorch: over the tolerance {TOLERANCE:g}: {', '.join(failed)}")
    print(f"compare_pytorch: all {len(cases)} cases within {TOLERANCE:g} of PyTorch")
