#!/usr/bin/env python3
"""Checks that the hash snippet in tools/plumb-cal/CALIBRATION-FILE.md computes Plumb's hash.

The snippet is taken from the document as it stands (the ```python block under "Canonical JSON
and the hash") and run, unchanged but for the file name, on calibration files Plumb signed:
the fuzz corpus's files, and the same files written the ways a person edits them — whole
numbers with a fraction (`25.0`), trailing zeros (`31.50`), an exponent (`1.0e-5`), a label with
control characters, quotes and non-ASCII, keys reordered and re-indented. Each file is signed
with `plumb-cal sign`, rewritten in the person's form (same values), checked with
`plumb-cal check` (Plumb must still accept it: same values, same hash), and the snippet's
hash compared with the file's `contentHash`. Exit 1 on any difference.

    python3 tools/scripts/check_calibration_hash.py --plumb-cal .build/debug/plumb-cal
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DOCUMENT = "tools/plumb-cal/CALIBRATION-FILE.md"
FIXTURES = [
    "Tests/Fuzz/corpus/calibration-file/minimal.json",
    "Tests/Fuzz/corpus/calibration-file/full.json",
    "Tests/Fuzz/corpus/calibration-file/matrix-live.json",
]


def snippet(document):
    text = open(document, encoding="utf-8").read()
    section = text.split("## Canonical JSON and the hash", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    if not match:
        sys.exit(f"check_calibration_hash: no python block under the hash section of {document}")
    return match.group(1)


def as_a_person_writes(text):
    """The same values as a person might write them: whole numbers with a fraction, trailing
    zeros, exponents, keys in another order, another indentation."""

    def number(m):
        token = m.group(0)
        value = float(token)
        if value.is_integer() and "e" not in token.lower():
            return token + ".0" if "." not in token else token + "0"
        if "e" in token.lower():
            mantissa, exponent = token.lower().split("e")
            if "." not in mantissa:
                mantissa += ".0"
            return f"{mantissa}E{exponent}"
        return token + "0"

    # Numbers outside strings only (the file's strings hold no digits that look like these in
    # a value position: ids and dates are strings and are skipped by the lookbehind).
    text = re.sub(r'(?<=[\[\s:,])-?\d+(\.\d+)?([eE][-+]?\d+)?(?=[\s,\]}])', number, text)
    doc = json.loads(text)
    ordered = dict(reversed(list(doc.items())))
    rewritten = json.dumps(ordered, indent=4, ensure_ascii=False)
    # json.dumps writes floats its own way: put the person's number forms back by rewriting
    # the re-indented text's numbers again.
    return re.sub(r'(?<=[\[\s:,])-?\d+(\.\d+)?([eE][-+]?\d+)?(?=[\s,\]}])', number, rewritten)


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plumb-cal", required=True)
    arguments = parser.parse_args()
    code = snippet(DOCUMENT)
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as directory:
        for fixture in FIXTURES:
            for variant in ("as signed", "as a person writes it"):
                path = os.path.join(directory, "unit-3.json")
                doc = json.load(open(fixture, encoding="utf-8"))
                doc["sensor"]["label"] = 'bench "3"\tÄ\u00e9\u263a\U0001F600 \b\f\u0001 \\ /'
                doc.get("gyroscope", {})["referenceTemperatureCelsius"] = 25.0
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f, indent=2, ensure_ascii=False)
                signed = run([arguments.plumb_cal, "sign", path])
                if signed.returncode != 0:
                    print(f"{fixture}: plumb-cal sign failed: {signed.stderr.strip()}")
                    failures += 1
                    continue
                if variant != "as signed":
                    text = open(path, encoding="utf-8").read()
                    open(path, "w", encoding="utf-8").write(as_a_person_writes(text))
                check = run([arguments.plumb_cal, "check", path])
                if check.returncode != 0:
                    print(f"{fixture} ({variant}): plumb-cal check refused it: {check.stderr.strip()}")
                    failures += 1
                    continue
                expected = json.load(open(path, encoding="utf-8"))["contentHash"]
                result = subprocess.run(
                    [sys.executable, "-c", code], cwd=directory, capture_output=True, text=True)
                got = result.stdout.strip()
                checked += 1
                if result.returncode != 0 or got != expected:
                    print(f"{fixture} ({variant}): the snippet gives {got or result.stderr.strip()}, "
                          f"Plumb {expected}")
                    failures += 1
                shutil.copy(path, os.path.join(directory, f"last-{checked}.json"))
    if failures:
        print(f"check_calibration_hash: {failures} of {checked + failures} files disagree")
        return 1
    print(f"check_calibration_hash: the document's snippet gives Plumb's hash for all {checked} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
