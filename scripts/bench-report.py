#!/usr/bin/env python3
"""Ratio table, targets, JSON summary and gnuplot plots for scripts/bench.

Reads from DIR (argument 1):
  host-run-N.jsonl       BenchMain lines of host run N (soft provider and TCP floors, interleaved forks)
  strace-TAG-N.txt       `strace -c -f` summaries of runs with N measured 64 B round trips
  hgrm/*.hgrm            HdrHistogram percentile distributions (µs), one per latency case and run
  guest-perftest.txt     perftest client reports, each after a line '== TOOL DEV SIZE'
  guest-benchmain.jsonl  BenchMain lines of the DiSNI, ffm and soft providers in the same guest run
Writes DIR/summary.json, DIR/results.md (the table as Markdown), and with gnuplot installed
DIR/latency.png (p50 round trip against size) and DIR/percentiles-64B.png (the percentile
distribution of run 1 at 64 B, the HdrHistogram plot). Prints the table and the targets.

Pairs (per run, ours / floor): soft send and write latency with TCP ping-pong of the same size
and wait (await = blocking sockets, spin = busy-spin), soft read with a TCP fetch (8-byte request,
SIZE-byte answer), soft bandwidth with a continuous TCP stream of the same message size. A target
passes on the median of the per-run ratios; min..max shows the noise between runs. Guest ratios
are DiSNI / perftest, ffm / perftest, ffm / DiSNI and soft / perftest (soft over the guest's TCP against
kernel siw, reported without a target) in the same guest run; perftest's ib_send_lat and
ib_write_lat report half a round trip, so the providers' round trips are halved for them.
"""
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

# (soft op, tcp op) for latency
LAT_PAIRS = [("send", "pingpong"), ("write", "pingpong"), ("read", "fetch")]
BW_OPS = ["write-bw", "send-bw", "read-bw"]
WAIT_FLOOR = {"await": "block", "spin": "spin"}


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": len(xs)}


def load_runs(d):
    runs = {}
    for f in sorted(d.glob("host-run-*.jsonl")):
        n = int(re.findall(r"\d+", f.name)[0])
        recs = [json.loads(line) for line in f.read_text().splitlines() if line.strip().startswith("{")]
        runs[n] = recs
    return [runs[k] for k in sorted(runs)]


def pick(run, **kw):
    for r in run:
        if "error" in r:
            continue
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def errors(runs):
    return [r for run in runs for r in run if "error" in r]


def host_rows(runs):
    lat, bw, qps = [], [], []
    sizes = sorted({r["size"] for run in runs for r in run})
    for wait in ("await", "spin"):
        for op, floor in LAT_PAIRS:
            for size in sizes:
                ours = [pick(run, transport="soft", op=op, size=size, wait=wait, qps=1) for run in runs]
                base = [pick(run, transport="tcp", op=floor, size=size, wait=WAIT_FLOOR[wait]) for run in runs]
                if not any(ours) and not any(base):
                    continue
                row = {"op": op, "wait": wait, "size": size, "floor": f"tcp {floor} ({WAIT_FLOOR[wait]})"}
                for st in ("p50", "p99", "p999"):
                    k = f"rtt_{st}_us"
                    row[f"soft_{st}_us"] = spread([o[k] for o in ours if o])
                    row[f"tcp_{st}_us"] = spread([b[k] for b in base if b])
                    row[f"ratio_{st}"] = spread([o[k] / b[k] for o, b in zip(ours, base) if o and b and b[k]])
                # CPU beside latency: the client JVM's CPU µs per operation (every thread) and the cores
                # that JVM kept busy, so that a wait that wins by spinning says so
                for side, rs in (("soft", ours), ("tcp", base)):
                    row[f"{side}_cpu_us"] = spread([x["cpu_us_per_op_client"] for x in rs if x and "cpu_us_per_op_client" in x])
                    row[f"{side}_busy"] = spread([x["cpu_cores_busy"] for x in rs if x and "cpu_cores_busy" in x])
                row["jit_ms_while_measuring_max"] = max([o["jit_ms_while_measuring"] for o in ours if o] or [0])
                lat.append(row)
    for op in BW_OPS:
        for crc in (True, False):
            for size in sizes:
                ours = [pick(run, transport="soft", op=op, size=size, crc=crc) for run in runs]
                base = [pick(run, transport="tcp", op="stream", size=size) for run in runs]
                if not any(ours):
                    continue
                bw.append({"op": op, "size": size, "crc": crc,
                           "window": next(o for o in ours if o).get("window"),
                           "soft_mb_s": spread([o["mb_per_s"] for o in ours if o]),
                           "soft_msgs_s": spread([o["msgs_per_s"] for o in ours if o]),
                           "tcp_mb_s": spread([b["mb_per_s"] for b in base if b]),
                           "ratio": spread([o["mb_per_s"] / b["mb_per_s"] for o, b in zip(ours, base) if o and b])})
    counts = sorted({r["qps"] for run in runs for r in run if r.get("qps", 1) > 1})
    for q in counts:
        many = [pick(run, transport="soft", op="send", size=64, wait="await", qps=q) for run in runs]
        # the 1-QP case of the same fork (the last 64 B soft await send of the run)
        one = [next((r for r in reversed(run) if r.get("qps") == 1 and r.get("op") == "send" and r.get("size") == 64
                     and r.get("wait") == "await" and r.get("transport") == "soft" and "error" not in r), None)
               for run in runs]
        qps.append({"qps": q, "p50_us": spread([m["rtt_p50_us"] for m in many if m]),
                    "one_p50_us": spread([o["rtt_p50_us"] for o in one if o]),
                    "ratio_p50": spread([m["rtt_p50_us"] / o["rtt_p50_us"] for m, o in zip(many, one) if m and o])})
    return lat, bw, qps


STRACE_LINE = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?(\w+)\s*$")


def load_strace(d):
    """{tag: {"total": per trip, "by_call": {name: per trip}}} from runs of two lengths."""
    files = {}
    for f in d.glob("strace-*.txt"):
        m = re.match(r"strace-(.+)-(\d+)\.txt$", f.name)
        if m:
            files.setdefault(m[1], {})[int(m[2])] = f
    out = {}
    for tag, byn in files.items():
        if len(byn) < 2:
            continue
        n1, n2 = sorted(byn)[:2]
        c1, c2 = parse_strace(byn[n1]), parse_strace(byn[n2])
        if not c1 or not c2:
            continue
        per = {k: (c2.get(k, 0) - c1.get(k, 0)) / (n2 - n1) for k in set(c1) | set(c2)}
        top = dict(sorted(((k, v) for k, v in per.items() if k != "total" and v >= 0.05), key=lambda kv: -kv[1]))
        out[tag.replace("-", " ")] = {"per_round_trip": per.get("total"), "by_call": top, "trips": [n1, n2]}
    return out


def parse_strace(f):
    calls = {}
    for line in f.read_text(errors="replace").splitlines():
        m = STRACE_LINE.match(line)
        if m:
            calls[m[3]] = int(m[1])
    return calls


PERF_BW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
PERF_BW_PARAM = re.compile(r"^\s*(TX depth|CQ Moderation|Outstand reads)\s*:\s*(\d+)\s*$")


def load_perftest(path):
    """{(tool, dev, size): {...}} from perftest client reports."""
    out = {}
    if not path.exists():
        return out
    cur = None
    inline = None
    params = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("== "):
            h = line[3:].split()
            # a 5th field "event": perftest -e, kept apart as TOOL-e
            tool = h[0] + ("-e" if len(h) > 4 and h[4] == "event" else "")
            cur = (tool, h[1], int(h[2]), int(h[3]) if len(h) > 3 else 1)
            inline = None
            params = {}
            continue
        if cur is None:
            continue
        m = re.search(r"Inline data is used up to (\d+) bytes|Max inline data\s*:\s*(\d+)", line)
        if m:
            inline = int(m[1] or m[2])
        t = line.split()
        if cur[0].endswith(("_lat", "_lat-e")) and len(t) == 9 and t[0] == str(cur[2]) and t[1].isdigit():
            # bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9 (t_stdev may be -nan)
            num = lambda x: float(x) if re.fullmatch(r"[\d.]+", x) else None
            out[cur] = {"min": num(t[2]), "p50": num(t[4]), "mean": num(t[5]), "p99": num(t[7]), "p999": num(t[8]),
                        "inline": inline}
            continue
        if cur[0].endswith("_bw"):
            # the client's test header: its send window, CQ moderation and Read depth
            m = PERF_BW_PARAM.match(line)
            if m:
                params[m[1]] = int(m[2])
                continue
        m = PERF_BW.match(line)
        if m and cur[0].endswith("_bw"):
            # perftest's MB/sec is 2^20 bytes per second (BW average: iterations x size over first post
            # to last completion); convert to 10^6.
            out[cur] = {"mb_s": float(m[4]) * 1.048576, "msgs_s": float(m[5]) * 1e6, "inline": inline,
                        "iters": int(m[2]), "tx_depth": params.get("TX depth"), "cq_mod": params.get("CQ Moderation"),
                        "out_reads": params.get("Outstand reads")}
    return out


def load_benchmain(path):
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            if "error" not in r:
                # spin is perftest's way and the compared figure; await is kept beside it
                op = r["op"] + ("/await" if r.get("wait") == "await" else "")
                key = (op, r["label"], int(r["size"]), int(r.get("run", 1)))
                # DiSNI's lines under the plain key, as before; other providers' under their name
                out[key if r.get("transport", "disni") == "disni" else (r["transport"],) + key] = r
    return out


GUEST_LAT = {"ib_send_lat": ("send", True), "ib_write_lat": ("write", True), "ib_read_lat": ("read", False)}
GUEST_BW = {"ib_write_bw": "write-bw", "ib_send_bw": "send-bw", "ib_read_bw": "read-bw"}


def guest_rows(perf, ours):
    """One row per (device, tool, size): medians over the runs; ratios DiSNI / perftest per run, then
    median (min..max) of those; the JIT/GC fields of the DiSNI cases summed over the runs."""
    cases = {}
    events = {}
    for (tool, dev, size, run), p in perf.items():
        if tool.endswith("-e"):
            events.setdefault((dev, tool[:-2], size), []).append((run, p))
            cases.setdefault((dev, tool[:-2], size), [])
        else:
            cases.setdefault((dev, tool, size), []).append((run, p))
    rows = []
    for (dev, tool, size), pr in sorted(cases.items()):
        pr.sort()
        ev = sorted(events.get((dev, tool, size), []))
        if tool in GUEST_BW:
            rows.append(bw_row(ours, dev, tool, size, pr))
            continue
        op, half = GUEST_LAT[tool]
        div = 2 if half else 1
        o = [ours.get((op, dev, size, run)) for run, _ in pr]
        a = [ours.get((op + "/await", dev, size, run)) for run, _ in pr]
        got = [x for x in o if x]
        # event mode: DiSNI in CompletionQueue.await against perftest -e, per run
        ea = [ours.get((op + "/await", dev, size, run)) for run, _ in ev]
        row = {"device": dev, "op": op, "tool": tool, "size": size, "half_rtt": half, "runs": len(pr),
               "perftest_inline": (pr or ev)[0][1]["inline"], "event_runs": len(ev),
               "event_warmup_ops": min((x.get("warmup_ops", 0) for x in ea if x), default=None),
               "event_jit_quiet": all(x.get("warmup_jit_quiet", False) for x in ea if x) if any(ea) else None,
               "event_jit_ms_while_measuring": sum(x.get("jit_ms_while_measuring", 0) for x in ea if x),
               "perftest_event_p50_us": spread([p["p50"] for _, p in ev if p["p50"]]),
               "disni_event_p50_us": spread([x["rtt_p50_us"] / div for x in ea if x]),
               "ratio_event_p50": spread([x["rtt_p50_us"] / div / p["p50"] for x, (_, p) in zip(ea, ev) if x and p["p50"]]),
               "disni_await_p50_us": spread([x["rtt_p50_us"] / div for x in a if x]),
               "jit_ms_while_measuring": sum(x.get("jit_ms_while_measuring", 0) for x in got) if got else None,
               "peer_compiles_while_measuring": sum(x.get("peer_compiles_while_measuring", 0) for x in got) if got else None,
               "gc_while_measuring": sum(x.get("gc_while_measuring", 0) for x in got) if got else None,
               "warmup_ops": min((x.get("warmup_ops", 0) for x in got), default=None),
               "warmup_jit_quiet": all(x.get("warmup_jit_quiet", False) for x in got) if got else None}
        for st in ("min", "p50", "p99", "p999"):
            row[f"perftest_{st}_us"] = spread([p[st] for _, p in pr])
            row[f"disni_{st}_us"] = spread([x[f"rtt_{st}_us"] / div for x in o if x])
            row[f"ratio_{st}"] = spread([x[f"rtt_{st}_us"] / div / p[st] for x, (_, p) in zip(o, pr) if x and p[st]])
        row["ffm"] = provider_fields(ours, "ffm", op, dev, size, div, pr, ev)
        # the soft provider (pure Java over the guest's TCP) against kernel siw, the peer a user would pick instead
        row["soft"] = provider_fields(ours, "soft", op, dev, size, div, pr, ev)
        rows.append(row)
    return rows


def bw_row(ours, dev, tool, size, pr):
    """One bandwidth row (ib_*_bw against BenchMain --perftest-bw): MB/s of each tool, medians over the
    runs; ratios per run (DiSNI / perftest, ffm / perftest, ffm / DiSNI), then median (min..max); the
    window, CQ moderation and Read depth each side used, and the providers' JIT/GC fields."""
    op = GUEST_BW[tool]
    o = [ours.get((op, dev, size, run)) for run, _ in pr]
    fo = [ours.get(("ffm", op, dev, size, run)) for run, _ in pr]

    def side(xs):
        got = [x for x in xs if x]
        if not got:
            return None
        first = got[0]
        return {"runs": len(got), "mb_s": spread([x["mb_per_s"] for x in got]),
                "n": sorted({x.get("n") for x in got}),
                "window": first.get("window"), "signal_every": first.get("signal_every"), "ord": first.get("ord"),
                "rx_depth": first.get("rx_depth"), "semantics": first.get("semantics"),
                "warmup_ops": min(x.get("warmup_ops", 0) for x in got),
                "jit_quiet": all(x.get("warmup_jit_quiet", False) for x in got),
                "jit_ms_while_measuring": sum(x.get("jit_ms_while_measuring", 0) for x in got),
                "peer_compiles_while_measuring": sum(x.get("peer_compiles_while_measuring", 0) for x in got),
                "gc_while_measuring": sum(x.get("gc_while_measuring", 0) for x in got)}

    p0 = pr[0][1] if pr else {}
    return {"device": dev, "op": op, "tool": tool, "size": size, "runs": len(pr),
            "perftest_mb_s": spread([p["mb_s"] for _, p in pr]), "perftest_inline": p0.get("inline"),
            "perftest_iters": sorted({p.get("iters") for _, p in pr}),
            "perftest_tx_depth": p0.get("tx_depth"), "perftest_cq_mod": p0.get("cq_mod"),
            "perftest_out_reads": p0.get("out_reads"),
            "disni": side(o), "ffm_bw": side(fo),
            "disni_mb_s": spread([x["mb_per_s"] for x in o if x]),
            "ratio": spread([x["mb_per_s"] / p["mb_s"] for x, (_, p) in zip(o, pr) if x and p["mb_s"]]),
            "ratio_ffm": spread([x["mb_per_s"] / p["mb_s"] for x, (_, p) in zip(fo, pr) if x and p["mb_s"]]),
            "ratio_ffm_disni": spread([x["mb_per_s"] / y["mb_per_s"] for x, y in zip(fo, o) if x and y])}


def provider_fields(ours, prov, op, dev, size, div, pr, ev):
    """One provider's (ffm, soft) figures for one latency row, or None when it did not run: its p50 and
    ratios against perftest and DiSNI per run (spin; await against perftest -e), and its JIT fields."""
    f = [ours.get((prov, op, dev, size, run)) for run, _ in pr]
    fe = [ours.get((prov, op + "/await", dev, size, run)) for run, _ in ev]
    if not any(f) and not any(fe):
        return None
    d = [ours.get((op, dev, size, run)) for run, _ in pr]
    de = [ours.get((op + "/await", dev, size, run)) for run, _ in ev]
    got = [x for x in f if x]
    got_e = [x for x in fe if x]
    return {"runs": len(got), "event_runs": len(got_e),
            "p50_us": spread([x["rtt_p50_us"] / div for x in got]),
            "p99_us": spread([x["rtt_p99_us"] / div for x in got]),
            "ratio_p50": spread([x["rtt_p50_us"] / div / p["p50"] for x, (_, p) in zip(f, pr) if x and p["p50"]]),
            "ratio_min": spread([x["rtt_min_us"] / div / p["min"] for x, (_, p) in zip(f, pr) if x and p["min"]]),
            "min_us": spread([x["rtt_min_us"] / div for x in got]),
            "ratio_disni_p50": spread([x["rtt_p50_us"] / y["rtt_p50_us"] for x, y in zip(f, d) if x and y]),
            "event_p50_us": spread([x["rtt_p50_us"] / div for x in got_e]),
            "ratio_event_p50": spread([x["rtt_p50_us"] / div / p["p50"] for x, (_, p) in zip(fe, ev) if x and p["p50"]]),
            "ratio_event_disni_p50": spread([x["rtt_p50_us"] / y["rtt_p50_us"] for x, y in zip(fe, de) if x and y]),
            "warmup_ops": min((x.get("warmup_ops", 0) for x in got + got_e), default=None),
            "jit_quiet": all(x.get("warmup_jit_quiet", False) for x in got + got_e),
            "jit_ms_while_measuring": sum(x.get("jit_ms_while_measuring", 0) for x in got),
            "peer_compiles_while_measuring": sum(x.get("peer_compiles_while_measuring", 0) for x in got),
            "gc_while_measuring": sum(x.get("gc_while_measuring", 0) for x in got),
            "event_jit_ms_while_measuring": sum(x.get("jit_ms_while_measuring", 0) for x in got_e)}


def guest_jdks(ours):
    """{provider: sorted Java versions its BenchMain JVMs reported}."""
    jdk = {}
    for k, r in ours.items():
        jdk.setdefault(r.get("transport", "disni"), set()).add(r.get("java", "unrecorded"))
    return {t: sorted(v) for t, v in sorted(jdk.items())}


# issue 28's bandwidth target: DiSNI / perftest >= 0.95 at 64 KiB and 1 MiB (ffm judged alike, beside it)
BW_TARGET = 0.95
BW_TARGET_SIZES = (65536, 1048576)


def size_label(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 \
        else f"{n} B"


def bw_summary(guest):
    """The bandwidth target over every row at 64 KiB and 1 MiB: per provider, MET when each row's median
    ratio is >= 0.95; with the number of rows met and the lowest median."""
    out = []
    rows = [r for r in guest if r["tool"].endswith("_bw") and r["size"] in BW_TARGET_SIZES]
    for who, k in (("DiSNI", "ratio"), ("ffm", "ratio_ffm")):
        meds = [(r[k]["median"], r) for r in rows if r[k]]
        if not meds:
            continue
        worst, wr = min(meds, key=lambda m: m[0])
        met = sum(1 for m, _ in meds if m >= BW_TARGET)
        out.append({"provider": who, "met": met == len(meds), "rows_met": met, "rows": len(meds), "worst": worst,
                    "worst_case": f"{wr['device']} {wr['op']} {size_label(wr['size'])}"})
    return out


def guest_targets(guest):
    """Issue 28: DiSNI / perftest p50 <= 1.10 (latency, spin); bandwidth >= 0.95 at 64 KiB and 1 MiB."""
    res = []
    for r in guest:
        if r["tool"].endswith("_bw"):
            if r["size"] in BW_TARGET_SIZES:
                for who, k in (("DiSNI", "ratio"), ("ffm", "ratio_ffm")):
                    if r[k]:
                        res.append({"target": f"guest {r['device']} {r['op']} {size_label(r['size'])} bandwidth "
                                              f"{who} / perftest >= {BW_TARGET}",
                                    "value": r[k], "met": r[k]["median"] >= BW_TARGET})
        else:
            if r["ratio_p50"]:
                res.append({"target": f"guest {r['device']} {r['op']} {r['size']} B spin p50 DiSNI / perftest <= 1.10",
                            "value": r["ratio_p50"], "met": r["ratio_p50"]["median"] <= 1.10})
            if r["ratio_event_p50"]:
                res.append({"target": f"guest {r['device']} {r['op']} {r['size']} B event p50 DiSNI / perftest -e <= 1.10",
                            "value": r["ratio_event_p50"], "met": r["ratio_event_p50"]["median"] <= 1.10})
    # the ffm provider: within 5 % of perftest at 64 B and 4 KiB (spin), and faster than DiSNI
    for r in guest:
        x = r.get("ffm")
        if not x:
            continue
        if x["ratio_p50"] and r["size"] in (64, 4096):
            res.append({"target": f"guest {r['device']} {r['op']} {r['size']} B spin p50 ffm / perftest <= 1.05",
                        "value": x["ratio_p50"], "met": x["ratio_p50"]["median"] <= 1.05})
        if x["ratio_disni_p50"]:
            res.append({"target": f"guest {r['device']} {r['op']} {r['size']} B spin p50 ffm / DiSNI < 1",
                        "value": x["ratio_disni_p50"], "met": x["ratio_disni_p50"]["median"] < 1})
        if x["ratio_event_disni_p50"]:
            res.append({"target": f"guest {r['device']} {r['op']} {r['size']} B event p50 ffm / DiSNI < 1",
                        "value": x["ratio_event_disni_p50"], "met": x["ratio_event_disni_p50"]["median"] < 1})
    return res


def targets(lat, bw, qps, sizes):
    res = []
    for wait in ("await", "spin"):
        for op in ("send", "write", "read"):
            r = next((x for x in lat if x["op"] == op and x["wait"] == wait and x["size"] == 64), None)
            if r and r["ratio_p50"]:
                s = r["ratio_p50"]
                t = {"target": f"64 B {op} RTT p50 ({wait}) <= 1.10 x {r['floor']}", "value": s,
                     "met": s["median"] <= 1.10}
                sb, tb = med(r.get("soft_busy")), med(r.get("tcp_busy"))
                if sb is not None and tb is not None:
                    t["note"] = f"client JVM {sb:.2f} cores busy, TCP's {tb:.2f}"
                res.append(t)
    big = max(sizes) if sizes else None
    label = (f"{big // 1024} KiB" if big % 1024 == 0 else f"{big} B") if big else ""
    for op in BW_OPS:
        r = next((x for x in bw if x["op"] == op and x["crc"] and x["size"] == big), None)
        if r and r["ratio"]:
            res.append({"target": f"{label} {op} bandwidth, CRC on, >= 0.85 x TCP stream",
                        "value": r["ratio"], "met": r["ratio"]["median"] >= 0.85})
    r = next((x for x in bw if x["op"] == "write-bw" and not x["crc"] and x["size"] == big), None)
    if r and r["ratio"]:
        res.append({"target": f"{label} write-bw bandwidth, CRC off, >= 0.95 x TCP stream",
                    "value": r["ratio"], "met": r["ratio"]["median"] >= 0.95})
    for r in qps:
        if r["ratio_p50"]:
            res.append({"target": f"{r['qps']} QPs 64 B send p50 <= 2 x 1 QP", "value": r["ratio_p50"],
                        "met": r["ratio_p50"]["median"] <= 2.0})
    return res


def f(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)


TOTAL_RUNS = [0]


def sp(s, fmt="{:.2f}"):
    """median (min..max); 'of N runs' when fewer runs than the others gave a figure."""
    if not s:
        return "-"
    short = f", {s['runs']} of {TOTAL_RUNS[0]} runs" if 0 < s["runs"] < TOTAL_RUNS[0] else ""
    if s["runs"] == 1:
        return fmt.format(s["median"]) + (f" (1 of {TOTAL_RUNS[0]} runs)" if short else "")
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}..{fmt.format(s['max'])}{short})"


def med(s):
    return s["median"] if s else None


def md_table(lat, bw, qps, guest, tg, sc, runs, errs, jdks=None):
    """The results as Markdown (also printed)."""
    o = []
    p = o.append
    loads = [r.get("load1") for run in runs for r in run if r.get("load1") is not None]
    ends = sorted({r.get("peer") for run in runs for r in run if r.get("peer")})
    if ends:
        p(f"Server half of each case: {', '.join(ends)}. write = Writes both ways, each side polls the last byte "
          "of its buffer (memory polling, spinning, in either wait mode: ib_write_lat has no event mode), "
          "every Write signaled and its completion polled as ib_write_lat does, the spin calling "
          "CompletionQueue.progress (the soft provider's manual progress); "
          "read = one Read, post to completion; await = CompletionQueue.await / blocking sockets, spin = busy "
          "polling / non-blocking busy retry.")
        p("")
    if lat:
        p(f"Latency, round trip µs (median over {len(runs)} run(s)); ratio soft / TCP: median (min..max) of per-run ratios; "
          "CPU: the client JVM's CPU µs per round trip (all its threads) and, after the slash, the cores it kept busy "
          "(CPU time over wall time): a wait that wins by spinning shows about 1 core")
        p("")
        p("| op | wait | size | soft p50 | soft p99 | soft CPU µs/op / cores | TCP floor | TCP p50 | TCP p99 "
          "| TCP CPU µs/op / cores | ratio p50 | ratio p99 |")
        p("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
        def cpu(r, side):
            c, b = med(r.get(f"{side}_cpu_us")), med(r.get(f"{side}_busy"))
            return "-" if c is None else f"{c:.1f} / {b:.2f}" if b is not None else f"{c:.1f}"
        for r in lat:
            p(f"| {r['op']} | {r['wait']} | {r['size']} | {f(med(r['soft_p50_us']))} | {f(med(r['soft_p99_us']))} | "
              f"{cpu(r, 'soft')} | {r['floor']} | {f(med(r['tcp_p50_us']))} | {f(med(r['tcp_p99_us']))} | "
              f"{cpu(r, 'tcp')} | {sp(r['ratio_p50'])} | {sp(r['ratio_p99'])} |")
        p("")
    if bw:
        p("Bandwidth, MB/s (10^6 B/s), soft (await) against a continuous TCP stream of the same message size")
        p("")
        p("| op | size | CRC | window | soft MB/s | soft msg/s | TCP MB/s | ratio |")
        p("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in bw:
            p(f"| {r['op']} | {r['size']} | {'on' if r['crc'] else 'off'} | {r['window']} | {f(med(r['soft_mb_s']), '{:.0f}')} | "
              f"{f(med(r['soft_msgs_s']), '{:.0f}')} | {f(med(r['tcp_mb_s']), '{:.0f}')} | {sp(r['ratio'])} |")
        p("")
    if qps:
        p("| QPs | 64 B send p50 µs | 1 QP p50 µs | ratio |")
        p("|---:|---:|---:|---:|")
        for r in qps:
            p(f"| {r['qps']} | {f(med(r['p50_us']))} | {f(med(r['one_p50_us']))} | {sp(r['ratio_p50'])} |")
        p("")
    if sc:
        p("System calls per 64 B round trip (`strace -c -f`, both ends, difference of two run lengths)")
        p("")
        p("| case | calls / round trip | main calls |")
        p("|---|---:|---|")
        for tag, v in sorted(sc.items()):
            top = ", ".join(f"{k} {x:.1f}" for k, x in list(v["by_call"].items())[:5])
            p(f"| {tag} | {f(v['per_round_trip'])} | {top} |")
        p("")
    # the DiSNI table: only the cases DiSNI ran (a soft-only or ffm-only guest run has none)
    glat = [r for r in guest if not r["tool"].endswith("_bw") and (r["disni_p50_us"] or r["disni_event_p50_us"])]
    gbw = sorted((r for r in guest if r["tool"].endswith("_bw")), key=lambda r: (r["device"], BW_OPS.index(r["op"]), r["size"]))
    if glat:
        p(f"Guest (qemu TCG, {', '.join(sorted({r['device'] for r in glat}))}): DiSNI provider / perftest, same device, same guest run. "
          "send/write: half round trip as perftest prints it")
        p("")
        p("| dev | tool | size | runs | DiSNI p50 (spin) | perftest p50 | ratio p50 | ratio min | DiSNI p99 | perftest p99 "
          "| warm-up ops, JIT quiet | JIT ms / peer compiles / GCs while measuring | perftest inline "
          "| event runs | DiSNI p50 (await) | perftest -e p50 | ratio p50 (event) |")
        p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|")
        for r in glat:
            inl = ("-" if r["perftest_inline"] is None else "none" if r["perftest_inline"] == 0
                   else f"up to {r['perftest_inline']} B (jwarp: none)")
            p(f"| {r['device']} | {r['tool']} | {r['size']} | {r['runs']} | {f(med(r['disni_p50_us']))} | "
              f"{f(med(r['perftest_p50_us']))} | {sp(r['ratio_p50'])} | {sp(r['ratio_min'])} | "
              f"{f(med(r['disni_p99_us']))} | {f(med(r['perftest_p99_us']))} | "
              + (f"{r['warmup_ops']}, {'yes' if r['warmup_jit_quiet'] else 'NO'} | "
                 f"{r['jit_ms_while_measuring']} / {r['peer_compiles_while_measuring']} / {r['gc_while_measuring']} | "
                 if r["runs"] else "- | - | ") + f"{inl} | "
              + (f"{r['event_runs']} (warm-up {r['event_warmup_ops']}, JIT "
                 f"{'quiet' if r['event_jit_quiet'] else 'NOT quiet'}, {r['event_jit_ms_while_measuring']} ms "
                 f"while measuring) | {f(med(r['disni_event_p50_us']))} | {f(med(r['perftest_event_p50_us']))} | "
                 f"{sp(r['ratio_event_p50'])} |" if r["event_runs"] else
                 ("- (no event mode) | | | |" if r["tool"] == "ib_write_lat" else "| | | |")))
        p("")
    ffm = [r for r in guest if r.get("ffm")]
    if ffm:
        p("Guest, the ffm provider (java.lang.foreign, no JNI) in the same guest run, alternating case by case with "
          "perftest and DiSNI. send/write: half round trip as perftest prints it")
        p("")
        p("| dev | tool | size | runs | ffm p50 (spin) | perftest p50 | DiSNI p50 | ffm / perftest p50 | ffm / perftest min "
          "| ffm / DiSNI p50 | ffm p99 | warm-up ops, JIT quiet | JIT ms / peer compiles / GCs while measuring "
          "| event runs | ffm p50 (await) | perftest -e p50 | ffm / perftest -e p50 | ffm / DiSNI p50 (event) |")
        p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
        for r in ffm:
            x = r["ffm"]
            p(f"| {r['device']} | {r['tool']} | {r['size']} | {x['runs']} | {f(med(x['p50_us']))} | "
              f"{f(med(r['perftest_p50_us']))} | {f(med(r['disni_p50_us']))} | {sp(x['ratio_p50'])} | "
              f"{sp(x['ratio_min'])} | {sp(x['ratio_disni_p50'])} | {f(med(x['p99_us']))} | "
              f"{x['warmup_ops']}, {'yes' if x['jit_quiet'] else 'NO'} | {x['jit_ms_while_measuring']} / "
              f"{x['peer_compiles_while_measuring']} / {x['gc_while_measuring']} | "
              + (f"{x['event_runs']} ({x['event_jit_ms_while_measuring']} ms JIT while measuring) | "
                 f"{f(med(x['event_p50_us']))} | {f(med(r['perftest_event_p50_us']))} | {sp(x['ratio_event_p50'])} | "
                 f"{sp(x['ratio_event_disni_p50'])} |" if x["event_runs"] else "- | | | | |"))
        p("")
    soft = [r for r in guest if r.get("soft")]
    if soft:
        p("Guest, the soft provider (pure Java iWARP over the guest's TCP, two JVMs on one address, MPA CRC off as between two siw ends) against kernel "
          "siw (perftest on the siw device) in the same guest run, alternating case by case: the peer a user would "
          "pick instead. send/write: half round trip as perftest prints it. Reported, no target.")
        p("")
        p("| dev | tool | size | runs | soft p50 (spin) | perftest p50 | soft / perftest p50 | soft min | perftest min "
          "| soft / perftest min | soft p99 | warm-up ops, JIT quiet | event runs | soft p50 (await) | perftest -e p50 "
          "| soft / perftest -e p50 |")
        p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        for r in soft:
            x = r["soft"]
            p(f"| {r['device']} | {r['tool']} | {r['size']} | {x['runs']} | {f(med(x['p50_us']))} | "
              f"{f(med(r['perftest_p50_us']))} | {sp(x['ratio_p50'])} | {f(med(x['min_us']))} | "
              f"{f(med(r['perftest_min_us']))} | {sp(x['ratio_min'])} | {f(med(x['p99_us']))} | "
              f"{x['warmup_ops']}, {'yes' if x['jit_quiet'] else 'NO'} | "
              + (f"{x['event_runs']} | {f(med(x['event_p50_us']))} | {f(med(r['perftest_event_p50_us']))} | "
                 f"{sp(x['ratio_event_p50'])} |" if x["event_runs"] else "- | | | |"))
        p("")
    if gbw:
        p("Guest bandwidth, MB/s (10^6 B/s; perftest's MiB/s converted): perftest ib_*_bw against BenchMain "
          "--perftest-bw on the DiSNI and ffm providers, same device, same guest boot, alternating case by case. "
          "Both: one pass of n operations, first post to last completion, n x size bytes; window = perftest's tx "
          "depth; signaled every = its CQ moderation; Reads in flight = its outstanding reads / the ORD our "
          "connection settled on. Ratios per run, then median (min..max).")
        p("")
        p("| dev | op | size | runs | n | perftest MB/s | DiSNI MB/s | ffm MB/s | DiSNI / perftest | ffm / perftest "
          "| ffm / DiSNI | window (perftest / ours) | signaled every (perftest / ours) | Reads in flight (perftest / ours) "
          "| warm-up ops, JIT quiet (DiSNI; ffm) | JIT ms / peer compiles / GCs while measuring (DiSNI; ffm) |")
        p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---|")
        for r in gbw:
            d, x = r["disni"], r["ffm_bw"]
            ours = d or x or {}
            num = lambda v: "-" if v is None else str(v)
            both = lambda fn: "; ".join(fn(y) if y else "-" for y in (d, x))
            reads = (f"{num(r['perftest_out_reads'])} / {num(ours.get('ord'))}" if r["op"] == "read-bw" else "-")
            p(f"| {r['device']} | {r['op']} | {r['size']} | {r['runs']} | "
              f"{','.join(str(i) for i in r['perftest_iters'] if i is not None) or '-'} | "
              f"{f(med(r['perftest_mb_s']), '{:.1f}')} | {f(med(d['mb_s']) if d else None, '{:.1f}')} | "
              f"{f(med(x['mb_s']) if x else None, '{:.1f}')} | {sp(r['ratio'])} | {sp(r['ratio_ffm'])} | "
              f"{sp(r['ratio_ffm_disni'])} | {num(r['perftest_tx_depth'])} / {num(ours.get('window'))} | "
              f"{num(r['perftest_cq_mod'])} / {num(ours.get('signal_every'))} | {reads} | "
              + both(lambda y: f"{y['warmup_ops']}, {'yes' if y['jit_quiet'] else 'NO'}") + " | "
              + both(lambda y: f"{y['jit_ms_while_measuring']} / {y['peer_compiles_while_measuring']} / "
                               f"{y['gc_while_measuring']}") + " |")
        p("")
        for b in bw_summary(guest):
            p(f"Target: {b['provider']} / perftest bandwidth >= {BW_TARGET} at 64 KiB and 1 MiB (write, send, read): "
              f"**{'MET' if b['met'] else 'MISSED'}** ({b['rows_met']} of {b['rows']} cases; lowest median "
              f"{b['worst']:.2f}, {b['worst_case']})")
        p("")
    if jdks:
        p("JDK of each provider's JVMs: " + "; ".join(f"{t} on Java {', '.join(v)}" for t, v in jdks.items()) + ".")
        p("")
    if tg:
        p("| target | median (min..max) | |")
        p("|---|---:|---|")
        for t in tg:
            note = f" ({t['note']})" if t.get("note") else ""
            p(f"| {t['target']} | {sp(t['value'])} | **{'MET' if t['met'] else 'MISSED'}**{note} |")
        p("")
    if loads:
        p(f"Load average (1 min) seen at the start of the cases: min {min(loads):.1f}, median "
          f"{statistics.median(loads):.1f}, max {max(loads):.1f}.")
    jits = [r for r in lat if r["jit_ms_while_measuring_max"] > 50]
    if jits:
        p("JIT compilation > 50 ms while measuring in: " + ", ".join(f"{r['op']}/{r['wait']}/{r['size']}" for r in jits))
    for e in errs:
        p(f"FAILED case: run {e.get('run')} {e.get('transport')} {e.get('op')} {e.get('size')} B "
          f"{e.get('wait')}: {e.get('error')}")
    return o


def hgrm_points(path):
    pts = []
    for line in path.read_text().splitlines():
        t = line.split()
        if len(t) == 4 and not line.lstrip().startswith("#"):
            try:
                v, pc, _, inv = float(t[0]), float(t[1]), t[2], t[3]
            except ValueError:
                continue
            if inv != "inf":
                pts.append((float(inv), v, pc))
    return pts


def plots(d, lat, guest):
    """latency.png (p50 against size) and percentiles-64B.png (run 1's .hgrm files) with gnuplot."""
    if not shutil.which("gnuplot"):
        print("gnuplot not installed (scripts/setup-guest-deps --bench): no plots", file=sys.stderr)
        return []
    pdir = d / "plot"
    pdir.mkdir(exist_ok=True)
    made = []
    series = {}
    for r in lat:
        if r["soft_p50_us"]:
            series.setdefault(f"soft {r['op']} ({r['wait']})", []).append((r["size"], r["soft_p50_us"]["median"]))
        if r["tcp_p50_us"]:
            name = r["floor"]
            series.setdefault(name, [])
            if all(s != r["size"] for s, _ in series[name]):
                series[name].append((r["size"], r["tcp_p50_us"]["median"]))
    if series:
        cmds = []
        for i, (name, pts) in enumerate(sorted(series.items())):
            dat = pdir / f"lat-{i}.dat"
            dat.write_text("".join(f"{s} {v}\n" for s, v in sorted(pts)))
            dash = "dt 2" if name.startswith("tcp") else "dt 1"
            cmds.append(f"'{dat}' using 1:2 with linespoints {dash} lw 2 title '{name}'")
        gp = pdir / "latency.gp"
        gp.write_text("set terminal pngcairo size 1000,620 font 'sans,10'\n"
                      f"set output '{d / 'latency.png'}'\n"
                      "set title 'Round trip p50 against message size (host loopback; soft solid, TCP floors dashed)'\n"
                      "set logscale xy\nset xlabel 'message size (bytes)'\nset ylabel 'µs'\nset key outside right\n"
                      "set grid\nplot " + ", \\\n     ".join(cmds) + "\n")
        if subprocess.run(["gnuplot", str(gp)], capture_output=True).returncode == 0:
            made.append("latency.png")
    files = sorted((d / "hgrm").glob("*-64B-run1.hgrm")) if (d / "hgrm").exists() else []
    files = [x for x in files if "qp-" not in x.name]
    if files:
        cmds = []
        for i, fpath in enumerate(files):
            pts = hgrm_points(fpath)
            if not pts:
                continue
            dat = pdir / f"pct-{i}.dat"
            dat.write_text("".join(f"{inv} {v}\n" for inv, v, _ in pts))
            name = fpath.name.replace("-64B-run1.hgrm", "")
            dash = "dt 2" if name.startswith("tcp") else "dt 1"
            cmds.append(f"'{dat}' using 1:2 with lines {dash} lw 2 title '{name}'")
        gp = pdir / "percentiles.gp"
        gp.write_text("set terminal pngcairo size 1000,620 font 'sans,10'\n"
                      f"set output '{d / 'percentiles-64B.png'}'\n"
                      "set title '64 B round trip by percentile (run 1; HdrHistogram .hgrm)'\n"
                      "set logscale xy\nset xlabel 'percentile'\nset ylabel 'µs'\nset key outside right\nset grid\n"
                      "set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, '99.999%%' 100000)\n"
                      "plot " + ", \\\n     ".join(cmds) + "\n")
        if subprocess.run(["gnuplot", str(gp)], capture_output=True).returncode == 0:
            made.append("percentiles-64B.png")
    return made


def main(argv):
    if len(argv) != 2:
        print("usage: bench-report.py DIR", file=sys.stderr)
        return 2
    d = Path(argv[1])
    runs = load_runs(d)
    lat, bw, qps = host_rows(runs)
    sizes = sorted({r["size"] for run in runs for r in run if r.get("transport") == "soft" and r.get("qps", 1) == 1})
    sc = load_strace(d)
    ours = load_benchmain(d / "guest-benchmain.jsonl")
    guest = guest_rows(load_perftest(d / "guest-perftest.txt"), ours)
    jdks = guest_jdks(ours)
    TOTAL_RUNS[0] = len(runs)
    tg = targets(lat, bw, qps, sizes) + guest_targets(guest)
    errs = errors(runs)
    lines = md_table(lat, bw, qps, guest, tg, sc, runs, errs, jdks)
    print("\n".join(lines))
    (d / "results.md").write_text("\n".join(lines) + "\n")
    (d / "summary.json").write_text(json.dumps({"host": {"runs": len(runs), "latency": lat, "bandwidth": bw,
                                                         "qps": qps, "syscalls": sc, "failed": errs},
                                                "guest": guest, "guest_jdks": jdks, "targets": tg}, indent=2))
    made = ["summary.json", "results.md"] + plots(d, lat, guest)
    print(f"wrote {', '.join(str(d / m) for m in made)}", file=sys.stderr)
    if errs:
        print(f"bench-report: {len(errs)} case(s) FAILED (see results.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
