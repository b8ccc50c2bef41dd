#!/usr/bin/env python3
"""tf-collect's redaction beside two maintained secret scanners, detect-secrets and CredSweeper
(a measurement for the README's decision; neither is a dependency of tf-support):

    pip install detect-secrets credsweeper
    python bench/scanner_compare.py [--mb 5]

Each case is a file of its own: the catalogue's examples (one per format, in a log line) and
the held-out corpus (bench/redact_heldout.txt). A scanner finds a case when it reports anything
in the case's file (lenient: the line is enough, the exact span is not asked for); tf-collect
finds it when every marked secret is gone from its output. False alarms: reports on the
held-out `keep` cases. Speed: wall time of each command line on the benchmark corpus written
out as files, start-up included.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redact_throughput as bench

from tf_support_schemas.tokens import STANDALONE


def _cases() -> list[tuple[str, str, str]]:
    """(label, text, kind) with kind "keep" for a case without a secret."""
    cases = [
        (f"catalogue/{f.kind}", f"INFO loaded {f.examples[0]} from the environment\n", f.kind)
        for f in STANDALONE
    ]
    cases += [(f"heldout/{c.syntax}", c.text, c.kind) for c in bench.heldout_cases()]
    return cases


def _detect_secrets(root: Path) -> set[str]:
    out = subprocess.run(
        ["detect-secrets", "scan", "--all-files", str(root)],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    return {Path(name).name for name in json.loads(out.stdout)["results"]}


def _credsweeper(root: Path) -> set[str]:
    report = root.parent / "credsweeper.json"
    subprocess.run(
        ["credsweeper", "--path", str(root), "--save-json", str(report)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = json.loads(report.read_text())
    return {Path(line["path"]).name for item in found for line in item["line_data_list"]}


def _tf_collect(root: Path) -> set[str]:
    out = root.parent / f"{root.name}-redacted"
    exe = shutil.which("tf-collect", path=str(Path(sys.executable).parent)) or "tf-collect"
    subprocess.run([exe, "redact", str(root), "-o", str(out)], capture_output=True, check=True)
    return {p.name for p in root.iterdir() if (out / p.name).read_text() != p.read_text()}


TOOLS = {
    "tf-collect redact": _tf_collect,
    "detect-secrets": _detect_secrets,
    "credsweeper": _credsweeper,
}
# Commands named as the tools; not tf-support's dependencies: one not installed is left out.
SCANNERS = ("detect-secrets", "credsweeper")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    args = ap.parse_args()
    cases = _cases()
    corpus = bench.build_corpus(int(args.mb * 1e6))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "cases"
        root.mkdir()
        for i, (_, text, _) in enumerate(cases):
            (root / f"case{i:03d}.txt").write_text(text.replace("«", "").replace("»", ""))
        big = Path(tmp) / "corpus"
        for name, text in corpus.files.items():
            path = big / name.replace("/", "_")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for tool, run in TOOLS.items():
            if tool in SCANNERS and shutil.which(tool) is None:
                print(f"{tool}: not installed (pip install {tool})")
                continue
            flagged = run(root)
            rows: dict[str, list[int]] = {"catalogue": [0, 0], "heldout": [0, 0], "keep": [0, 0]}
            for i, (label, _, kind) in enumerate(cases):
                hit = f"case{i:03d}.txt" in flagged
                group = "keep" if kind == "keep" else label.split("/")[0]
                rows[group][0] += hit
                rows[group][1] += 1
            t0 = time.perf_counter()
            try:
                run(big)
            except subprocess.CalledProcessError as exc:
                print(f"  {tool} failed on the corpus: {exc}")
            seconds = time.perf_counter() - t0
            print(
                f"{tool}: catalogue {rows['catalogue'][0]}/{rows['catalogue'][1]}, "
                f"held-out {rows['heldout'][0]}/{rows['heldout'][1]}, "
                f"false alarms on keep {rows['keep'][0]}/{rows['keep'][1]}, "
                f"{corpus.size / 1e6:.1f} MB in {seconds:.1f}s = {corpus.size / 1e6 / seconds:.2f} MB/s"
            )


if __name__ == "__main__":
    main()
