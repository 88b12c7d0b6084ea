#!/usr/bin/env python3
# An independent reference for the expected values of the PipeDream-objective tests (tests/parallel/plan/
# test_pipedream.cc): the semantics of PipeDream's single-level optimiser (compute_partitioning and main of
# optimizer_graph_hierarchical.py in msr-fiddle/pipedream), rewritten over its graph.txt format, sharing no code
# with baton. Usage: pipedream_reference.py GRAPH.txt WORKERS BANDWIDTH RATIO|- MEMORY|- STRAIGHT(0|1)
# prints: pipeline time, data-parallel time, number of states, replicas per stage.
import math, re, sys

def parse(path):
    nodes, edges = {}, []
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip(): continue
        if line.startswith("\t"):
            a, b = line.strip().split(" -- "); edges.append((a, b)); continue
        parts = line.split(" -- ")
        nid, desc, fields = parts[0], " -- ".join(parts[1:-1]), parts[-1]
        kv = {}
        for m in re.finditer(r"(\w+)=(\[[^\]]*\]|[^,]+)", fields):
            v = m.group(2).strip()
            kv[m.group(1)] = sum(float(x) for x in v[1:-1].split(";")) if v.startswith("[") else float(v)
        nodes[nid] = dict(desc=desc, f=kv["forward_compute_time"], b=kv["backward_compute_time"],
                          a=kv["activation_size"], p=kv["parameter_size"])
    ins = {n: set() for n in nodes}; outs = {n: set() for n in nodes}
    for a, b in edges: outs[a].add(b); ins[b].add(a)
    def remove(n):
        for o in outs[n]: ins[o].discard(n)
        for i in ins[n]: outs[i].discard(n)
        del nodes[n], ins[n], outs[n]
    for n in [n for n in nodes if not ins[n] and nodes[n]["desc"].startswith("Input")]: remove(n)
    for n in [n for n in nodes if not outs[n] and nodes[n]["desc"].startswith("__getitem__")]: remove(n)
    return nodes, ins, outs

def run(path, N, B, ratio=None, memory=None, straight=False):
    nodes, ins, outs = parse(path)
    anc = {}
    def ancestors(n):
        if n not in anc:
            s = set()
            for i in ins[n]: s.add(i); s |= ancestors(i)
            anc[n] = s
        return anc[n]
    sources = [n for n in nodes if not ins[n]]
    assert len(sources) == 1
    # states: down-sets grown from the source one node at a time
    start = frozenset(sources); seen = {start}; frontier = [start]
    while frontier:
        nxt = []
        for s in frontier:
            for n in nodes:
                if n not in s and ins[n] <= s:
                    t = s | {n}
                    if t not in seen: seen.add(t); nxt.append(t)
        frontier = nxt
    states = sorted(seen, key=len)
    S = len(states)
    def antichain(s): return [n for n in s if not (outs[n] & s)]
    def augmented(ac):
        extra = set()
        for a in ac:
            for p in ancestors(a):
                for o in outs[p]:
                    if o not in ancestors(a) and o != a: extra.add(p)
        return extra | set(ac)
    C = [sum((nodes[n]["f"] + nodes[n]["b"]) / 1000.0 for n in s) for s in states]
    Act = [sum(nodes[n]["a"] for n in s) for s in states]
    P = [sum(nodes[n]["p"] for n in s) for s in states]
    O = [sum(nodes[n]["a"] for n in augmented(antichain(s))) for s in states]
    preds = [[k for k in range(S) if states[k] < states[j]] for j in range(S)]
    A = [[None] * N for _ in range(S)]  # (time, split, replicas)
    for j in range(S):
        for m in range(1 if straight else N):
            stash = math.ceil((N - (m + 1)) / (m + 1)) * (Act[j] + P[j])
            if memory is not None and stash > memory: continue
            A[j][m] = ((C[j] + 4 * m * P[j] / (B * (m + 1))) / (m + 1), None, m + 1)
    for m in range(1, N):
        for j in range(1, S):
            best = A[j][m]
            for k in preds[j]:
                for r in range(1, 2 if straight else m + 1):
                    inp = 2.0 * O[k] / (B * r)
                    out = 2.0 * O[j] / (B * r) if j < S - 1 else None
                    stash = (Act[j] - Act[k] + P[j] - P[k]) * math.ceil((N - (m + 1)) / r)
                    if memory is not None and stash > memory: continue
                    last = (C[j] - C[k] + 4 * (r - 1) * (P[j] - P[k]) / (B * r)) / r
                    if A[k][m - r] is None: continue
                    t = max(A[k][m - r][0], last)
                    if ratio is not None:
                        inp /= ratio; t = max(t, inp)
                        if out is not None: out /= ratio; t = max(t, out)
                    if best is None or best[0] > t: best = (t, (k, m - r), r)
            A[j][m] = best
    dp = (C[-1] + 4 * (N - 1) * P[-1] / (B * N)) / N
    final = A[S - 1][N - 1]
    reps = []
    cell = final
    while cell is not None:
        reps.append(cell[2])
        if cell[1] is None: break
        cell = A[cell[1][0]][cell[1][1]]
    return (None if final is None else final[0]), dp, S, list(reversed(reps)) if final else None

if __name__ == "__main__":
    path = sys.argv[1]; N = int(sys.argv[2]); B = float(sys.argv[3])
    ratio = None if sys.argv[4] == "-" else float(sys.argv[4])
    memory = None if sys.argv[5] == "-" else float(sys.argv[5])
    straight = sys.argv[6] == "1"
    t, dp, S, reps = run(path, N, B, ratio, memory, straight)
    print(repr(t), repr(dp), S, reps)
