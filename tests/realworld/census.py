"""The census of the real-world corpus: per manual row, how many texts it holds of each kind.

    python -m tests.realworld.census        (from the repository root, in the venv)

Columns: decisive fire texts (verbatim / adapted), quoted texts (fire texts at a place that
decides nothing, kept because the finding must quote them), near misses (verbatim / adapted)
and misses (real texts the row should read and does not). The last line is the share of the
verbatim texts at decisive places that fire: fire / (fire + misses). The numbers count what
the files hold; tests/realworld/test_realworld.py asserts each text does what its key says
(so the share is true when those tests pass) and that these totals equal the cases it runs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent

COLUMNS = (
    "fire verbatim",
    "fire adapted",
    "quoted",
    "near verbatim",
    "near adapted",
    "miss verbatim",
    "miss adapted",
)


def corpus_files() -> list[Path]:
    return sorted(HERE.glob("*/*.yaml"))


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def column(key: str, decisive: bool, entry: dict[str, Any]) -> str:
    """The census column an entry of `key` (texts, near_misses, misses) falls in."""
    how = "verbatim" if entry.get("verbatim") is True else "adapted"
    if key == "texts":
        return f"fire {how}" if decisive else "quoted"
    return f"{'near' if key == 'near_misses' else 'miss'} {how}"


def census() -> dict[str, Counter[str]]:
    """Per row, the number of entries in each column."""
    rows: dict[str, Counter[str]] = {}
    for path in corpus_files():
        doc = load(path)
        counts = rows.setdefault(doc["row"], Counter())
        for place in doc["places"]:
            decisive = not place.get("not_decisive")
            for key in ("texts", "near_misses", "misses"):
                for entry in place.get(key) or []:
                    counts[column(key, decisive, entry)] += 1
    return rows


def totals(rows: dict[str, Counter[str]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for counts in rows.values():
        out.update(counts)
    return out


def fire_share(counts: Counter[str]) -> tuple[int, int]:
    """Verbatim decisive texts that fire, out of those plus the verbatim misses."""
    fire = counts["fire verbatim"]
    return fire, fire + counts["miss verbatim"]


def render(rows: dict[str, Counter[str]]) -> str:
    width = max([len(r) for r in rows] + [len("total")])
    head = " | ".join(c.rjust(len(c)) for c in COLUMNS)
    lines = [f"{'row'.ljust(width)} | {head}", "-" * (width + 3 + len(head))]
    for row in [*sorted(rows), "total"]:
        counts = totals(rows) if row == "total" else rows[row]
        if row == "total":
            lines.append("-" * (width + 3 + len(head)))
        cells = " | ".join(str(counts[c]).rjust(len(c)) for c in COLUMNS)
        lines.append(f"{row.ljust(width)} | {cells}")
    fire, real = fire_share(totals(rows))
    share = f"{fire / real:.0%}" if real else "n/a"
    lines.append(
        f"verbatim texts at decisive places that fire their row: {fire} of {real} ({share})"
    )
    return "\n".join(lines)


def main() -> None:
    print(render(census()))


if __name__ == "__main__":
    main()
