#!/usr/bin/env python3
"""Issue 8, items 6 and 7: live rebalance timings and RSS, Rust members vs Java peers.

Both kinds are driven through the same stdin/stdout protocol subset (`ready`, `tasks`, `close`):
the Java peer is testing/streams-peer (scripts/streams-peer.sh run), the Rust member is
`bench_member peer`. Same broker, same topology (the peer's two-subtopology counts app), same
input partitions, same 50 ms polling, alternating repetitions. Times start at the member's
`ready` line (so JVM start-up is NOT counted against Java):

  join      A ready -> A holds every active task (first assignment)
  converge  B ready -> A and B hold disjoint active sets that cover every task
  leave     `close` sent to A -> B holds every active task

RSS is /proc/<pid>/status VmRSS of member A once it holds all its tasks.
Prints one JSON object per line; the last line is the summary.
"""
import json, os, queue, statistics, subprocess, sys, threading, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOT = sys.argv[1]
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
PARTS = 4
ALL = {f"{s}_{p}" for s in (0, 1) for p in range(PARTS)}
MEMBER = os.path.join(REPO, "target/release/examples/bench_member")


class Peer:
    def __init__(self, kind, group, inp):
        if kind == "java":
            cmd = ["bash", os.path.join(REPO, "scripts/streams-peer.sh"), "run", "--group", group,
                   "--bootstrap", BOOT, "--input", inp, "--output", group + "-out"]
        else:
            cmd = [MEMBER, "peer", "--bootstrap", BOOT, "--group", group, "--input", inp]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.q.put(line.strip())
        self.q.put(None)

    def wait_for(self, prefix, timeout=60):
        end = time.time() + timeout
        while True:
            line = self.q.get(timeout=max(0.01, end - time.time()))
            if line is None:
                raise RuntimeError(f"peer exited waiting for {prefix}")
            if line.startswith(prefix):
                return line

    def tasks(self):
        self.p.stdin.write("tasks\n")
        self.p.stdin.flush()
        line = self.wait_for("tasks ")
        act = line.split("active=")[1].split(" ")[0]
        return set(t for t in act.split(",") if t)

    def rss_kb(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    return int(l.split()[1])
        return 0

    def close(self):
        try:
            self.p.stdin.write("close\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass

    def reap(self):
        try:
            self.p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def poll(cond, timeout=60):
    start = time.time()
    while time.time() - start < timeout:
        if cond():
            return time.time()
        time.sleep(0.05)
    raise RuntimeError("timeout")


def scenario(kind, rep):
    tag = f"bench-{kind}-{rep}-{int(time.time()*1000) % 10**8}"
    group, inp = tag, tag + "-in"
    subprocess.run([MEMBER, "create-topic", "--bootstrap", BOOT, "--topic", inp,
                    "--partitions", str(PARTS)], check=True)
    a = Peer(kind, group, inp)
    a.wait_for("ready")
    t0 = time.time()
    t1 = poll(lambda: a.tasks() == ALL)
    time.sleep(1.0)  # let the member settle before reading its footprint
    rss = a.rss_kb()
    b = Peer(kind, group, inp)
    b.wait_for("ready")
    t2 = time.time()

    def split():
        x, y = a.tasks(), b.tasks()
        return x and y and not (x & y) and (x | y) == ALL
    t3 = poll(split)
    a.close()
    t4 = time.time()
    t5 = poll(lambda: b.tasks() == ALL)
    b.close()
    a.reap()
    b.reap()
    r = {"kind": kind, "rep": rep, "join_ms": round((t1 - t0) * 1000),
         "converge_ms": round((t3 - t2) * 1000), "leave_ms": round((t5 - t4) * 1000),
         "rss_kb": rss}
    print(json.dumps(r), flush=True)
    return r


def main():
    results = []
    for rep in range(REPS):
        for kind in ("rust", "java"):
            results.append(scenario(kind, rep))
    summary = {}
    for kind in ("rust", "java"):
        rs = [r for r in results if r["kind"] == kind]
        summary[kind] = {k: statistics.median(r[k] for r in rs)
                         for k in ("join_ms", "converge_ms", "leave_ms", "rss_kb")}
    print(json.dumps({"summary": summary, "reps": REPS}), flush=True)


main()
