#!/usr/bin/env python3
"""Draws issue 23's performance targets as an SVG bar chart: for each target,
the figure before the round and after it, as a fraction of the target (1.0 is
the target; lower is better), so measures in instructions, MiB and ratios sit
on one axis.

    python3 bench/plot_targets.py                  # writes docs/img/issue-23-targets.svg
    python3 bench/plot_targets.py --out FILE.svg

The figures are the ones docs/benchmarks.md reports ("Against issue 23's
targets"); edit FIGURES when that table changes. No plotting library is
needed (plain SVG), so it runs on a fresh machine.
"""
import argparse
import html
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, before, after, target, unit, floor); "lower is better" for every
# row. For the validation ratios (higher is better) the figure drawn is
# target / ratio, and `floor` is the I/O floor's own figure (bench/floor's
# `floor-validate`: the same system calls, nothing parsed), drawn as a tick no
# program making those calls gets below on this machine.
FIGURES = [
    ("list, 10,000 skills (instructions)", 889e6, 448.1e6, 587e6, "M instr.", None),
    ("catalog, no budget (instructions per render)", 14.5e6, 7.20e6, 7.6e6, "M instr.", None),
    ("100,000 skills, peak RSS (MiB)", 149.0, 66.0, 80.0, "MiB", None),
    ("100,000 skills, time / I/O floor", 2.38, 0.97, 1.5, "x", None),
    ("token budget, start cost (ms)", 166.0, 6.5, 20.0, "ms", None),
    ("validate -r, whole process (60x skills-ref)", 60 / 22, 60 / 32, 1.0, "target/ratio", 60 / 45),
    ("validation in-process with lints (100x)", 100 / 42, 100 / 49, 1.0, "target/ratio", 100 / 65),
]

WIDTH, ROW, LEFT, RIGHT, TOP = 900, 46, 330, 40, 60


def bar(x, y, w, h, colour, title):
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 1):.1f}" height="{h}" '
            f'fill="{colour}"><title>{html.escape(title)}</title></rect>')


def draw():
    scale_max = max(max(b / t, a / t) for _, b, a, t, _, _ in FIGURES) * 1.05
    plot_w = WIDTH - LEFT - RIGHT
    height = TOP + ROW * len(FIGURES) + 50
    x_of = lambda v: LEFT + plot_w * v / scale_max  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">'
           'Issue 23: each figure as a fraction of its target (1.0 = target; lower is better)</text>',
           f'<rect x="{LEFT}" y="32" width="12" height="10" fill="#bbbbbb"/>'
           f'<text x="{LEFT + 16}" y="41">before the round</text>',
           f'<rect x="{LEFT + 130}" y="32" width="12" height="10" fill="#2b7bb9"/>'
           f'<text x="{LEFT + 146}" y="41">after</text>']
    for i, (label, before, after, target, unit, floor) in enumerate(FIGURES):
        y = TOP + i * ROW
        out.append(f'<text x="{LEFT - 8}" y="{y + 20}" text-anchor="end">{html.escape(label)}</text>')
        out.append(bar(LEFT, y + 4, x_of(before / target) - LEFT, 14, "#bbbbbb",
                       f"before: {before:g} ({unit}); target {target:g}"))
        met = after <= target
        out.append(bar(LEFT, y + 20, x_of(after / target) - LEFT, 14, "#2b7bb9" if met else "#d9534f",
                       f"after: {after:g} ({unit}); target {target:g}"))
        out.append(f'<text x="{x_of(max(before, after) / target) + 6:.1f}" y="{y + 31}">'
                   f'{"met" if met else "not met"}</text>')
        if floor is not None:
            fx = x_of(floor / target)
            out.append(f'<line x1="{fx:.1f}" y1="{y + 17}" x2="{fx:.1f}" y2="{y + 37}" stroke="black" '
                       f'stroke-width="3"><title>the I/O floor: {floor:g} ({unit})</title></line>')
            out.append(f'<text x="{fx:.1f}" y="{y + 46}" text-anchor="middle" font-size="10">I/O floor</text>')
    target_x = x_of(1.0)
    out.append(f'<line x1="{target_x:.1f}" y1="{TOP - 4}" x2="{target_x:.1f}" '
               f'y2="{TOP + ROW * len(FIGURES)}" stroke="black" stroke-dasharray="4,3"/>')
    out.append(f'<text x="{target_x:.1f}" y="{TOP + ROW * len(FIGURES) + 16}" '
               'text-anchor="middle">target</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "issue-23-targets.svg"))
    args = ap.parse_args()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(draw())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
