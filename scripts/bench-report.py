#!/usr/bin/env python3
"""Ratio table, JSON summary and latency plot for scripts/bench.

Reads from DIR (argument 1):
  host-run-N.json        JMH JSON of host run N (soft provider and TCP baseline in the same run)
  guest-perftest.txt     perftest client reports, each after a line '== TOOL DEV SIZE'
  guest-benchmain.jsonl  BenchMain lines (DiSNI provider, same guest run)
Writes DIR/summary.json, DIR/latency.svg (+ latency.png when rsvg-convert or ImageMagick's
convert exists) and prints the table.

Host ratios are ours / baseline per run (latency: lower is better; bandwidth: higher is better);
the table shows the median over runs and [min..max]. Guest ratios are DiSNI / perftest on the same
device in the same guest run; ib_send_lat and ib_write_lat report half a round trip, so the
DiSNI round trip is halved for those. Standard library only.
"""
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

PCT = {"p50": "50.0", "p99": "99.0", "p999": "99.9"}
TARGETS = {
    "rtt64": 1.10,   # soft 64 B send RTT p50 <= 1.10 x raw NIO TCP ping-pong
    "disni": 1.10,   # DiSNI <= 1.10 x perftest (send, write, read) on siw0
    "bw": 0.85,      # soft 1 MiB write bandwidth >= 0.85 x raw TCP stream
}


def med(xs):
    return statistics.median(xs) if xs else None


def short(name):
    parts = name.rsplit(".", 2)
    return parts[-2] + "." + parts[-1]


def load_host(d):
    runs = []
    for f in sorted(d.glob("host-run-*.json"), key=lambda p: int(re.findall(r"\d+", p.name)[0])):
        res = {}
        for r in json.loads(f.read_text()):
            pm = r["primaryMetric"]
            params = r.get("params", {})
            key = (short(r["benchmark"]),) + tuple(sorted(params.items()))
            pct = pm.get("scorePercentiles", {})
            res[key] = {"mean": pm["score"], "unit": pm["scoreUnit"],
                        **{k: pct.get(v) for k, v in PCT.items()}, "params": params}
        runs.append(res)
    return runs


def find(run, bench, **params):
    for key, v in run.items():
        if key[0] != bench:
            continue
        p = v["params"]
        if all(str(p.get(k)) == str(val) for k, val in params.items()):
            return v
    return None


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": med(xs), "min": min(xs), "max": max(xs), "runs": len(xs)}


def host_rows(runs):
    lat, bw, scale, conn = [], [], [], []
    if not runs:
        return lat, bw, scale, conn
    keys = {k for r in runs for k in r}
    combos = sorted({(k[0], v["params"].get("size"), v["params"].get("wait"))
                     for r in runs for k, v in r.items() if k[0].startswith("ProviderLatencyBenchmark")},
                    key=lambda c: (c[0], c[2] or "", int(c[1])))
    for bench, size, wait in combos:
        row = {"benchmark": bench, "baseline": "TcpBaselineBenchmark.rtt", "size": int(size), "wait": wait}
        for stat in ("p50", "p99", "p999", "mean"):
            ours = [find(r, bench, size=size, wait=wait) for r in runs]
            base = [find(r, "TcpBaselineBenchmark.rtt", size=size) for r in runs]
            row["ours_" + stat + "_us"] = spread([o[stat] for o in ours if o])
            row["base_" + stat + "_us"] = spread([b[stat] for b in base if b])
            row["ratio_" + stat] = spread([o[stat] / b[stat] for o, b in zip(ours, base)
                                           if o and b and o[stat] and b[stat]])
        lat.append(row)
    for window in sorted({v["params"].get("window") for r in runs for k, v in r.items()
                          if k[0] == "ProviderBandwidthBenchmark.writeBandwidth"}, key=int):
        ours = [find(r, "ProviderBandwidthBenchmark.writeBandwidth", window=window) for r in runs]
        base = [find(r, "TcpBaselineBenchmark.stream", size=1048576) for r in runs]
        size = int(next(o for o in ours if o)["params"]["size"])
        mbps = lambda v: size / v["mean"]  # bytes per us = MB/s (10^6)
        bw.append({"benchmark": "ProviderBandwidthBenchmark.writeBandwidth", "window": int(window), "size": size,
                   "baseline": "TcpBaselineBenchmark.stream",
                   "ours_mb_s": spread([mbps(o) for o in ours if o]),
                   "base_mb_s": spread([mbps(b) for b in base if b]),
                   "ratio": spread([mbps(o) / mbps(b) for o, b in zip(ours, base) if o and b])})
    qps_set = sorted({int(v["params"]["qps"]) for r in runs for k, v in r.items()
                      if k[0] == "ManyQpBenchmark.rttRoundRobin"})
    for q in qps_set:
        ours = [find(r, "ManyQpBenchmark.rttRoundRobin", qps=q) for r in runs]
        one = [find(r, "ManyQpBenchmark.rttRoundRobin", qps=qps_set[0]) for r in runs]
        scale.append({"qps": q, **{stat + "_us": spread([o[stat] for o in ours if o]) for stat in ("p50", "p99", "p999")},
                      "p50_vs_fewest": spread([o["p50"] / b["p50"] for o, b in zip(ours, one) if o and b])})
    c = [find(r, "ConnectionSetupBenchmark.connectAndClose") for r in runs]
    if any(c):
        conn.append({"connections_per_s": spread([1e6 / v["mean"] for v in c if v]),
                     "p50_us": spread([v["p50"] for v in c if v]), "p99_us": spread([v["p99"] for v in c if v])})
    return lat, bw, scale, conn


PERF_BW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def load_perftest(path):
    """{(tool, dev, size): {...}} from perftest client reports."""
    out = {}
    if not path.exists():
        return out
    cur = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("== "):
            tool, dev, size = line[3:].split()
            cur = (tool, dev, int(size))
            continue
        if cur is None:
            continue
        t = line.split()
        if cur[0].endswith("_lat") and len(t) == 9 and t[0] == str(cur[2]) and t[1].isdigit():
            # bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9 (t_stdev may be -nan)
            num = lambda x: float(x) if re.fullmatch(r"[\d.]+", x) else None
            out[cur] = {"min": num(t[2]), "p50": num(t[4]), "mean": num(t[5]), "p99": num(t[7]), "p999": num(t[8])}
            continue
        m = PERF_BW.match(line)
        if m and cur[0].endswith("_bw"):
            # perftest's MB/sec is 2^20 bytes per second; convert to 10^6.
            out[cur] = {"mb_s": float(m[4]) * 1.048576}
    return out


def load_benchmain(path):
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            out[(r["op"], r["label"], int(r["size"]))] = r
    return out


# (our op, perftest tool, halve our RTT?)
GUEST_PAIRS = [("send", "ib_send_lat", True), ("writepoll", "ib_write_lat", True), ("read", "ib_read_lat", False)]


def guest_rows(perf, ours):
    rows = []
    keys = sorted({(tool, dev, size) for (tool, dev, size) in perf}, key=lambda k: (k[1], k[0], k[2]))
    for tool, dev, size in keys:
        if tool.endswith("_bw"):
            o = ours.get(("bw", dev, size))
            p = perf[(tool, dev, size)]
            rows.append({"device": dev, "op": "bw", "tool": tool, "size": size, "perftest_mb_s": p["mb_s"],
                         "disni_mb_s": o["mb_per_s"] if o else None,
                         "ratio": (o["mb_per_s"] / p["mb_s"]) if o and p["mb_s"] else None})
            continue
        op, half = next(((a, h) for a, t, h in GUEST_PAIRS if t == tool), (None, False))
        o = ours.get((op, dev, size))
        p = perf[(tool, dev, size)]
        row = {"device": dev, "op": op, "tool": tool, "size": size, "half_rtt": half}
        for stat in ("min", "p50", "p99", "p999"):
            row["perftest_" + stat + "_us"] = p[stat]
            v = o["rtt_" + stat + "_us"] / (2 if half else 1) if o else None
            row["disni_" + stat + "_us"] = v
            row["ratio_" + stat] = v / p[stat] if v is not None and p[stat] else None
        rows.append(row)
    return rows


def f(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)


def sp(s, fmt="{:.2f}"):
    if not s:
        return "-"
    if s["runs"] == 1:
        return fmt.format(s["median"])
    return f"{fmt.format(s['median'])} [{fmt.format(s['min'])}..{fmt.format(s['max'])}]"


def table(lat, bw, scale, conn, guest, runs):
    out = []
    p = out.append
    if lat:
        p(f"Host: soft provider / raw NIO TCP over loopback, {len(runs)} run(s); ratio median [min..max] over runs")
        p(f"{'op':<14}{'wait':<6}{'size':>8} | {'soft p50':>9}{'p99':>9}{'p99.9':>9} | {'tcp p50':>8}{'p99':>8}{'p99.9':>9}"
          f" | {'ratio p50':>22}{'ratio p99':>24}{'ratio p99.9':>26}")
        for r in lat:
            o = lambda s: f(r["ours_" + s + "_us"]["median"] if r["ours_" + s + "_us"] else None)
            b = lambda s: f(r["base_" + s + "_us"]["median"] if r["base_" + s + "_us"] else None)
            p(f"{r['benchmark'].split('.')[-1]:<14}{r['wait'] or '':<6}{r['size']:>8} | {o('p50'):>9}{o('p99'):>9}{o('p999'):>9}"
              f" | {b('p50'):>8}{b('p99'):>8}{b('p999'):>9} | {sp(r['ratio_p50']):>22}{sp(r['ratio_p99']):>24}"
              f"{sp(r['ratio_p999']):>26}")
        p("(µs, round trip; read = one RDMA Read vs one TCP ping-pong of the same size)")
    if bw:
        p("")
        p(f"{'bandwidth 1 MiB':<24}{'soft MB/s':>22}{'tcp MB/s':>22}{'ratio':>22}")
        for r in bw:
            p(f"{'write window=' + str(r['window']):<24}{sp(r['ours_mb_s'], '{:.0f}'):>22}{sp(r['base_mb_s'], '{:.0f}'):>22}"
              f"{sp(r['ratio']):>22}")
        p("(MB = 10^6 B; tcp = send 1 MiB then wait for an 8-byte ack)")
    if scale:
        p("")
        p(f"{'QPs active':<12}{'p50 µs':>24}{'p99 µs':>26}{'p99.9 µs':>28}{'p50 / fewest':>22}")
        for r in scale:
            p(f"{r['qps']:<12}{sp(r['p50_us'], '{:.1f}'):>24}{sp(r['p99_us'], '{:.0f}'):>26}{sp(r['p999_us'], '{:.0f}'):>28}"
              f"{sp(r['p50_vs_fewest']):>22}")
    for c in conn:
        p(f"connection setup: {sp(c['connections_per_s'], '{:.0f}')} connections/s (connect + close), "
          f"p50 {sp(c['p50_us'], '{:.0f}')} µs, p99 {sp(c['p99_us'], '{:.0f}')} µs")
    if guest:
        p("")
        p("Guest (qemu TCG): DiSNI provider / perftest, same device, same guest run")
        p(f"{'dev':<6}{'tool':<14}{'size':>8} | {'disni min':>10}{'p50':>9}{'p99':>9}{'p99.9':>9} | {'perf min':>9}{'p50':>9}"
          f"{'p99':>9}{'p99.9':>9} | {'ratio min':>10}{'p50':>7}{'p99':>7}{'p99.9':>7}")
        for r in guest:
            if r["op"] == "bw":
                p(f"{r['device']:<6}{r['tool']:<14}{r['size']:>8} | {f(r['disni_mb_s'], '{:.0f}'):>10} MB/s{'':>14}"
                  f"{'':>9}| {f(r['perftest_mb_s'], '{:.0f}'):>9} MB/s{'':>22}| {f(r['ratio'], '{:.2f}'):>10}")
                continue
            p(f"{r['device']:<6}{r['tool']:<14}{r['size']:>8} | {f(r['disni_min_us']):>10}{f(r['disni_p50_us']):>9}"
              f"{f(r['disni_p99_us']):>9}{f(r['disni_p999_us']):>9} | {f(r['perftest_min_us']):>9}{f(r['perftest_p50_us']):>9}"
              f"{f(r['perftest_p99_us']):>9}{f(r['perftest_p999_us']):>9} | {f(r['ratio_min'], '{:.2f}'):>10}"
              f"{f(r['ratio_p50'], '{:.2f}'):>7}{f(r['ratio_p99'], '{:.2f}'):>7}{f(r['ratio_p999'], '{:.2f}'):>7}")
        p("(µs; send/write: half round trip as perftest prints it, perftest p50 = t_typical; min = t_min; "
          "DiSNI column '-' = provider not usable in that run)")
    return out


def targets(lat, bw, guest):
    res = []
    r64 = next((r for r in lat if r["benchmark"].endswith("sendRtt") and r["size"] == 64 and r["wait"] == "await"), None)
    if r64 and r64["ratio_p50"]:
        v = r64["ratio_p50"]["median"]
        res.append({"target": "soft 64 B send RTT p50 <= 1.10 x TCP", "value": v, "met": v <= TARGETS["rtt64"]})
    b = next((r for r in bw if r["window"] == max(x["window"] for x in bw)), None) if bw else None
    if b and b["ratio"]:
        v = b["ratio"]["median"]
        res.append({"target": f"soft 1 MiB write bandwidth (window {b['window']}) >= 0.85 x TCP", "value": v,
                    "met": v >= TARGETS["bw"]})
    for op in ("send", "writepoll", "read"):
        g = [r for r in guest if r["device"] == "siw0" and r["op"] == op and r["ratio_p50"] is not None]
        if g:
            worst = max(r["ratio_p50"] for r in g)
            res.append({"target": f"DiSNI {op} p50 <= 1.10 x perftest on siw0 (worst size)", "value": worst,
                        "met": worst <= TARGETS["disni"]})
        elif any(r["device"] == "siw0" and r["op"] == op for r in guest):
            res.append({"target": f"DiSNI {op} <= 1.10 x perftest on siw0", "value": None, "met": None})
    return res


def noise(runs):
    out = {}
    for size in (64, 4096):
        xs = [find(r, "TcpBaselineBenchmark.rtt", size=size) for r in runs]
        xs = [x["p50"] for x in xs if x]
        if xs:
            out[f"tcp_rtt_{size}B_p50_us"] = spread(xs)
    return out


def svg(lat, guest):
    """Log-log p50 latency vs size: soft ops (solid) with p99 (dashed), TCP baseline; guest panel."""
    panels = []
    series = {}
    for r in lat:
        name = r["benchmark"].split(".")[-1] + ("" if r["wait"] == "await" else " " + r["wait"])
        for stat in ("p50", "p99"):
            if r["ours_" + stat + "_us"]:
                series.setdefault((name, stat), []).append((r["size"], r["ours_" + stat + "_us"]["median"]))
            if r["base_" + stat + "_us"]:
                series.setdefault(("tcp rtt", stat), {})
                if isinstance(series[("tcp rtt", stat)], dict):
                    series[("tcp rtt", stat)][r["size"]] = r["base_" + stat + "_us"]["median"]
    for k, v in list(series.items()):
        if isinstance(v, dict):
            series[k] = sorted(v.items())
    if series:
        panels.append(("Host loopback: soft provider vs raw NIO TCP (p50 solid, p99 dashed)", series))
    gs = {}
    for r in guest:
        if r["op"] == "bw":
            continue
        name = f"{r['device']} {r['tool']}"
        gs.setdefault((name + " perftest", "p50"), []).append((r["size"], r["perftest_p50_us"]))
        if r["disni_p50_us"] is not None:
            gs.setdefault((name + " disni", "p50"), []).append((r["size"], r["disni_p50_us"]))
    if gs:
        panels.append(("Guest (TCG): DiSNI provider vs perftest, p50", gs))
    W, H, pad = 900, 380, 70
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"]
    parts = []
    import math
    for pi, (title, ser) in enumerate(panels):
        y0 = pi * H
        pts = [pt for v in ser.values() for pt in v if pt[1]]
        if not pts:
            continue
        xs = [math.log10(max(1, x)) for x, _ in pts]
        ys = [math.log10(y) for _, y in pts]
        xmin, xmax = min(xs), max(xs) + 1e-9
        ymin, ymax = math.floor(min(ys)), math.ceil(max(ys)) + 1e-9
        X = lambda x: pad + (math.log10(max(1, x)) - xmin) / (xmax - xmin or 1) * (W - 2 * pad - 180)
        Y = lambda y: y0 + H - pad - (math.log10(y) - ymin) / (ymax - ymin or 1) * (H - 2 * pad)
        parts.append(f'<text x="{pad}" y="{y0 + 28}" font-size="15" font-family="sans-serif">{title}</text>')
        parts.append(f'<line x1="{pad}" y1="{Y(10 ** ymin):.1f}" x2="{W - pad - 180}" y2="{Y(10 ** ymin):.1f}" stroke="black"/>')
        parts.append(f'<line x1="{pad}" y1="{Y(10 ** ymin):.1f}" x2="{pad}" y2="{Y(10 ** ymax):.1f}" stroke="black"/>')
        for e in range(int(ymin), int(round(ymax)) + 1):
            yy = Y(10 ** e)
            parts.append(f'<line x1="{pad}" y1="{yy:.1f}" x2="{W - pad - 180}" y2="{yy:.1f}" stroke="#ddd"/>')
            parts.append(f'<text x="{pad - 8}" y="{yy + 4:.1f}" font-size="11" text-anchor="end" font-family="sans-serif">{10 ** e:g} µs</text>')
        for x in sorted({x for x, _ in pts}):
            parts.append(f'<text x="{X(x):.1f}" y="{Y(10 ** ymin) + 16:.1f}" font-size="11" text-anchor="middle" font-family="sans-serif">{x if x < 1024 else str(x // 1024) + "K"}</text>')
        parts.append(f'<text x="{(W - 180) / 2:.0f}" y="{Y(10 ** ymin) + 34:.1f}" font-size="11" font-family="sans-serif">message size (bytes)</text>')
        names = sorted({k[0] for k in ser})
        for i, name in enumerate(names):
            c = colors[i % len(colors)]
            for stat, dash in (("p50", ""), ("p99", ' stroke-dasharray="4,3"')):
                v = [(x, y) for x, y in sorted(ser.get((name, stat), [])) if y]
                if not v:
                    continue
                d = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in v)
                parts.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
                for x, y in v:
                    parts.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="2.5" fill="{c}"/>')
            ly = y0 + pad + i * 18
            parts.append(f'<rect x="{W - pad - 160}" y="{ly - 9}" width="12" height="12" fill="{c}"/>')
            parts.append(f'<text x="{W - pad - 142}" y="{ly + 1}" font-size="12" font-family="sans-serif">{name}</text>')
    h = H * max(1, len(panels))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}">'
            f'<rect width="100%" height="100%" fill="white"/>' + "".join(parts) + "</svg>\n")


def main(argv):
    if len(argv) != 2:
        print("usage: bench-report.py DIR", file=sys.stderr)
        return 2
    d = Path(argv[1])
    runs = load_host(d)
    lat, bw, scale, conn = host_rows(runs)
    guest = guest_rows(load_perftest(d / "guest-perftest.txt"), load_benchmain(d / "guest-benchmain.jsonl"))
    lines = table(lat, bw, scale, conn, guest, runs)
    tg = targets(lat, bw, guest)
    nz = noise(runs)
    lines.append("")
    for t in tg:
        state = "pending" if t["met"] is None else ("MET" if t["met"] else "MISSED")
        lines.append(f"target: {t['target']}: {f(t['value'], '{:.2f}')} -> {state}")
    for k, v in nz.items():
        lines.append(f"noise: {k} over runs: min {v['min']:.1f} / median {v['median']:.1f} / max {v['max']:.1f}")
    print("\n".join(lines))
    (d / "summary.json").write_text(json.dumps({"host": {"latency": lat, "bandwidth": bw, "qps": scale,
                                                         "connections": conn, "runs": len(runs), "noise": nz},
                                                "guest": guest, "targets": tg}, indent=2))
    (d / "latency.svg").write_text(svg(lat, guest))
    made = ["summary.json", "latency.svg"]
    conv = None
    if shutil.which("rsvg-convert"):
        conv = ["rsvg-convert", "-o", str(d / "latency.png"), str(d / "latency.svg")]
    elif shutil.which("convert"):
        conv = ["convert", str(d / "latency.svg"), str(d / "latency.png")]
    if conv and subprocess.run(conv, capture_output=True).returncode == 0:
        made.append("latency.png")
    print(f"wrote {', '.join(str(d / m) for m in made)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
