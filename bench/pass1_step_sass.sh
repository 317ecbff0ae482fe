#!/usr/bin/env bash
# Machine instructions of one step of pass 1's staged loop, counted in SASS without a GPU:
#   bash bench/pass1_step_sass.sh HEADER.cuh [HEADER.cuh ...]
# Each HEADER is a kernel's ahead-of-time header (build/tools/bfly-gen/bfly-gen generate --K K --type T -o H.cuh).
# It is compiled for sm_90 (nvcc -O3 -cubin), disassembled (cuobjdump -sass: $CUOBJDUMP, else the one on PATH; the
# toolkit here has none, Triton's pip package carries one), and the innermost loop that holds both the ring's copies
# (LDGSTS) and its loads (LDS) is counted: instructions from the loop's head to its backward branch, both sides of
# any branch inside it, and the registers ptxas reports. One line a header.
set -euo pipefail
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[[ -x "$cuobjdump" ]] || { echo "no cuobjdump: set CUOBJDUMP (pip install triton carries one)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for header in "$@"; do
  printf '#include "%s"\n' "$(realpath "$header")" > "$work/k.cu"
  registers=$(nvcc -arch=sm_90 -O3 -cubin -Xptxas -v -o "$work/k.cubin" "$work/k.cu" 2>&1 |
              grep -o 'Used [0-9]* registers' | head -1)
  "$cuobjdump" -sass "$work/k.cubin" > "$work/k.sass"
  python3 - "$work/k.sass" "$(basename "$header")" "$registers" <<'PY'
import collections, re, sys
path, name, registers = sys.argv[1:]
code = []
for line in open(path):
    m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?);', line)
    if m: code.append((int(m.group(1), 16), m.group(2).strip()))
loop = None
for address, text in code:
    m = re.search(r'BRA (0x[0-9a-f]+)', text)
    if m and int(m.group(1), 16) < address:
        body = [t for a, t in code if int(m.group(1), 16) <= a <= address]
        if any('LDGSTS' in t for t in body) and any(re.search(r'\bLDS\b', t) for t in body):
            if loop is None or len(body) < len(loop): loop = body
if loop is None:
    print(f'{name}: {registers}; no staged loop'); sys.exit()
ops = collections.Counter(re.sub(r'^@!?U?P[T0-9]+\s+', '', t).split()[0].split('.')[0] for t in loop)
print(f'{name}: {registers}; pass 1 step {len(loop)} instructions:', ' '.join(f'{k} {v}' for k, v in ops.most_common(10)))
PY
done
