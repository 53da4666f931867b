#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Count test results across meson test logs.

A Criterion binary is one meson test but many test cases: its closing
"Synthesis:" line gives the real counts. Any other meson test counts as one.
Prints one line per log and, last, the overall "N passed, N failed, N skipped".
Exit status 1 if anything failed.
"""
import json
import re
import sys

SYNTH = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")


def count(log_path):
    passed = failed = skipped = 0
    failures = []
    with open(log_path) as f:
        for line in f:
            t = json.loads(line)
            out = (t.get("stdout") or "") + (t.get("stderr") or "")
            m = SYNTH.findall(out)
            result = t["result"]
            if result == "SKIP":
                skipped += 1
                continue
            if m:
                tested, passing, failing, crashing = map(int, m[-1])
                passed += passing
                failed += failing + crashing
                # A crash or timeout before the synthesis line still fails the binary.
                if result not in ("OK", "EXPECTEDFAIL") and failing + crashing == 0:
                    failed += 1
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            else:
                failed += 1
            if result not in ("OK", "EXPECTEDFAIL"):
                failures.append(t["name"])
    return passed, failed, skipped, failures


def main():
    total = [0, 0, 0]
    for spec in sys.argv[1:]:
        label, path = spec.split("=", 1)
        p, f, s, names = count(path)
        total[0] += p
        total[1] += f
        total[2] += s
        extra = f" (failed: {', '.join(names)})" if names else ""
        print(f"  {label}: {p} passed, {f} failed, {s} skipped{extra}")
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
