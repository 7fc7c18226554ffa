#!/usr/bin/env python3
"""The summary of scripts/bench-issue25.sh (issue 25) as Markdown, from the figure files it
wrote into the report directory (argv[1]): issue25-wordcount.txt (item 1),
issue25-restore.txt (2), issue25-running.txt (3, 4), issue25-paced.txt (paced),
issue25-profile.txt (5). A missing file
leaves its rows out. Every ratio is computed from figures of the same run."""
import os
import re
import sys

DIR = sys.argv[1] if len(sys.argv) > 1 else "target/bench-report"


def rows(name):
    """key=value lines of a figure file: {impl: {key: value}} (the impl is the first word or
    impl=), in file order; text in parentheses is kept as 'note'."""
    path = os.path.join(DIR, name)
    if not os.path.exists(path):
        return {}
    out = {}
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        note = ""
        m = re.search(r"\((.*)\)\s*$", line)
        if m:
            note, line = m.group(1), line[: m.start()]
        kv = dict(t.split("=", 1) for t in line.split() if "=" in t)
        impl = kv.pop("impl", None) or line.split()[0]
        kv["note"] = note
        out.setdefault(impl, kv)  # first rep only
    return out


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def ratio(a, b, fmt="{:.2f}×"):
    a, b = num(a), num(b)
    return fmt.format(a / b) if a is not None and b else "—"


def comments(name):
    path = os.path.join(DIR, name)
    if not os.path.exists(path):
        return []
    return [l[1:].strip() for l in open(path) if l.startswith("#")]


def item1():
    r = rows("issue25-wordcount.txt")
    if "rust" not in r:
        return
    rust = r["rust"]
    print("| WordCount, one run | words/s | peak RSS | words/s Rust/Java | RSS Rust/Java |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| rust (`examples/word_count`) | {rust.get('words_per_s')} | {rust.get('peak_rss_mb')} MB | | |")
    if "rust2" in r:
        two = r["rust2"]
        print(f"| rust2 (`num.stream.threads=2`) | {two.get('words_per_s')} | {two.get('peak_rss_mb')} MB | "
              f"2 threads / 1: {ratio(two.get('words_per_s'), rust.get('words_per_s'))} | |")
    for impl, kv in r.items():
        if impl.startswith("java"):
            print(f"| {impl} | {kv.get('words_per_s')} | {kv.get('peak_rss_mb')} MB | "
                  f"{ratio(rust.get('words_per_s'), kv.get('words_per_s'))} | "
                  f"{ratio(rust.get('peak_rss_mb'), kv.get('peak_rss_mb'), '{:.3f}×')} |")
    for c in comments("issue25-wordcount.txt"):
        print(f"\n{c}")
    print()


def item2():
    r = rows("issue25-restore.txt")
    if not r:
        return
    print("| restore, one run | records | ms | records/s | peak RSS | Rust member / this |")
    print("| --- | --- | --- | --- | --- | --- |")
    member = r.get("rust-member", {})
    for impl, kv in r.items():
        print(f"| {impl} | {kv.get('records')} | {kv.get('ms')} | {kv.get('rate')} | "
              f"{kv.get('peak_rss_mb')} MB | {ratio(member.get('rate'), kv.get('rate'))} |")
    for c in comments("issue25-restore.txt"):
        print(f"\n{c}")
    print()


def item34():
    r = rows("issue25-running.txt")
    if "rust" not in r:
        return
    rust = r["rust"]
    print("| fresh application, launch → | started (REBALANCING) ms | RUNNING ms | first count update ms | changelog records "
          "| per input line | per word | peak RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for impl, kv in r.items():
        cl, lines, words = num(kv.get("changelog_records")), num(kv.get("lines")), num(kv.get("words"))
        per_line = f"{cl / lines:.4f}" if cl is not None and lines else "—"
        per_word = f"{cl / words:.4f}" if cl is not None and words else "—"
        print(f"| {impl} | {kv.get('started_ms')} | {kv.get('running_ms')} | {kv.get('first_record_ms')} | "
              f"{kv.get('changelog_records')} | {per_line} | {per_word} | {kv.get('peak_rss_mb')} MB |")
    for impl, kv in r.items():
        if impl != "rust":
            print(f"\nRust/{impl}: time to RUNNING {ratio(rust.get('running_ms'), kv.get('running_ms'))}, "
                  f"to the first count update {ratio(rust.get('first_record_ms'), kv.get('first_record_ms'))}, "
                  f"changelog records {ratio(rust.get('changelog_records'), kv.get('changelog_records'))}.")
    for c in comments("issue25-running.txt"):
        print(f"\n{c}")
    print()


def paced():
    r = rows("issue25-paced.txt")
    if "rust" not in r:
        return
    rust = r["rust"]
    print("| paced input, all at once | changelog records | per word | Rust/this |")
    print("| --- | --- | --- | --- |")
    for impl, kv in r.items():
        cl, words = num(kv.get("changelog_records")), num(kv.get("words"))
        per_word = f"{cl / words:.4f}" if cl is not None and words else "—"
        print(f"| {impl} | {kv.get('changelog_records')} | {per_word} | "
              f"{ratio(rust.get('changelog_records'), kv.get('changelog_records'))} |")
    for c in comments("issue25-paced.txt"):
        print(f"\n{c}")
    print()


def threads():
    path = os.path.join(DIR, "issue25-threads.txt")
    if not os.path.exists(path):
        return
    print("| num.stream.threads, same input, in run order | words/s | CPU s | CPU µs per word | cores busy |")
    print("| --- | --- | --- | --- | --- |")
    rates = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        kv = dict(t.split("=", 1) for t in line.split("(")[0].split() if "=" in t)
        rates.setdefault(kv["impl"], []).append(num(kv.get("words_per_s")))
        print(f"| {kv['impl']} | {kv.get('words_per_s')} | {kv.get('cpu_s')} | {kv.get('us_per_word')} | {kv.get('cores')} |")
    one, two = rates.get("rust-threads1", []), rates.get("rust-threads2", [])
    pairs = [f"{b / a:.2f}×" for a, b in zip(one, two) if a and b]
    if pairs:
        print(f"\nwords/s, 2 threads / 1 thread, pair by pair: {', '.join(pairs)}.")
    for c in comments("issue25-threads.txt"):
        print(f"\n{c}")
    print()


def item5():
    path = os.path.join(DIR, "issue25-profile.txt")
    if not os.path.exists(path):
        return
    lines = open(path).read().splitlines()
    for c in comments("issue25-profile.txt"):
        print(c + "\n")
    for l in lines:
        if l.startswith("cpu "):
            print(f"CPU of the process while profiled: {l[4:]}\n")
    for kind in ("self", "inclusive"):
        picked = [l.split(None, 1)[1] for l in lines if l.startswith(kind + " ")]
        if picked:
            print(f"{kind} (top):\n\n```")
            print("\n".join(picked[:20]))
            print("```\n")


def main():
    machine = os.path.join(DIR, "issue25-machine.txt")
    if os.path.exists(machine):
        print("; ".join(l.lstrip("# ") for l in open(machine).read().strip().splitlines()) + "\n")
    item1()
    item2()
    item34()
    paced()
    threads()
    item5()


if __name__ == "__main__":
    main()
