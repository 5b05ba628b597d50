#!/usr/bin/env python3
"""Where a window's user-space instructions ran: scripts/bench-insn --by-code (issue 28).

Reads, from bench-insn's output directory OUT:
  windows.tsv  one measured window per line: tool dev op size length run start-mark end-mark
  tbs.txt      the qemu plugin's per-block counts (benchmarks/insn/insn-count.c, tbs=): after each
               "mark SEQ" line, "VADDR COUNT" for every user-space block that ran since the mark before
  maps/        /proc/PID/maps of the measured processes: perftest's client and server per window
               (perftest-DEV-OP-SIZE-LEN-RUN-{client,server}.txt, written by perftest-mark.c),
               each JVM pair's client and peer (jvm-DEV-TOOL-{client,peer}.txt) and, for a JVM's
               anonymous executable memory, its compiled methods (jvm-DEV-TOOL-{client,peer}.codelist,
               from jcmd Compiler.codelist)
Each block's address is looked up in the two processes' mappings: a library's blocks are named by the
library and, through nm, the function that holds them (libraries without a symbol table: their
exported symbols only, so an internal function shows as the exported one before it); a JVM's
anonymous executable blocks are named by the compiled method that holds them, or "code cache:
other" (interpreter, stubs, adapters); blocks in neither process's mappings are "other processes".
Per case and name: (median over runs of the 3N window - median of the N window) / 2N, instructions
per round trip, as bench-insn's totals. Prints markdown tables: by library, side by side for the
tools, and the top functions per tool.
"""
import bisect
import collections
import os
import re
import statistics
import subprocess
import sys

out, n = sys.argv[1], int(sys.argv[2])
top = int(os.environ.get("JWARP_BENCH_INSN_TOP", "25"))


def read_tbs(path):
    deltas, cur = {}, None
    with open(path) as f:
        for line in f:
            a, b = line.split()[:2]
            if a == "mark":
                cur = deltas.setdefault(int(b), [])
            elif a == "exit":
                continue
            elif cur is not None:
                cur.append((int(a, 16), int(b)))
    return deltas


class Maps:
    """One process's mappings: executable ones, sorted by start."""

    def __init__(self, path, codelist=None):
        self.rows = []
        if not os.path.exists(path):
            # a process that never reached its window's end hook (ib_read_lat's passive server never
            # waits for a completion): its blocks count as "other processes"
            print(f"attribute: no mappings in {path}", file=sys.stderr)
            path = os.devnull
        for line in open(path):
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            perms, off = parts[1], int(parts[2], 16)
            name = parts[5].strip() if len(parts) > 5 else ""
            self.rows.append((lo, hi, perms, off, name))
        self.rows.sort()
        self.starts = [r[0] for r in self.rows]
        # a library's load bias: the start of its mapping at file offset 0
        self.bias = {}
        for lo, hi, perms, off, name in self.rows:
            if name.startswith("/") and off == 0 and name not in self.bias:
                self.bias[name] = lo
        self.methods = []
        if codelist and os.path.exists(codelist):
            for line in open(codelist):
                # "ID LEVEL STATE Class.method(signature) [HEADER, CODE - END]"; a signature may hold "["
                m = re.match(r"^\s*\d+\s+-?\d+\s+-?\d+\s+(.*\S)\s+\[(0x[0-9a-fA-F]+),\s*(0x[0-9a-fA-F]+)\s*-\s*(0x[0-9a-fA-F]+)\]\s*$", line)
                if m:
                    self.methods.append((int(m.group(2), 16), int(m.group(4), 16), m.group(1)))
            self.methods.sort()
        self.mstarts = [m[0] for m in self.methods]

    def find(self, va):
        i = bisect.bisect_right(self.starts, va) - 1
        if i < 0:
            return None
        lo, hi, perms, off, name = self.rows[i]
        return self.rows[i] if va < hi else None

    def method(self, va):
        i = bisect.bisect_right(self.mstarts, va) - 1
        if i >= 0 and va < self.methods[i][1]:
            return self.methods[i][2]
        return None


_syms = {}


def symbols(path):
    if path not in _syms:
        rows = []
        for flags in (["--defined-only"], ["-D", "--defined-only"]):
            try:
                text = subprocess.run(["nm", "-C", *flags, path], capture_output=True, text=True).stdout
            except OSError:
                text = ""
            for line in text.splitlines():
                m = re.match(r"^([0-9a-fA-F]+)\s+[TtWwi]\s+(.*)$", line)
                if m:
                    rows.append((int(m.group(1), 16), m.group(2)))
            if rows:
                break
        rows.sort()
        _syms[path] = ([r[0] for r in rows], [r[1] for r in rows])
    return _syms[path]


def short_lib(name):
    base = os.path.basename(name)
    m = re.match(r"^(lib[^.]*?)(-rdmav\d+)?\.so", base)
    return m.group(1) if m else base


def classify(va, sides):
    """(side, module, function) for one block address, sides: [(side name, Maps)]."""
    hits = []
    for side, maps in sides:
        r = maps.find(va)
        if r is not None:
            hits.append((side, maps, r))
    # address-space randomisation makes overlaps rare; an executable mapping wins over data
    exe = [h for h in hits if "x" in h[2][2]]
    if len(exe) > 1:
        return ("?", "ambiguous", "")
    if not exe:
        return ("-", "other processes", "")
    side, maps, (lo, hi, perms, off, name) = exe[0]
    if name.startswith("/"):
        addrs, names = symbols(name)
        rel = va - maps.bias.get(name, lo - off)
        i = bisect.bisect_right(addrs, rel) - 1
        fn = names[i] if i >= 0 else "?"
        return (side, short_lib(name), fn)
    if name.startswith("["):
        return (side, name, "")
    meth = maps.method(va)
    if meth is not None:
        return (side, "JIT", meth)
    return (side, "code cache: other", "")


def main():
    deltas = read_tbs(os.path.join(out, "tbs.txt"))
    maps_dir = os.path.join(out, "maps")
    jvm_maps = {}
    # per case (tool, dev, op, size): per key: {length: {run: count}}
    by_mod = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(dict)))
    by_fn = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(dict)))
    windows = collections.defaultdict(lambda: collections.defaultdict(set))
    for line in open(os.path.join(out, "windows.tsv")):
        tool, dev, op, size, length, run, start, end = line.split()
        length, start, end = int(length), int(start), int(end)
        if end != start + 1 or end not in deltas:
            print(f"attribute: window {line.strip()} has no block counts", file=sys.stderr)
            continue
        if tool == "perftest":
            stem = os.path.join(maps_dir, f"{tool}-{dev}-{op}-{size}-{length}-{run}")
            sides = [("client", Maps(stem + "-client.txt")), ("server", Maps(stem + "-server.txt"))]
        else:
            if (dev, tool) not in jvm_maps:
                stem = os.path.join(maps_dir, f"jvm-{dev}-{tool}")
                jvm_maps[(dev, tool)] = [("client", Maps(stem + "-client.txt", stem + "-client.codelist")),
                                         ("server", Maps(stem + "-peer.txt", stem + "-peer.codelist"))]
            sides = jvm_maps[(dev, tool)]
        case = (tool, dev, op, size)
        mods, fns = collections.Counter(), collections.Counter()
        for va, cnt in deltas[end]:
            side, mod, fn = classify(va, sides)
            mods[(side, mod)] += cnt
            fns[(side, mod, fn)] += cnt
        windows[case][length].add(run)
        for k, v in mods.items():
            by_mod[case][k][length][run] = v
        for k, v in fns.items():
            by_fn[case][k][length][run] = v

    def per_rtt(case, table):
        lens = windows[case]
        if n not in lens or 3 * n not in lens:
            return {}
        res = {}
        for k, bylen in table[case].items():
            small = statistics.median([bylen[n].get(r, 0) for r in lens[n]])
            big = statistics.median([bylen[3 * n].get(r, 0) for r in lens[3 * n]])
            res[k] = (big - small) / (2 * n)
        return res

    groups = collections.defaultdict(list)
    for case in windows:
        groups[case[1:]].append(case[0])
    text = []
    for (dev, op, size), tools in sorted(groups.items()):
        tools.sort(key=lambda t: (t not in ("perftest", "tcp"), t))
        mods = {t: per_rtt((t, dev, op, size), by_mod) for t in tools}
        keys = sorted({k for t in tools for k in mods[t]},
                      key=lambda k: -max(abs(mods[t].get(k, 0)) for t in tools))
        text.append(f"\nUser instructions per round trip by code, {dev} {op} {size} B "
                    f"(both ends; median of runs, 3N window minus N window)\n")
        text.append("| side | code | " + " | ".join(tools) + " |")
        text.append("|---|---|" + "---:|" * len(tools))
        for k in keys:
            vals = [mods[t].get(k, 0) for t in tools]
            if max(abs(v) for v in vals) < 20:
                continue
            text.append(f"| {k[0]} | {k[1]} | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
        text.append("| | total | " + " | ".join(f"{sum(mods[t].values()):,.0f}" for t in tools) + " |")
        for t in tools:
            fns = per_rtt((t, dev, op, size), by_fn)
            rows = sorted(fns.items(), key=lambda kv: -abs(kv[1]))[:top]
            text.append(f"\nTop functions, {t} {dev} {op} {size} B (user instructions per round trip)\n")
            text.append("| side | code | function | insns / RTT |")
            text.append("|---|---|---|---:|")
            for (side, mod, fn), v in rows:
                fn = fn.replace("|", "\\|")
                if len(fn) > 110:
                    fn = fn[:107] + "..."
                text.append(f"| {side} | {mod} | {fn} | {v:,.0f} |")
    report = "\n".join(text) + "\n"
    with open(os.path.join(out, "by-code.md"), "w") as f:
        f.write(report)
    print(report)


main()
