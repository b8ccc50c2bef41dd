#!/usr/bin/env python3
"""How tf-analyze scales: generated bundles of 1,000 and 10,000 pods, the full rule set.

    python bench/analyze_scale.py [--sizes 1000:100,10000:1000] [--gpus-per-node 8]
                                  [--faults pending-quota,...] [--keep DIR | --bundles DIR]
                                  [--runs N] [--without selection-index] [--profile]

Each size is a cluster grown from the `healthy` sample scenario: its GPU node (Node, GPUNode,
hypervisor pod with its events and logs, GPUs) cloned to the wanted number of GPU nodes, and its
training workload (Deployment, ReplicaSet, TensorFusionWorkload, pods, events, logs) cloned into
team namespaces until the cluster holds the wanted number of pods. Onto it go the faults of a
few sample scenarios (their objects and logs as they differ from `healthy`): a Pending pod over
quota, a crash-looping hypervisor, an image pull that times out, a crash-looping remote worker,
so rules fire and evaluate their evidence. The emulator serves that cluster and the real
tf-collect writes the bundle (generation, not measured as analysis).

Analysis runs `tf-analyze BUNDLE --format json -o FILE` in a fresh process per size, from
bytecode as an installed copy runs (see `_installed_env`). Printed per size: its wall time and
peak RSS, the largest total resident memory of tf-analyze and every process it starts (their
RSS summed, sampled every 10 ms, and never less than the kernel's peak of the largest one);
then the budgets: 1,000 pods in at most 1 s, 10,000 pods in at most 8 s, peak RSS at most
500 MB, and time growing no faster than the bundle (10x data, ~10x time). Cloned pods are as
individual as a real cluster's (start times, container IDs, token volume, addresses):
replicas share their spec only.

`--bundles DIR` analyses the bundles an earlier `--keep DIR` run kept (reports go elsewhere).
`--runs N` analyses each bundle N times and prints the fastest run (a shared machine's noise
only ever adds time) with the largest peak RSS. `--without NAME` also prints each size
analysed without one of the indexes tf-analyze keeps (WITHOUT), so each one's worth can be
read off: it is replaced in the measured process only.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import hashlib
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

# The scenario loader and the tf-collect runner are the tests' (tests/scenario*.py).
# The repo's packages before the test kits, so that tests/collector and tests/analyzer
# (folders without __init__) are not taken for the packages of those names.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scenariokit import SAMPLES
from scenariokit import collect as collect_bundle
from scenarioloader import load_scenario

from emulator.cluster import ClusterData, LogKey
from emulator.server import Emulator

ROOT = Path(__file__).resolve().parents[1]
TF_NS = "tensor-fusion-sys"
TEMPLATE_NODE = "ip-10-0-3-17.ec2.internal"  # a healthy GPU node of the `healthy` scenario
TEMPLATE_IP = "10.0.3.17"
TEMPLATE_WORKLOAD = ("ml-team", "pytorch-train", "6f7c9d8b5", "x2x9k")  # ns, name, rs hash, pod
DEFAULT_FAULTS = (
    "pending-quota",
    "hypervisor-crashloop-recreate",
    "image-pull-registry-unreachable",
    "remote-gpu-worker-crashloop",
)
REPLICAS = 8  # pods per cloned workload
EVENTFUL = 5  # one cloned pod in EVENTFUL keeps its events (the others' have expired, TTL 1h)
TARGET_SECONDS = {1000: 1.0, 10000: 8.0}  # pods -> seconds
TARGET_RSS_MB = 500.0

# What --without takes out of tf-analyze, as code run before it in the measured process.
WITHOUT = {
    # A rule's `where` binding answered by a pass over the binding's objects for each
    # subject, instead of from the index per key that rules/bindings.py builds once per rule.
    "selection-index": """
from analyzer.rules import bindings

class Scan:
    def __init__(self, objects, key):
        self.objects, self.key = objects, key

    def get(self, value, default=()):
        return [o for o in self.objects if value in bindings._values_at(o, self.key)] or default

bindings._index = Scan
""",
}


# ---------------------------------------------------------------------- generation
def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return (obj["kind"], meta.get("namespace", ""), meta["name"])


def _overlay_faults(data: ClusterData, healthy: ClusterData, faults: list[str]) -> None:
    """Add each fault scenario's objects and logs, as they differ from `healthy`."""
    for name in faults:
        fault = load_scenario(SAMPLES / name)
        for rkey, items in fault.objects.items():
            base = {_key(o): o for o in healthy.objects.get(rkey, [])}
            current = {_key(o): i for i, o in enumerate(data.objects.setdefault(rkey, []))}
            for obj in items:
                if base.get(_key(obj)) == obj:
                    continue
                if _key(obj) in current:
                    data.objects[rkey][current[_key(obj)]] = obj
                else:
                    data.objects[rkey].append(obj)
        for lkey, text in fault.logs.items():
            if healthy.logs.get(lkey) != text:
                data.logs[lkey] = text
        data.execs.update(fault.execs)
    data.revision += 1


class _Cloner:
    """Copies of template objects with names, addresses and uids replaced consistently."""

    def __init__(self, seed: str) -> None:
        self.seed = uuid.uuid5(uuid.NAMESPACE_URL, seed)

    def clone(self, obj: Any, replace: dict[str, str]) -> Any:
        text = json.dumps(obj)
        pattern = re.compile("|".join(re.escape(k) for k in sorted(replace, key=len, reverse=True)))
        text = pattern.sub(lambda m: replace[m.group(0)], text)
        return json.loads(text)

    def uid(self, *parts: str) -> str:
        return str(uuid.uuid5(self.seed, "/".join(parts)))


_TIME = re.compile(r'"(20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})Z"')
_CONTAINER_ID = re.compile(r"containerd://[0-9a-f]{64}")
_TOKEN_VOLUME = re.compile(r"kube-api-access-[a-z0-9]{5}")
_NODE_IP = re.compile(r"ip-([0-9]+)-([0-9]+)-([0-9]+)-([0-9]+)(?:\.|$)")


def _own_pod(pod: dict[str, Any], serial: int) -> dict[str, Any]:
    """A cloned pod made as individual as a real one: its own start times (within the hour
    after its template's), container IDs, service-account token volume, pod IP, resource
    version, and the address of the node it runs on. Replicas of one workload share their
    spec otherwise, as in a cluster, and no more than that."""
    uid = pod["metadata"]["uid"]
    shift = datetime.timedelta(seconds=serial % 3600)

    def later(m: re.Match[str]) -> str:
        when = datetime.datetime.fromisoformat(m.group(1)) + shift
        return f'"{when.isoformat()}Z"'

    def digest(text: str, size: int) -> str:
        return hashlib.sha256(f"{uid}/{text}".encode()).hexdigest()[:size]

    text = _TIME.sub(later, json.dumps(pod))
    text = _CONTAINER_ID.sub(lambda m: "containerd://" + digest(m.group(0), 64), text)
    # The API server's own alphabet for generated name suffixes (no vowels, no look-alikes).
    letters = "bcdfghjklmnpqrstvwxz2456789"
    seed = int(digest("sa", 16), 16)
    volume = "kube-api-access-" + "".join(letters[(seed >> (5 * k)) % 27] for k in range(5))
    own = json.loads(_TOKEN_VOLUME.sub(volume, text))
    own["metadata"]["resourceVersion"] = str(100000 + serial)
    status = own.setdefault("status", {})
    node = _NODE_IP.match(own["spec"].get("nodeName", ""))
    if node:
        status["hostIP"] = ".".join(node.groups())
        status["hostIPs"] = [{"ip": status["hostIP"]}]
    if own["spec"].get("hostNetwork"):
        status["podIP"] = status.get("hostIP", status.get("podIP"))
    else:
        status["podIP"] = f"10.{128 + serial // 65536}.{(serial // 256) % 256}.{serial % 256}"
    if status.get("podIP"):
        status["podIPs"] = [{"ip": status["podIP"]}]
    return own


def _uids(objs: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["uid"] for o in objs if o["metadata"].get("uid")]


def _scale_nodes(data: ClusterData, healthy: ClusterData, count: int, gpus_per_node: int) -> None:
    """`count` more GPU nodes like TEMPLATE_NODE, each with `gpus_per_node` GPUs."""
    cl = _Cloner("nodes")
    hyp = f"hypervisor-{TEMPLATE_NODE}"
    node = _find(healthy, ("", "nodes"), "", TEMPLATE_NODE)
    gpunode = _find(healthy, ("tensor-fusion.ai", "gpunodes"), "", TEMPLATE_NODE)
    pod = _find(healthy, ("", "pods"), TF_NS, hyp)
    gpus = [
        g
        for g in healthy.objects[("tensor-fusion.ai", "gpus")]
        if g["metadata"]["labels"].get("tensor-fusion.ai/managed-by") == TEMPLATE_NODE
    ]
    events = [
        e
        for e in healthy.objects[("", "events")]
        if e["involvedObject"]["name"] in (TEMPLATE_NODE, hyp)
    ]
    logs = {k: v for k, v in healthy.logs.items() if k.pod == hyp}
    template_uids = _uids([node, gpunode, pod, *gpus, *events])
    for i in range(count):
        a, b, c = 64 + i // 65536, (i // 256) % 256, i % 256
        name, ip = f"ip-10-{a}-{b}-{c}.ec2.internal", f"10.{a}.{b}.{c}"
        gpu_ids = [f"gpu-{cl.uid(name, 'gpu', str(k))}" for k in range(gpus_per_node)]
        replace = {
            TEMPLATE_NODE: name,
            TEMPLATE_IP: ip,
            TEMPLATE_IP.replace(".", "-"): ip.replace(".", "-"),
            **{u: cl.uid(name, u) for u in template_uids},
            **{g["metadata"]["name"]: gpu_ids[k] for k, g in enumerate(gpus)},
        }
        data.objects[("", "nodes")].append(cl.clone(node, replace))
        new_gpunode = cl.clone(gpunode, replace)
        status = new_gpunode["status"]
        status["managedGPUDeviceIDs"] = gpu_ids
        status["allocatedPods"] = {g: status["allocatedPods"].get(g, []) for g in gpu_ids}
        status["totalGPUs"] = status["managedGPUs"] = gpus_per_node
        data.objects[("tensor-fusion.ai", "gpunodes")].append(new_gpunode)
        data.objects[("", "pods")].append(_own_pod(cl.clone(pod, replace), i))
        for k, gid in enumerate(gpu_ids):
            gpu = cl.clone(gpus[k % len(gpus)], replace)
            gpu["metadata"]["name"] = gpu["status"]["uuid"] = gid
            gpu["metadata"]["uid"] = cl.uid(gid)
            gpu["status"]["index"] = k
            gpu["status"].pop("runningApps", None)
            gpu["status"]["available"] = dict(gpu["status"]["capacity"])
            data.objects[("tensor-fusion.ai", "gpus")].append(gpu)
        for ev in events:
            new = cl.clone(ev, replace)
            new["metadata"]["name"] = f"{new['metadata']['name']}.{i:x}"
            data.objects[("", "events")].append(new)
        for k, text in logs.items():
            data.logs[LogKey(k.namespace, f"hypervisor-{name}", k.container, k.previous)] = (
                text.replace(TEMPLATE_NODE, name).replace(TEMPLATE_IP, ip)
            )
    data.revision += 1


def _scale_workloads(data: ClusterData, healthy: ClusterData, pods: int, nodes: list[str]) -> None:
    """Clones of the template workload, REPLICAS pods each, until there are `pods` pods."""
    cl = _Cloner("workloads")
    ns, name, rs_hash, suffix = TEMPLATE_WORKLOAD
    rs_name = f"{name}-{rs_hash}"
    pod_name = f"{rs_name}-{suffix}"
    templates = {
        "deploy": _find(healthy, ("apps", "deployments"), ns, name),
        "rs": _find(healthy, ("apps", "replicasets"), ns, rs_name),
        "tfw": _find(healthy, ("tensor-fusion.ai", "tensorfusionworkloads"), ns, name),
    }
    pod = _find(healthy, ("", "pods"), ns, pod_name)
    events = [
        e
        for e in healthy.objects[("", "events")]
        if e["metadata"].get("namespace") == ns
        and e["involvedObject"]["name"] in (name, rs_name, pod_name)
    ]
    logs = {k: v for k, v in healthy.logs.items() if (k.namespace, k.pod) == (ns, pod_name)}
    template_uids = _uids([*templates.values(), pod, *events])
    spaces: set[str] = set()
    missing = pods - len(data.objects[("", "pods")])
    w = 0
    while missing > 0:
        wname, wns = f"train-{w:04d}", f"team-{w % 40:02d}"
        spaces.add(wns)
        base = {
            pod_name: "@@POD@@",  # the pod's own name first, then the workload's
            name: wname,
            f'"{ns}"': f'"{wns}"',
            **{u: cl.uid(wns, wname, u) for u in template_uids},
        }
        for kind, obj in templates.items():
            clone = cl.clone(obj, base)
            if kind in ("deploy", "rs"):
                clone["spec"]["replicas"] = min(REPLICAS, missing)
                clone.setdefault("status", {})["replicas"] = min(REPLICAS, missing)
            data.objects[_rkey(kind)].append(clone)
        for r in range(min(REPLICAS, missing)):
            pname = f"{wname}-{rs_hash}-{w:04x}{r:x}"
            new = json.loads(json.dumps(cl.clone(pod, base)).replace("@@POD@@", pname))
            new["metadata"]["uid"] = cl.uid(wns, pname)
            new["spec"]["nodeName"] = nodes[(w * REPLICAS + r) % len(nodes)]
            data.objects[("", "pods")].append(_own_pod(new, w * REPLICAS + r))
            if (w * REPLICAS + r) % EVENTFUL == 0:
                for ev in events:
                    e = json.loads(json.dumps(cl.clone(ev, base)).replace("@@POD@@", pname))
                    e["metadata"]["name"] = f"{e['metadata']['name']}.{r:x}"
                    data.objects[("", "events")].append(e)
            for k, text in logs.items():
                data.logs[LogKey(wns, pname, k.container, k.previous)] = text
            missing -= 1
        w += 1
    for space in sorted(spaces):
        data.objects[("", "namespaces")].append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": space, "uid": cl.uid(space)},
            }
        )
    data.revision += 1


def _rkey(kind: str) -> tuple[str, str]:
    return {
        "deploy": ("apps", "deployments"),
        "rs": ("apps", "replicasets"),
        "tfw": ("tensor-fusion.ai", "tensorfusionworkloads"),
    }[kind]


def _find(data: ClusterData, rkey: tuple[str, str], ns: str, name: str) -> dict[str, Any]:
    for obj in data.objects[rkey]:
        if (obj["metadata"].get("namespace", ""), obj["metadata"]["name"]) == (ns, name):
            return obj
    raise LookupError(f"{rkey} {ns}/{name} is not in the healthy scenario")


def generate(pods: int, gpu_nodes: int, gpus_per_node: int, faults: list[str]) -> ClusterData:
    healthy = load_scenario(SAMPLES / "healthy")
    data = copy.deepcopy(healthy)
    _overlay_faults(data, healthy, faults)
    existing = [
        n["metadata"]["name"]
        for n in data.objects[("", "nodes")]
        if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present") == "true"
    ]
    _scale_nodes(data, healthy, max(0, gpu_nodes - len(existing)), gpus_per_node)
    node_names = [
        n["metadata"]["name"]
        for n in data.objects[("", "nodes")]
        if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present") == "true"
    ]
    _scale_workloads(data, healthy, pods, node_names)
    return data


def make_bundle(
    pods: int, gpu_nodes: int, gpus_per_node: int, faults: list[str], bundle: Path
) -> None:
    t0 = time.perf_counter()
    data = generate(pods, gpu_nodes, gpus_per_node, faults)
    t1 = time.perf_counter()
    collect(data, bundle)
    t2 = time.perf_counter()
    print(
        f"generate {pods} pods: cluster {t1 - t0:.1f} s, tf-collect {t2 - t1:.1f} s "
        f"({_counts(data)}; bundle {bundle.stat().st_size / 1024**2:.1f} MiB)",
        flush=True,
    )


def collect(data: ClusterData, out: Path) -> None:
    """The real tf-collect against the emulator serving `data`."""
    with Emulator(data) as emu:
        proc = collect_bundle(emu, out, env={"PYTHONPATH": str(ROOT)}, timeout=3600)
    if proc.returncode not in (0, 3) or not out.exists():  # 3: written, with some gaps
        raise SystemExit(f"tf-collect failed ({proc.returncode}): {proc.stderr[-2000:]}")


# ---------------------------------------------------------------------- measurement
def _installed_env() -> dict[str, str]:
    """tf-analyze's environment: it runs as an installed copy does, from bytecode (pip
    compiles a package as it installs it). This checkout's bytecode goes to a folder of the
    bench's own, not into the tree, also where PYTHONDONTWRITEBYTECODE is set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "tf-support-bench-pycache")
    return env


def compile_once() -> None:
    """Write that bytecode before the first measured run (the first import compiles)."""
    code = "import analyzer.cli, analyzer.run"
    subprocess.run([sys.executable, "-c", code], env=_installed_env(), check=True)


def analyze(
    bundle: Path, report: Path, profile: Path | None, timeout: float, without: str | None = None
) -> tuple[float, float, float, bool]:
    """(wall seconds, CPU seconds, peak RSS MB, finished) of one tf-analyze run, stopped at
    `timeout`, without WITHOUT[without] if given. CPU time (user + system, of every process it
    ran) varies less than wall time on a shared machine; the budgets are wall time."""
    argv = [sys.executable]
    if profile is not None:
        argv += ["-m", "cProfile", "-o", str(profile)]
    if without is None:
        argv += ["-m", "analyzer"]
    else:
        argv += ["-c", WITHOUT[without] + "from analyzer.entry import main\nmain()"]
    argv += [str(bundle), "--format", "json", "-o", str(report)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_installed_env()
    )
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    sampler = _TreeRss(proc.pid)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    sampler.stop()
    peak = max(usage.ru_maxrss / 1024, sampler.peak_mb)
    cpu = usage.ru_utime + usage.ru_stime
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    errors = proc.stderr.read().decode()
    proc.stderr.close()
    if code == -signal.SIGKILL:
        return wall, cpu, peak, False
    if code not in (0, 1):
        raise SystemExit(f"tf-analyze failed ({code}): {errors[-2000:]}")
    return wall, cpu, peak, True


class _TreeRss(threading.Thread):
    """The largest sum of resident memory over a process and its descendants, from /proc."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_mb = 0.0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.01):
            self.peak_mb = max(self.peak_mb, sum(_rss_mb(p) for p in _tree(self.pid)))

    def stop(self) -> None:
        self._done.set()
        self.join()


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo += [int(c) for c in children]
    return found


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:  # it ended meanwhile
        pass
    return 0.0


def _counts(data: ClusterData) -> str:
    n = {k: len(v) for k, v in data.objects.items()}
    logs = len(data.logs)
    return (
        f"{n[('', 'pods')]} pods, {n[('', 'nodes')]} nodes, "
        f"{n[('tensor-fusion.ai', 'gpunodes')]} GPUNodes, {n[('tensor-fusion.ai', 'gpus')]} GPUs, "
        f"{n[('', 'events')]} events, {logs} container logs in the cluster"
    )


def _findings(report: Path) -> str:
    data = json.loads(report.read_text())
    fired = sorted({f["rule_id"] for f in data["findings"]})
    return f"{len(data['findings'])} findings from {len(fired)} rules ({', '.join(fired)})"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="1000:100,10000:1000", help="PODS:GPU_NODES,...")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--faults", default=",".join(DEFAULT_FAULTS), help="sample scenarios to add")
    ap.add_argument("--keep", type=Path, help="keep bundles and reports in this directory")
    ap.add_argument("--bundles", type=Path, help="reuse bundles kept by an earlier --keep run")
    ap.add_argument("--runs", type=int, default=1, help="analyse each bundle N times: the fastest")
    ap.add_argument("--without", choices=sorted(WITHOUT), help="also analyse without this index")
    ap.add_argument("--profile", action="store_true", help="write a cProfile file per size")
    ap.add_argument(
        "--timeout", type=float, default=1800, help="stop an analysis after this many seconds"
    )
    args = ap.parse_args()
    sizes = [tuple(int(x) for x in s.split(":")) for s in args.sizes.split(",")]
    faults = [f for f in args.faults.split(",") if f]
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results: list[tuple[int, float, float, int]] = []
        compile_once()
        for pods, gpu_nodes in sizes:
            bundle = (args.bundles or work) / f"bundle-{pods}.tar.zst"
            if args.bundles is None:
                # In a process of its own: a child's peak RSS counts the pages of the process
                # it was forked from, so the measuring one must not have held the cluster.
                maker = multiprocessing.get_context("fork").Process(
                    target=make_bundle, args=(pods, gpu_nodes, args.gpus_per_node, faults, bundle)
                )
                maker.start()
                maker.join()
                if maker.exitcode != 0:
                    raise SystemExit(f"generating the {pods}-pod bundle failed")
            report = work / f"report-{pods}.json"
            profile = work / f"analyze-{pods}.prof" if args.profile else None
            wall, rss, finished = _measure(f"analyze {pods} pods", args, bundle, report, profile)
            results.append((pods, wall, rss, bundle.stat().st_size))
            if profile is not None:
                print(f"  profile: python -m pstats {profile}")
            if args.without:
                name, report = f"  without {args.without}", work / f"report-{pods}-without.json"
                _measure(name, args, bundle, report, None, args.without)
        _verdict(results, stopped=not finished)


def _measure(
    name: str,
    args: argparse.Namespace,
    bundle: Path,
    report: Path,
    profile: Path | None,
    without: str | None = None,
) -> tuple[float, float, bool]:
    """Analyse `bundle` --runs times and print the fastest run: (its wall seconds, the largest
    peak RSS, whether every run finished)."""
    runs = [
        analyze(bundle, report, profile, args.timeout, without) for _ in range(max(1, args.runs))
    ]
    wall, cpu, _, _ = min(runs)
    rss = max(r[2] for r in runs)
    finished = all(r[3] for r in runs)
    best = f", best of {len(runs)}" if len(runs) > 1 else ""
    if finished:
        print(
            f"{name}: {wall:.2f} s ({cpu:.2f} s CPU{best}), peak RSS {rss:.0f} MB; "
            f"{_findings(report)}",
            flush=True,
        )
    else:
        print(f"{name}: stopped after {wall:.0f} s, peak RSS {rss:.0f} MB so far", flush=True)
    return wall, rss, finished


def _verdict(results: list[tuple[int, float, float, int]], stopped: bool) -> None:
    small, large = results[0], results[-1]
    if len(results) > 1:
        data_ratio = large[0] / small[0]
        time_ratio = large[1] / small[1]
        print(
            f"ratio {large[0] // 1000}k/{small[0] // 1000}k: {'>' if stopped else ''}"
            f"{time_ratio:.1f}x time "
            f"({data_ratio:.0f}x data, bundle {large[3] / small[3]:.1f}x)"
        )
        linear = time_ratio <= data_ratio * 1.2
        print(f"target linear cost (time ratio <= 1.2 x data ratio): {_met(linear)}")
    for pods, wall, _, _ in results:
        if pods in TARGET_SECONDS:
            target = TARGET_SECONDS[pods]
            print(f"target {pods} pods in at most {target:g} s: {_met(wall <= target)}")
    worst = max(r[2] for r in results)
    print(f"target peak RSS at most {TARGET_RSS_MB:.0f} MB: {_met(worst <= TARGET_RSS_MB)}")


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


if __name__ == "__main__":
    main()
