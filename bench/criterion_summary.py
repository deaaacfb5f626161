"""Collects criterion's median estimates into a CSV and draws decode time against name length.

Reads target/criterion/<group>/<bench>/new/estimates.json (criterion's own output), writes one
CSV row per benchmark (median and its 95% interval, in ns, plus throughput where criterion
measured bytes), and an SVG line chart of the `interest_view_by_name_length` group. Standard
library only, so it runs on any machine that runs the benchmarks.
"""
import argparse
import csv
import json
import pathlib
import platform
import time


def load(root: pathlib.Path):
    rows = []
    for est in sorted(root.glob("*/*/new/estimates.json")):
        bench_dir = est.parent.parent
        group = bench_dir.parent.name
        median = json.loads(est.read_text())["median"]
        bench = json.loads((est.parent / "benchmark.json").read_text())
        throughput = bench.get("throughput") or {}
        nbytes = throughput.get("Bytes")
        rows.append({
            "group": group,
            "bench": bench_dir.name,
            "median_ns": round(median["point_estimate"], 2),
            "ci_low_ns": round(median["confidence_interval"]["lower_bound"], 2),
            "ci_high_ns": round(median["confidence_interval"]["upper_bound"], 2),
            "gbytes_per_s": round(nbytes / median["point_estimate"], 3) if nbytes else "",
        })
    return rows


def svg_chart(points, title, path: pathlib.Path):
    width, height, pad = 560, 340, 60
    xs = [p[0] for p in points]
    ymax = max(p[1] for p in points) * 1.15
    def sx(x):
        return pad + (x - min(xs)) / (max(xs) - min(xs)) * (width - 2 * pad)
    def sy(y):
        return height - pad - y / ymax * (height - 2 * pad)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="14">{title}</text>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 15}" text-anchor="middle">name components</text>',
        f'<text x="18" y="{height / 2}" text-anchor="middle" transform="rotate(-90 18 {height / 2})">median ns</text>',
    ]
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = ymax * frac
        parts.append(f'<text x="{pad - 6}" y="{sy(y) + 4}" text-anchor="end">{y:.0f}</text>')
        parts.append(f'<line x1="{pad}" y1="{sy(y)}" x2="{width - pad}" y2="{sy(y)}" stroke="#ddd"/>')
    path_d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(points))
    parts.append(f'<path d="{path_d}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for x, y in points:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="#1f77b4"/>')
        parts.append(f'<text x="{sx(x):.1f}" y="{sy(y) - 10:.1f}" text-anchor="middle">{y:.0f}</text>')
        parts.append(f'<text x="{sx(x):.1f}" y="{height - pad + 16}" text-anchor="middle">{x}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--criterion", required=True, type=pathlib.Path)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--csv", required=True, type=pathlib.Path)
    ap.add_argument("--svg", required=True, type=pathlib.Path)
    args = ap.parse_args()

    rows = load(args.criterion)
    if not rows:
        raise SystemExit(f"no criterion results under {args.criterion}")
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with args.csv.open("w", newline="") as f:
        f.write(f"# commit {args.commit}; {when}; {platform.machine()} {platform.node()}\n")
        f.write(f"# command: {args.command}\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        extra = f"  {r['gbytes_per_s']} GB/s" if r["gbytes_per_s"] else ""
        print(f"{r['group']}/{r['bench']}: median {r['median_ns']} ns{extra}")
    by_len = sorted(
        (int(r["bench"]), r["median_ns"]) for r in rows if r["group"] == "interest_view_by_name_length"
    )
    if len(by_len) >= 2:
        svg_chart(by_len, f"Interest view decode vs name length ({args.commit})", args.svg)
        print(f"wrote {args.csv} and {args.svg}")
    else:
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
