#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the small results folders the hostctl tests read (run once; the
output is kept in the tree).  Values are deterministic, chosen so that each
row's verdict is known without computing anything:

  base, new: 8 iterations, guest-1..3 and host.
    cpu-probe ops_per_sec (higher): every value of new above every value of
      base (+20%, guest-3 +10%): U exact p = 2/C(16,8) = 1.55e-4 per node
      -> better; Jain's index across guests drops in every iteration ->
      fairness worse.
    cpu-probe elapsed (lower): new 50% above base, separated -> worse.
    uname elapsed (lower): new interleaves base (same values shifted by a
      quarter step) -> "~".
  few: like base with 3 iterations -> few against few: too few samples.
  schema2: base with schema_version 2.
  otherbench: only a benchmark "stream" -> no shared benchmark metric.
  nonode: new without guest-3.
  partbench: new without the uname benchmark.
  nan: base with one value NaN (guest-2, cpu-probe ops_per_sec, iteration 4).
  unit: base with cpu-probe elapsed in "ms".
  (base and new carry a header: host kernel 6.1.0-base / 6.1.0-patched,
   hostname, CPU model, dates, release; nonode has 2 guests, partbench
   another plan: both are refused by compare unless --force or --vary.)
  failedguest (issue 15): new in which guest-2's cpu-probe step failed in
    iterations 2 and 5: a failure record and, as hostd writes for a spec
    step that failed, an elapsed of 0.001 s that is no measurement; status
    degraded.  Those steps must be absent from every statistic.
  subtle: base with every node's cpu-probe ops_per_sec shifted by 4.54
    (4.5 steps of 1.01): exact U p = 0.00466 per row.  Holm over the 6
    primary rows keeps host and guests significant (p*5 < 0.05); over all
    18 rows (--family all) it does not (p*17 > 0.05).
  loops200, loops400: hackbench run with -l 200 and -l 400 (plan and
    g.conf HACKBENCH_LOOPS differ): refused unless --force or
    --vary HACKBENCH_LOOPS.
  noisy: new with the monitors' steal_pct per node and step (about 0.5%),
    but 20% on guest-1 in cpu-probe's iterations 3 and 6: two noisy steps;
    steal_pct rows are secondary, and uname keeps its elapsed primary.
  sweep: hackbench swept over groups=1,2,4 (values scaled by the groups):
    the report draws it against groups.
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = ["guest-1", "guest-2", "guest-3", "host"]


def value(run, bench, metric, node_i, it):
    k = node_i * 0.37 + it * 1.01  # distinct everywhere: no ties
    if bench == "hackbench":
        return (1.5 if run == "new" else 1.0) + k / 1000
    if run == "subtle":
        return 1000.0 + k + 4.54 if metric == "ops_per_sec" else value("base", bench, metric, node_i, it)
    if bench == "cpu-probe" and metric == "ops_per_sec":
        if run == "new" and node_i == 2:
            return 1100.0 + k  # guest-3 gains less: fairness drops
        return (1200.0 if run == "new" else 1000.0) + k
    if bench == "cpu-probe":
        return (1.5 if run == "new" else 1.0) + k / 1000
    return 2.0 + k / 100 + (0.0025 if run == "new" else 0.0)


def write_run(name, kind="base", iterations=8, nodes=NODES, schema=1,
              benches=(("cpu-probe", "ops_per_sec", "ops/s", "higher"),
                       ("cpu-probe", "elapsed", "s", "lower"),
                       ("uname", "elapsed", "s", "lower")),
              nan_at=None, unit_override=None, fail=None, command=None, conf=None,
              kernel="6.1.0-base", variants=(None,), steal=None):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    bench_names = []
    for b in benches:
        if b[0] not in bench_names:
            bench_names.append(b[0])
    plan, step = [], 0
    samples, barriers = [], []
    for it, bn, var in [(it, bn, var) for it in range(1, iterations + 1)
                        for bn in bench_names for var in variants]:
            step += 1
            plan.append({"step": step, "benchmark": bn, "iteration": it,
                         "kind": "command", "command": command or bn})
            if var:
                plan[-1]["variant"] = var
            barriers.append({"step": step, "benchmark": bn, "iteration": it,
                             "clock": "host-monotonic",
                             "skew_ns": 1000 * (step % 5 + 1) if step != 3 else None,
                             "skew_bound_ns": 0,
                             "not_started": [] if step != 3 else list(nodes)})
            for ni, node in enumerate(nodes):
                if steal is not None:  # the monitors' step summary (docs/monitors.md)
                    samples.append({"node": node, "benchmark": bn, "iteration": it,
                                    "step": step, "metric": "steal_pct",
                                    "value": steal.get((node, bn, it), 0.5 + ni * 0.01 + it * 0.001),
                                    "unit": "%", "better": "lower"})
                for (b, metric, unit, better) in benches:
                    if b != bn:
                        continue
                    v = value(kind, b, metric, ni, it)
                    if unit_override and metric == "elapsed" and b == "cpu-probe":
                        unit = unit_override
                    if fail and (node, b, it) in fail:
                        if metric != "elapsed":
                            continue
                        # the agent's elapsed of a step that never ran
                        samples.append({"node": node, "benchmark": b, "iteration": it,
                                        "step": step, "metric": "elapsed", "value": 0.001,
                                        "unit": unit, "better": better})
                        samples.append({"node": node, "benchmark": b, "iteration": it,
                                        "step": step, "failed": True, "exit_status": 1,
                                        "reason": "%s exited with status 1" % b,
                                        "log": "nodes/%s/step-%d.out" % (node, step)})
                        continue
                    samples.append({"node": node, "benchmark": b, "iteration": it,
                                    "step": step, "metric": metric,
                                    "value": v * (int(var.split("=")[1]) if var else 1),
                                    "unit": unit, "better": better})
                    if var:
                        samples[-1]["variant"] = var
    manifest = {
        "schema_version": schema, "run": name,
        "status": "degraded" if fail else "complete",
        "hostd_version": "0.1.0",
        "started": "2026-12-01T10:00:00.000000Z", "ended": "2026-12-01T10:05:00.000000Z",
        "host": {"hostname": "lab-7", "kernel": kernel,
                 "cpu_model": "Example CPU 9000 @ 3.0GHz"},
        "settings": {"guest_kind": "local", "guest_count": len(nodes) - 1,
                     "host_runs_benchmarks": True, "iterations": iterations,
                     "release": "scheduled"},
        "participants": [{"node": n, "kind": "host" if n == "host" else "local",
                          "status": "ok"} for n in nodes],
        "plan": plan, "steps_released": step, "samples": len(samples),
        "failures": [], "events": [],
    }
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "samples.ndjson"), "w") as f:
        for s in samples:
            line = json.dumps(s, separators=(",", ":"))
            if nan_at and (s["node"], s["metric"], s["iteration"]) == nan_at \
                    and s["benchmark"] == "cpu-probe":
                line = line.replace('"value":%s' % json.dumps(s["value"]), '"value":NaN')
            f.write(line + "\n")
    with open(os.path.join(d, "barriers.ndjson"), "w") as f:
        for b in barriers:
            f.write(json.dumps(b, separators=(",", ":")) + "\n")
    if conf:
        os.makedirs(os.path.join(d, "config"))
        for fname, text in conf.items():
            with open(os.path.join(d, "config", fname), "w") as f:
                f.write(text)


write_run("base")
write_run("new", kind="new", kernel="6.1.0-patched")
write_run("few", iterations=3)
write_run("schema2", schema=2)
write_run("otherbench", benches=(("stream", "bandwidth", "B/s", "higher"),))
write_run("nonode", kind="new", nodes=["guest-1", "guest-2", "host"])
write_run("partbench", kind="new", benches=(("cpu-probe", "ops_per_sec", "ops/s", "higher"),
                                           ("cpu-probe", "elapsed", "s", "lower")))
write_run("nan", nan_at=("guest-2", "ops_per_sec", 4))
write_run("unit", unit_override="ms")
write_run("failedguest", kind="new", kernel="6.1.0-patched",
          fail={("guest-2", "cpu-probe", 2), ("guest-2", "cpu-probe", 5)})
write_run("subtle", kind="subtle")
HB = (("hackbench", "time", "s", "lower"),)
H_CONF = "export GUEST_KIND=local\nexport GUEST_COUNT=3\nexport HOST_RUNS_BENCHMARKS=yes\n"
write_run("loops200", benches=HB, command="hackbench -g 4 -l 200 --pipe",
          conf={"h.conf": H_CONF, "g.conf": "export MMTESTS=hackbench\nexport HACKBENCH_LOOPS=200\n"})
write_run("loops400", kind="new", benches=HB, command="hackbench -g 4 -l 400 --pipe",
          conf={"h.conf": H_CONF, "g.conf": "export MMTESTS=hackbench\nexport HACKBENCH_LOOPS=400\n"})
write_run("sweep", benches=HB, variants=("groups=1", "groups=2", "groups=4"))
write_run("noisy", kind="new", kernel="6.1.0-patched",
          steal={("guest-1", "cpu-probe", 3): 20.0, ("guest-1", "cpu-probe", 6): 20.0})
