"""Draws a horizontal bar chart (SVG) of exchanges/s per scenario from a bench/fwd.sh CSV.

Standard library only. Usage: python3 bench/bars.py RESULTS.csv OUT.svg TITLE
"""
import csv
import sys


def main():
    src, dst, title = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(src) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    if not rows:
        raise SystemExit(f"no rows in {src}")
    values = [(r["label"], float(r["exchanges_per_sec"])) for r in rows]
    top = max(v for _, v in values) * 1.15
    bar_h, gap, left, width = 22, 8, 130, 620
    height = 60 + len(values) * (bar_h + gap)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{(left + width) / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
    ]
    for i, (label, v) in enumerate(values):
        y = 40 + i * (bar_h + gap)
        w = v / top * width
        out.append(f'<text x="{left - 8}" y="{y + bar_h * 0.7}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#1f77b4"/>')
        out.append(f'<text x="{left + w + 6:.1f}" y="{y + bar_h * 0.7}">{v / 1e3:.0f}k/s</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
