#!/usr/bin/env python3
"""A flame graph (SVG) from `perf script` output on stdin (issue 25, scripts/bench-issue25.sh).

Folds each sample's call stack (root first, the thread name as the root frame), then draws
the usual flame graph: one box per frame, its width the share of samples whose stack passes
through it, children above their caller; hover shows the frame and its percentage.
--folded FILE also keeps the folded stacks (one "a;b;c count" line each).

    perf script -i perf.data | benches/support/flamegraph.py --title T > flame.svg
"""
import argparse
import html
import re
import sys
from collections import defaultdict

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.+?)\s+\((.*)\)\s*$")


def short(sym):
    """Drops the +0x offset and the Rust hash suffix of a symbol."""
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    return re.sub(r"::h[0-9a-f]{16}$", "", sym)


def fold(lines):
    stacks, comm, frames = defaultdict(int), None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                stacks[";".join([comm] + frames[::-1])] += 1
            comm, frames = None, []
        elif not line.startswith((" ", "\t")):
            comm = line.split()[0]
        else:
            m = FRAME.match(line)
            if m:
                sym = m.group(1)
                dso = m.group(2).split("/")[-1].strip("[]")
                frames.append(short(sym) if sym != "[unknown]" else f"[{dso}]")
    if comm is not None:
        stacks[";".join([comm] + frames[::-1])] += 1
    return stacks


def tree(stacks):
    root = {"n": 0, "c": {}}
    for stack, n in stacks.items():
        node = root
        node["n"] += n
        for f in stack.split(";"):
            node = node["c"].setdefault(f, {"n": 0, "c": {}})
            node["n"] += n
    return root


def svg(root, title, width=1800, row=16):
    total = max(root["n"], 1)
    boxes, depth_max = [], 0

    def walk(node, x, depth):
        nonlocal depth_max
        for name, child in sorted(node["c"].items()):
            w = child["n"] / total * width
            if w >= 0.3:
                boxes.append((x, depth, w, name, child["n"]))
                depth_max = max(depth_max, depth)
                walk(child, x, depth + 1)
            x += w

    walk(root, 0.0, 0)
    height = (depth_max + 3) * row + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<text x="4" y="16" font-size="14">{html.escape(title)} ({total} samples)</text>']
    for x, depth, w, name, n in boxes:
        y = height - (depth + 1) * row - 4
        hue = 20 + (sum(name.encode()) % 40)
        label = html.escape(name[: int(w / 7)]) if w > 21 else ""
        tip = html.escape(f"{name} ({n} samples, {n / total * 100:.2f}%)")
        out.append(f'<g><title>{tip}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" '
                   f'height="{row - 1}" fill="hsl({hue},90%,60%)"/>'
                   f'<text x="{x + 2:.1f}" y="{y + row - 4}">{label}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--title", default="flame graph")
    ap.add_argument("--folded", help="also write the folded stacks here")
    args = ap.parse_args()
    stacks = fold(sys.stdin)
    if args.folded:
        with open(args.folded, "w") as f:
            for s, n in sorted(stacks.items()):
                f.write(f"{s} {n}\n")
    print(svg(tree(stacks), args.title))


if __name__ == "__main__":
    main()
