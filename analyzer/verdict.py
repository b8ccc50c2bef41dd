"""The verdict of an analysis, and the tf-collect command that would fill its gaps.

"No problem found" is only said when every rule that matters could run. A rule skipped for data
the user chose not to collect (the opt-in `--exec` checks, `--metrics`) or for something the API
said does not exist does not make a bundle inconclusive; one skipped because a list timed out,
was forbidden or failed, or one that ended in error, does.
"""

from __future__ import annotations

import shlex
from typing import Any

from .bundle import Missing
from .results import Analysis, RuleResult

VERDICTS = ("problems", "no-problem", "inconclusive")
DEFAULT_TAIL = 200  # tf-collect's defaults, not repeated in the command
DEFAULT_REQUEST_TIMEOUT = 30.0
OVERALL_TIMEOUT = "overall --timeout"  # in the message of a call the whole-run deadline cut


def opt_in(missing: Missing) -> bool:
    """Data not collected because the user did not ask for it, or that does not exist."""
    params = dict(missing.params)
    if params.get("status") == "not_found":
        return True
    if missing.kind == "check_not_run":
        return True
    return missing.kind == "document_missing" and params.get("status") == "not_collected"


def unsure(result: RuleResult) -> bool:
    """A rule that could have found a problem but could not decide."""
    if result.outcome == "error":
        return True
    return result.outcome == "skipped" and any(not opt_in(m) for m, _ in result.gaps)


def verdict(analysis: Analysis) -> str:
    if any(r.role == "root_cause" for r in analysis.roots):
        return "problems"
    if any(unsure(r) for r in analysis.results):
        return "inconclusive"
    return "no-problem"


def recollect_command(manifest: dict[str, Any], results: list[RuleResult]) -> str | None:
    """The tf-collect command that would collect what the skipped rules lacked: the same
    cluster, namespace, release and pods, with the options those gaps call for. None when
    collecting again would not help (nothing skipped, or only for what does not exist or what
    no step collects)."""
    gaps = [
        (m, obj)
        for r in results
        if r.outcome == "skipped"
        for m, obj in r.gaps
        if m.kind != "not_collected" and dict(m.params).get("status") != "not_found"
    ]
    if not gaps:
        return None
    opts, tf = manifest["options"], manifest["tensorfusion"]
    params = [dict(m.params) for m, _ in gaps]
    timeouts = [p.get("detail", "") for p in params if p.get("status") == "timeout"]
    # A pod whose logs no step took (not one tf-collect looked at closely): name it.
    pods = list(opts.get("pods") or [])
    for m, obj in gaps:
        pod = "/".join(obj.split("/")[:2])
        if m.kind == "logs_not_collected" and pod.count("/") == 1 and pod not in pods:
            pods.append(pod)
    args = ["tf-collect"]
    if opts.get("context"):
        args += ["--context", opts["context"]]
    args += ["-n", tf["namespace"], "--release", tf["release"]]
    for pod in pods:
        args += ["--pod", pod]
    for namespace in opts.get("workload_namespaces") or []:
        args += ["--workload-namespace", namespace]
    if opts.get("tail_lines") not in (None, DEFAULT_TAIL):
        args += ["--tail", str(opts["tail_lines"])]
    if opts.get("since_seconds"):
        args += ["--since", str(opts["since_seconds"])]
    request_timeout = float(opts.get("timeout_seconds") or DEFAULT_REQUEST_TIMEOUT)
    if any(OVERALL_TIMEOUT not in detail for detail in timeouts):
        args += ["--request-timeout", f"{request_timeout * 2:g}"]
    elif request_timeout != DEFAULT_REQUEST_TIMEOUT:
        args += ["--request-timeout", f"{request_timeout:g}"]
    overall = opts.get("overall_timeout_seconds")
    if overall and not any(OVERALL_TIMEOUT in detail for detail in timeouts):
        args += ["--timeout", f"{overall:g}"]  # it was long enough: keep it
    if opts.get("exec") or any(m.kind == "check_not_run" for m, _ in gaps):
        args.append("--exec")
    if opts.get("metrics") or any(p.get("document") == "metrics" for p in params):
        args.append("--metrics")
    return shlex.join(args)
