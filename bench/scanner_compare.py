#!/usr/bin/env python3
"""tf-collect's redaction beside two maintained secret scanners, detect-secrets and CredSweeper
(a measurement for the README's decision; neither is a dependency of tf-support):

    python3 -m venv /tmp/scanvenv && /tmp/scanvenv/bin/pip install detect-secrets credsweeper
    python bench/scanner_compare.py --mb 5 --runs 3 --scanner-bin /tmp/scanvenv/bin

Each case is a file of its own. Catalogue cases: every example of every standalone format of
the catalogue (tf_support_schemas.tokens) rebuilt as a fresh value of the same shape from a
seeded random source (no `fake`, `example`, `test`, `dummy`, `xxxx` or `1234` in it, nor in any
text it encodes, since scanners skip those on purpose; a checksum where real tokens carry one
that a scanner verifies; the markers every real token of a platform carries; a PEM header gets
a random key body), each in four contexts (a log line, an env line, a YAML value, a JSON field)
under a name that says nothing. Held-out cases: the corpus of bench/redact_heldout.txt as
written (its values hold no such word either; the bench says so, or lists any that does).

A scanner finds a case when it reports anything in the case's file (lenient: the line is
enough, the exact span is not asked for); tf-collect finds it when every planted secret is gone
from its output. False alarms: reports on the held-out `keep` cases (for tf-collect: any change
to them). Speed: wall time of each command line on the benchmark corpus written out as files,
start-up included, the best of --runs runs. Every tool runs on one core: one process each
(`tf-collect redact --workers 1`, `detect-secrets -c 1`, `credsweeper --jobs 1`), and every
command is pinned to CPU 0 with `taskset -c 0` where taskset exists.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import math
import random
import re
import shutil
import string
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redact_throughput as bench

from tf_support_schemas.token_format import crc32
from tf_support_schemas.tokens import PEM, STANDALONE, TokenFormat

# Words that mark a value as a placeholder: scanners drop values holding them by design.
SKIPPED = ("fake", "example", "test", "dummy", "xxxx", "1234")
_SKIPPED = re.compile("|".join(SKIPPED), re.IGNORECASE)
_CLASSES = (string.ascii_uppercase, string.ascii_lowercase, string.digits)
_RUN = re.compile(r"[A-Za-z0-9]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/]{8,}=*")
_JSON_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?|[0-9]')
_TRIES = 50


def skipped_words(text: str) -> list[str]:
    return sorted({m.group().lower() for m in _SKIPPED.finditer(text)})


# ---------------------------------------------------------------------------- shaped values
def _pools(text: str) -> list[str]:
    """Per character, the alphabet its replacement is drawn from ("" to keep it): the classes
    (capitals, small letters, digits) its run of letters and digits holds, so that `T0AB12`
    stays capitals and digits. The leading capital of a run of capitals and digits stays: it
    says what an id is (Slack's `T` team, `B` webhook and `A` app ids)."""
    pools = [""] * len(text)
    for m in _RUN.finditer(text):
        pool = "".join(cls for cls in _CLASSES if any(c in cls for c in m.group()))
        pools[m.start() : m.end()] = [pool] * len(m.group())
        if m.group()[0].isupper() and m.group().isupper():
            pools[m.start()] = ""
    return pools


def _refilled(text: str, rng: random.Random) -> str:
    return "".join(
        rng.choice(pool) if pool else c for c, pool in zip(text, _pools(text), strict=True)
    )


def _decoded(run: str) -> tuple[int, str] | None:
    """(offset, text) when the run, from one of its first characters, is base64 of printable
    text (a JSON document, a PEM block, `user:password`), as opposed to random bytes."""
    for offset in range(5):
        body = run[offset:].rstrip("=")
        try:
            text = base64.b64decode(body + "=" * (-len(body) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue
        if len(text) >= 6 and all(c in string.printable for c in text):
            return offset, text
    return None


def _encode(text: str, like: str, *, urlsafe: bool) -> str:
    raw = text.encode()
    out = (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()
    return out if like.endswith("=") else out.rstrip("=")


def _rebuilt_text(text: str, rng: random.Random) -> str:
    """The same text with new letters and digits: JSON keys (but a placeholder host such as
    `registry.example`), PEM armour lines and the layout stay, and base64 of text inside it
    is rebuilt in turn (a docker config's `auth`)."""
    if not text.lstrip().startswith("{"):
        return "\n".join(
            line if line.startswith("-----") else _rebuilt(line, rng) for line in text.split("\n")
        )

    def token(m: re.Match[str]) -> str:
        if m.group(1) is None:  # a digit of a number
            return rng.choice("123456789")
        if m.group(2) and not skipped_words(m.group(1)):  # a key, unless a placeholder's
            return m.group()
        return f'"{_rebuilt(m.group(1), rng)}"{m.group(2) or ""}'

    return _JSON_TOKEN.sub(token, text)


def _is_jwt(text: str) -> bool:
    return text.startswith("eyJ") and text.count(".") >= 2


def _texts(text: str) -> list[tuple[re.Match[str], int, str]]:
    """(run, offset, decoded text) for each base64 run of the text that encodes text. A JWT's
    signature is random bytes, whatever an example's holds: it is refilled, not decoded."""
    found = []
    for m in _B64_RUN.finditer(text):
        inner = _decoded(m.group())
        if inner is not None and not (_is_jwt(text) and not m.group().startswith("eyJ")):
            found.append((m, *inner))
    return found


def _rebuilt(text: str, rng: random.Random) -> str:
    urlsafe = _is_jwt(text)  # a JWT's parts are base64url, anything else the standard alphabet
    out, pos = [], 0
    for m, offset, plain in _texts(text):
        start = m.start() + offset
        out.append(_refilled(text[pos:start], rng))
        out.append(_encode(_rebuilt_text(plain, rng), m.group(), urlsafe=urlsafe))
        pos = m.end()
    out.append(_refilled(text[pos:], rng))
    return "".join(out)


def encoded_texts(value: str) -> list[str]:
    """Every text the value encodes in base64, at any depth."""
    found = []
    for _, _, plain in _texts(value):
        found.append(plain)
        found.extend(encoded_texts(plain))
    return found


def _fixed(fmt: TokenFormat, example: str) -> int:
    """Length of the example's prefix and fixed path (a webhook's `services/`), kept as is."""
    if not fmt.prefix and not fmt.head:
        return 0
    m = re.match(re.escape(fmt.prefix) + fmt.head, example)
    assert m is not None, example
    return m.end()


def _named(fmt: TokenFormat, example: str, fixed: int) -> set[int]:
    """Positions of the runs after the prefix that are words the format's regex names, with
    the digits after them (`proj` of `sk-proj-`, `auth` of `tskey-auth-`, `api03`): the regex
    would let them vary, but a platform issues them as they are."""
    literal = re.sub(r"\\.|\[[^]]*\]|\{[^}]*\}", " ", fmt.body)  # drop escapes, classes, counts
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]+", literal))
    named: set[int] = set()
    for m in re.finditer(r"([A-Za-z]+)[0-9]*", example[fixed:]):
        start = m.start() + fixed
        at_run_start = start == fixed or not example[start - 1].isalnum()
        if at_run_start and m.group(1) in words:
            named.update(range(start, m.end() + fixed))
    return named


# Parts every real token of a platform carries that the catalogue's regex lets vary (it
# matches looser than the platforms issue): kept, so that a scanner that requires them sees
# them. OpenAI's `T3BlbkFJ` (base64 "OpenAI", in gitleaks' openai-api-key) and Groq's
# `WGdyb3FY` ("Groq"), Entra ID client secrets' `8Q~`, Telegram bot tokens' `:AA`,
# Atlassian's `xFfGF0`/`xFfGN0` after ATATT3/ATCTT3, Sentry's `sntrys_`/`sntryu_`, Square's
# application secrets' `sq0csp-`.
_MARKERS = (
    "T3BlbkFJ", "WGdyb3FY", "8Q~", ":AA", "xFfGF0", "xFfGN0", "sntrys_", "sntryu_", "sq0csp-"
)  # fmt: skip


def _markers(example: str) -> set[int]:
    return {
        i
        for marker in _MARKERS
        for m in re.finditer(re.escape(marker), example)
        for i in range(m.start(), m.end())
    }


def _shaped_once(fmt: TokenFormat, example: str, rng: random.Random) -> str:
    fixed = _fixed(fmt, example)
    chars = list(example)
    done = set(range(fixed)) | _named(fmt, example, fixed) | _markers(example)
    # Base64 of text is rebuilt as text (a JWT's JSON parts, a docker config), the bytes the
    # prefix encodes kept, so that a scanner that decodes still finds JSON or a PEM header.
    for m, offset, plain in _texts(example):
        start = m.start() + offset
        keep = math.ceil(max(0, fixed - start) * 3 / 4)
        new = _rebuilt_text(plain, rng)
        if not new.startswith(plain[:keep]):
            new = plain[:keep] + _rebuilt(plain[keep:], rng)
        for urlsafe in (False, True):
            encoded = _encode(new, m.group(), urlsafe=urlsafe)
            trial = [*chars[:start], *encoded, *chars[m.end() :]]
            if fmt.pattern.fullmatch("".join(trial)):
                chars = trial
                break
        done.update(range(start, m.end()))
    # Then every other letter and digit, in turn, is drawn anew (see _pools) while the value
    # stays a match of the format: its literal parts (`AgEIcHlwaS5vcmc`, `Q~`) stay, and a
    # narrower class (hex, bech32) is kept by the regex itself.
    for i, (c, pool) in enumerate(zip(example, _pools(example), strict=True)):
        if i in done or not pool:
            continue
        for _ in range(24):
            chars[i] = rng.choice(pool)
            if fmt.pattern.fullmatch("".join(chars)):
                break
            chars[i] = c
    return "".join(chars)


# Real tokens of some formats carry a checksum, and a scanner that checks it drops a value
# without one by design: the value gets one as its platform computes it.
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, digit = divmod(n, 62)
        out = _BASE62[digit] + out
    return out.rjust(width, "0")


def _crc32_base62(value: str, rng: random.Random) -> str:
    """GitHub and npm: the last six characters are a CRC32 of the random part, in base62
    (github.blog, "Behind GitHub's new authentication token formats"; npm's announcement of its
    token format; the digit order is the one CredSweeper's ValueGitHubCheck decodes)."""
    random_part = value[4:-6]
    return value[:4] + random_part + _base62(binascii.crc32(random_part.encode()), 6)


def _bech32_polymod(values: list[int]) -> int:
    # BIP 173's checksum: a BCH code over GF(32), its generator as the BIP states it.
    generator = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    check = 1
    for v in values:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            check ^= generator[i] if (top >> i) & 1 else 0
    return check


def _age_key(value: str, rng: random.Random) -> str:
    """age: Bech32 of 32 random bytes, its human-readable part `age-secret-key-`, upper case
    (age-encryption.org/v1)."""
    bits = "".join(f"{b:08b}" for b in rng.randbytes(32)).ljust(260, "0")
    data = [int(bits[i : i + 5], 2) for i in range(0, 260, 5)]
    hrp = "age-secret-key-"
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    polymod = _bech32_polymod(expanded + data + [0] * 6) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return (hrp + "1" + "".join(_BECH32[d] for d in data + checksum)).upper()


def _grafana_service(value: str, rng: random.Random) -> str:
    """Grafana service account: the last eight hex digits are a CRC32 of what precedes the
    underscore, little-endian (from CredSweeper's ValueGrafanaServiceCheck, not Grafana's
    docs)."""
    head = value[:-9]
    return head + "_" + struct.pack("<I", binascii.crc32(head.encode())).hex()


def _atlassian(value: str, rng: random.Random) -> str:
    """Atlassian API token: `ATATT3xFfGF0`, the payload, `=` and a CRC32 of all before it in
    hex (from the gitleaks and CredSweeper rules, not Atlassian's docs)."""
    head = "ATATT3xFfGF0" + value[12:-8]
    return head + crc32(head)


_SEALS: dict[str, Callable[[str, random.Random], str]] = {
    **dict.fromkeys(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_"), _crc32_base62),
    "AGE-SECRET-KEY-1": _age_key,
    "glsa_": _grafana_service,
    "ATATT3": _atlassian,
}


def _sealed(value: str, rng: random.Random) -> str:
    seal = next((f for prefix, f in _SEALS.items() if value.startswith(prefix)), None)
    return seal(value, rng) if seal else value


def shaped_value(fmt: TokenFormat, example: str, rng: random.Random) -> str:
    """A value of the example's shape with new random letters and digits: a match of the format
    that passes its check, with no word scanners skip in it or in any text it encodes."""
    # Test-mode keys (Stripe's `sk_test_`, Flutterwave's `FLWSECK_TEST-`) are skipped by
    # design; a live key has the same shape.
    example = example.replace("_test_", "_live_").replace("FLWSECK_TEST-", "FLWSECK-")
    for _ in range(_TRIES):
        value = _sealed(_shaped_once(fmt, example, rng), rng)
        if (
            value != example
            and fmt.pattern.fullmatch(value)
            and (fmt.check is None or fmt.check(value))
            and not any(skipped_words(t) for t in (value, *encoded_texts(value)))
        ):
            return value
    raise ValueError(f"no value of {fmt.kind}'s shape from {example!r}")


def _pem_block(header: str, rng: random.Random) -> tuple[str, list[str]]:
    """(the block, its body lines): the body is base64 of a DER structure of random bytes."""
    while True:
        der = b"\x30\x82\x04\xa4" + rng.randbytes(1188)
        body = base64.b64encode(der).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        if not skipped_words(body):
            footer = header.replace("BEGIN", "END")
            return "\n".join([header, *lines, footer]), lines


# ---------------------------------------------------------------------------- cases
CONTEXTS = ("log", "env", "yaml", "json")


@dataclass(frozen=True)
class Case:
    label: str  # group/kind/context
    kind: str  # "keep" for a case without a secret
    text: str
    secrets: tuple[str, ...]  # every one must be gone from tf-collect's output
    suffix: str = ".txt"

    @property
    def group(self) -> str:
        return "keep" if self.kind == "keep" else self.label.split("/")[0]


def _in_context(context: str, value: str) -> tuple[str, str]:
    """(file text, suffix) with the value under a name that says nothing about it."""
    name, big, _ = bench.NEUTRAL
    if context == "log":
        return (
            "2025-03-01T09:10:04Z INFO controller: reconcile started\n"
            f"2025-03-01T09:10:05Z INFO controller: applied {value} to the pool\n"
            "2025-03-01T09:10:05Z INFO controller: reconcile done in 12ms\n",
            ".log",
        )
    if context == "env":  # a multi-line value is written quoted, its newlines escaped
        shown = json.dumps(value) if "\n" in value else value
        return f"REGION=us-east-1\n{big}={shown}\nREPLICAS=3\n", ".env"
    if context == "yaml":  # a multi-line value is a block scalar
        lines = value.split("\n")
        shown = "|" + "".join(f"\n    {line}" for line in lines) if len(lines) > 1 else value
        return f"spec:\n  region: us-east-1\n  {name}: {shown}\n  replicas: 3\n", ".yaml"
    document = {"region": "us-east-1", name: value, "replicas": 3}
    return json.dumps(document, indent=2) + "\n", ".json"


def _as_written(fmt: TokenFormat, value: str) -> str:
    """A webhook is written as its URL (scanners' rules for them start at the scheme); Teams
    serves its webhooks from a tenant's subdomain."""
    if not fmt.head:
        return value
    return "https://" + ("contoso." if value.startswith("webhook.") else "") + value


def catalogue_cases(seed: int = 29) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for fmt in STANDALONE:
        for example in fmt.examples:
            for context in CONTEXTS:
                if fmt is PEM:
                    value, secrets = _pem_block(example, rng)
                else:
                    value = shaped_value(fmt, example, rng)
                    secrets = [value[_fixed(fmt, value) :] if fmt.head else value]
                text, suffix = _in_context(context, _as_written(fmt, value))
                cases.append(
                    Case(f"catalogue/{fmt.kind}/{context}", fmt.kind, text, tuple(secrets), suffix)
                )
    return cases


def heldout_cases() -> list[Case]:
    return [
        Case(f"heldout/{c.syntax}", c.kind, c.text, tuple(c.text[a:b] for a, b in c.spans), ".txt")
        for c in bench.heldout_cases()
    ]


# ---------------------------------------------------------------------------- tools
@dataclass(frozen=True)
class Tool:
    name: str
    command: Callable[[Path, Path], list[str]]  # (input dir, scratch dir) -> argv
    flagged: Callable[[Path, Path, list[Case]], set[int]]  # which cases it found


def _detect_secrets_flagged(root: Path, scratch: Path, cases: list[Case]) -> set[int]:
    report = json.loads((scratch / "stdout.json").read_text())
    names = {Path(name).name for name in report["results"]}
    return {i for i in range(len(cases)) if _case_name(i, cases[i]) in names}


def _credsweeper_flagged(root: Path, scratch: Path, cases: list[Case]) -> set[int]:
    found = json.loads((scratch / "credsweeper.json").read_text())
    names = {Path(line["path"]).name for item in found for line in item["line_data_list"]}
    return {i for i in range(len(cases)) if _case_name(i, cases[i]) in names}


def _tf_collect_flagged(root: Path, scratch: Path, cases: list[Case]) -> set[int]:
    out = scratch / "redacted"
    flagged = set()
    for i, case in enumerate(cases):
        text = (out / _case_name(i, case)).read_text()
        if case.kind == "keep":
            if text != case.text:
                flagged.add(i)
        elif all(secret not in text for secret in case.secrets):
            flagged.add(i)
    return flagged


def _tools(scanner_bin: Path | None) -> list[Tool]:
    here = str(Path(sys.executable).parent)
    tf = shutil.which("tf-collect", path=here) or "tf-collect"

    def scanner(name: str) -> str | None:
        return shutil.which(name, path=str(scanner_bin)) if scanner_bin else shutil.which(name)

    tools = [
        Tool(
            "tf-collect redact",
            lambda root, scratch: [
                tf,
                "redact",
                str(root),
                "-o",
                str(scratch / "redacted"),
                "--workers",
                "1",
            ],
            _tf_collect_flagged,
        )
    ]
    if exe := scanner("detect-secrets"):
        tools.append(
            Tool(
                "detect-secrets",
                lambda root, scratch: [exe, "-c", "1", "scan", "--all-files", str(root)],
                _detect_secrets_flagged,
            )
        )
    else:
        print("detect-secrets: not installed (pip install detect-secrets)")
    if cs := scanner("credsweeper"):
        tools.append(
            Tool(
                "credsweeper",
                lambda root, scratch: [
                    cs,
                    "--path",
                    str(root),
                    "--save-json",
                    str(scratch / "credsweeper.json"),
                    "--jobs",
                    "1",
                    "--ml_threads_limit",
                    "1",
                ],
                _credsweeper_flagged,
            )
        )
    else:
        print("credsweeper: not installed (pip install credsweeper)")
    return tools


_PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def _run(tool: Tool, root: Path, scratch: Path) -> float:
    """Seconds of one run of the tool on the directory, its output left in `scratch`."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*_PIN, *tool.command(root, scratch)], capture_output=True, text=True, cwd=root
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{tool.name} failed: {proc.stderr[-2000:]}")
    (scratch / "stdout.json").write_text(proc.stdout)
    return seconds


def _case_name(i: int, case: Case) -> str:
    return f"case{i:03d}{case.suffix}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=5.0, help="corpus size in MB (default 5)")
    ap.add_argument("--runs", type=int, default=3, help="speed is the best of N runs (default 3)")
    ap.add_argument("--scanner-bin", type=Path, help="directory holding the scanners' commands")
    ap.add_argument(
        "--show-misses", type=int, default=0, metavar="N", help="list N misses per tool"
    )
    args = ap.parse_args()
    cases = catalogue_cases() + heldout_cases()
    heldout = [c for c in cases if c.group == "heldout"]
    marked = [c for c in heldout if any(skipped_words(s) for s in c.secrets)]
    words = sorted({w for c in marked for s in c.secrets for w in skipped_words(s)})
    held = (
        f"{len(marked)} of {len(heldout)} secrets hold a word scanners skip ({', '.join(words)})"
        if marked
        else f"{len(heldout)} cases, no secret holding a word scanners skip"
    )
    print(
        f"catalogue: {sum(c.group == 'catalogue' for c in cases)} cases, {len(STANDALONE)} formats "
        f"in {len(CONTEXTS)} contexts, random values of each example's shape; held-out: {held}"
    )
    for case in marked[: args.show_misses]:
        print(f"   held-out {case.label}: {next(s for s in case.secrets if skipped_words(s))}")
    pinned = "pinned to one core (taskset -c 0)" if _PIN else "one process each (no taskset)"
    print(f"every tool {pinned}: tf-collect --workers 1, detect-secrets -c 1, credsweeper --jobs 1")
    corpus = bench.build_corpus(int(args.mb * 1e6))
    with tempfile.TemporaryDirectory() as tmp:
        root, big = Path(tmp) / "cases", Path(tmp) / "corpus"
        root.mkdir()
        for i, case in enumerate(cases):
            (root / _case_name(i, case)).write_text(case.text)
        bench.write_files(corpus, big)
        for tool in _tools(args.scanner_bin):
            scratch = Path(tmp) / "out"
            _run(tool, root, scratch)
            flagged = tool.flagged(root, scratch, cases)
            rows = {"catalogue": [0, 0], "heldout": [0, 0], "keep": [0, 0]}
            for i, case in enumerate(cases):
                rows[case.group][0] += i in flagged
                rows[case.group][1] += 1
            best = min(_run(tool, big, scratch) for _ in range(args.runs))
            mb = corpus.size / 1e6
            print(
                f"{tool.name}: catalogue {rows['catalogue'][0]}/{rows['catalogue'][1]}, "
                f"held-out {rows['heldout'][0]}/{rows['heldout'][1]}, "
                f"false alarms on keep {rows['keep'][0]}/{rows['keep'][1]}, "
                f"{mb:.1f} MB at {mb / best:.2f} MB/s (best of {args.runs}, one core)"
            )
            contexts = {x: [0, 0] for x in CONTEXTS}
            for i, case in enumerate(cases):
                if case.group == "catalogue":
                    cell = contexts[case.label.rsplit("/", 1)[1]]
                    cell[0] += i in flagged
                    cell[1] += 1
            kinds = {c.kind for c in cases if c.group == "catalogue"}
            found = {c.kind for i, c in enumerate(cases) if c.group == "catalogue" and i in flagged}
            print(
                "   catalogue by context: "
                + ", ".join(f"{x} {f}/{t}" for x, (f, t) in contexts.items())
                + f"; kinds found in some context: {len(found)}/{len(kinds)}"
            )
            # One miss per kind, so that the list names as many formats as it can.
            missed = {
                f"{c.group}/{c.kind}": c
                for i, c in reversed(list(enumerate(cases)))
                if c.group != "keep" and i not in flagged
            }
            for label in sorted(missed)[: args.show_misses]:
                case = missed[label]
                print(f"   MISSED {case.label}: {case.secrets[0][:60]}")


if __name__ == "__main__":
    main()
