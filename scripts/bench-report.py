#!/usr/bin/env python3
"""Turns JMH JSON results (one file per run) into a ratio table, a JSON summary and an SVG plot.

Each benchmark result is paired with its baseline measured in the same run; ratios are ours /
baseline (lower is better for latency, higher for bandwidth). Several runs give min/median/max
of the ratio so the machine's noise is visible. Only the standard library is used.
"""
import json
import statistics
import sys
from pathlib import Path

# (ours, baseline, kind) with kind 'latency' (score is time/op) or 'bandwidth' (bytes/s derived).
PAIRS = [
    ("SoftProviderBenchmark.sendRtt", "TcpBaselineBenchmark.rtt", "latency"),
    ("SoftProviderBenchmark.writeRtt", "TcpBaselineBenchmark.rtt", "latency"),
    ("SoftProviderBenchmark.readRtt", "TcpBaselineBenchmark.rtt", "latency"),
    ("SoftProviderBenchmark.writeBandwidth", "TcpBaselineBenchmark.stream", "bandwidth"),
]


def load(path):
    out = {}
    for r in json.loads(Path(path).read_text()):
        name = r["benchmark"].rsplit(".", 2)
        key = name[-2] + "." + name[-1]
        size = r.get("params", {}).get("size", "-")
        pm = r["primaryMetric"]
        pct = pm.get("scorePercentiles", {})
        out[(key, size)] = {
            "score": pm["score"], "unit": pm["scoreUnit"],
            "p50": pct.get("50.0"), "p99": pct.get("99.0"), "p999": pct.get("99.9"),
        }
    return out


def main(argv):
    if len(argv) < 3:
        print("usage: bench-report.py OUT_PREFIX RESULT.json [RESULT.json ...]", file=sys.stderr)
        return 2
    prefix, files = argv[1], argv[2:]
    runs = [load(f) for f in files]
    rows = []
    for ours, base, kind in PAIRS:
        sizes = sorted({s for r in runs for (k, s) in r if k == ours}, key=lambda s: int(s) if s.isdigit() else 0)
        for size in sizes:
            ratios, o50, b50 = [], [], []
            for r in runs:
                o, b = r.get((ours, size)), r.get((base, size))
                if not o or not b:
                    continue
                ratio = o["score"] / b["score"]
                if kind == "bandwidth":
                    ratio = 1.0 / ratio  # time per op inverted: bandwidth ratio
                ratios.append(ratio)
                o50.append(o["p50"] or o["score"])
                b50.append(b["p50"] or b["score"])
            if ratios:
                rows.append({
                    "benchmark": ours, "baseline": base, "size": size, "kind": kind, "runs": len(ratios),
                    "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
                    "ours_p50_us": statistics.median(o50), "base_p50_us": statistics.median(b50),
                    "ours_p99_us": statistics.median([r[(ours, size)]["p99"] or 0 for r in runs if (ours, size) in r]),
                    "ours_p999_us": statistics.median([r[(ours, size)]["p999"] or 0 for r in runs if (ours, size) in r]),
                })
    print(f"{'benchmark':38} {'size':>8} {'ratio med':>9} {'min':>6} {'max':>6} {'p50 us':>9} {'base p50':>9} {'p99 us':>9} {'p99.9 us':>9}")
    for r in rows:
        label = "bw ratio" if r["kind"] == "bandwidth" else ""
        print(f"{r['benchmark']:38} {r['size']:>8} {r['ratio_median']:9.3f} {r['ratio_min']:6.3f} {r['ratio_max']:6.3f}"
              f" {r['ours_p50_us']:9.1f} {r['base_p50_us']:9.1f} {r['ours_p99_us']:9.1f} {r['ours_p999_us']:9.1f} {label}")
    Path(prefix + ".json").write_text(json.dumps(rows, indent=2))
    Path(prefix + ".svg").write_text(svg(rows))
    print(f"wrote {prefix}.json and {prefix}.svg", file=sys.stderr)
    return 0


def svg(rows):
    lat = [r for r in rows if r["kind"] == "latency"]
    w, h, pad = 720, 360, 60
    bars = []
    if lat:
        top = max(max(r["ours_p50_us"], r["base_p50_us"]) for r in lat) * 1.15 or 1
        bw = (w - 2 * pad) / (len(lat) * 3)
        for i, r in enumerate(lat):
            x = pad + i * 3 * bw
            for j, (v, color) in enumerate(((r["ours_p50_us"], "#1f77b4"), (r["base_p50_us"], "#aaaaaa"))):
                bh = (h - 2 * pad) * v / top
                bars.append(f'<rect x="{x + j * bw:.1f}" y="{h - pad - bh:.1f}" width="{bw * 0.9:.1f}" height="{bh:.1f}" fill="{color}"/>')
            name = r["benchmark"].split(".")[-1] + " " + str(r["size"]) + "B"
            bars.append(f'<text x="{x:.1f}" y="{h - pad + 14}" font-size="10">{name}</text>')
            bars.append(f'<text x="{x:.1f}" y="{h - pad + 26}" font-size="10">x{r["ratio_median"]:.2f}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
            f'<rect width="100%" height="100%" fill="white"/>'
            f'<text x="{pad}" y="24" font-size="14">p50 latency (us): jwarp (blue) vs baseline in the same run (grey)</text>'
            f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>'
            + "".join(bars) + "</svg>")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
