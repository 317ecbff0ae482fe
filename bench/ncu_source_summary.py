#!/usr/bin/env python3
"""Where the warps of one kernel wait: a summary of bench/ncu_source.sh's CSVs (ncu --page source, SASS).

usage: python3 bench/ncu_source_summary.py FILE.csv[.gz] [FILE.csv[.gz] ...] [--top N]

For each file: the warp-state samples of the whole kernel by stall reason, then those of pass 1's staged loop (the
smallest loop that holds both the ring's copies, LDGSTS, and its loads, LDS: one step of bench/pass1_step_sass.sh) and
of everything else, and the N instructions with the most samples (address offset, the instruction, its samples and its
two largest reasons). A sample is one warp's state at one moment: the shares say where the warps spend their time.
"""
import csv
import gzip
import re
import sys
from collections import Counter


def read(path):
    with (gzip.open(path, 'rt', newline='') if path.endswith('.gz') else open(path, newline='')) as f:
        rows = list(csv.reader(f))
    kernel = rows[0][1] if rows and rows[0] and rows[0][0] == 'Kernel Name' else '?'
    header = next(r for r in rows if r and r[0] == 'Address')
    start = rows.index(header) + 1
    out = []
    for r in rows[start:]:
        if len(r) != len(header):
            continue
        d = dict(zip(header, r))
        d['address'] = d['offset'] = int(d['Address'], 16)
        out.append(d)
    base = min(d['offset'] for d in out)
    for d in out:
        d['offset'] -= base
    return kernel, header, out


def number(text):
    try:
        return float(text.replace(',', ''))
    except ValueError:
        return 0.0


def staged_loop(code):
    """The smallest backward-branch loop that holds both LDGSTS and LDS: (first, last) indices, or None."""
    best = None
    for i, d in enumerate(code):
        m = re.search(r'BRA\s+(?:!?U?P[T0-9], )?(0x[0-9a-f]+)', d['Source'])
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= d['address']:
            continue
        first = next((j for j, e in enumerate(code) if e['address'] >= target), None)
        if first is None:
            continue
        body = [e['Source'] for e in code[first:i + 1]]
        if any('LDGSTS' in s for s in body) and any(re.search(r'\bLDS\b', s) for s in body):
            if best is None or i - first < best[1] - best[0]:
                best = (first, i)
    return best


def reasons(header):
    return [h for h in header if h.startswith('stall_') and not h.endswith('(Not Issued)')]


def summary(path, top):
    kernel, header, code = read(path)
    names = reasons(header)
    loop = staged_loop(code)
    total = Counter()
    inside = Counter()
    for i, d in enumerate(code):
        for n in names:
            v = number(d[n])
            total[n] += v
            if loop and loop[0] <= i <= loop[1]:
                inside[n] += v
    all_samples = sum(total.values()) or 1.0
    print(f'{path}\n  kernel {kernel}: {int(all_samples)} samples, {len(code)} SASS instructions')

    def line(label, counter):
        s = sum(counter.values())
        parts = ', '.join(f'{n[6:]} {100 * v / s:.0f}%' for n, v in counter.most_common(7) if v > 0)
        print(f'  {label}: {100 * s / all_samples:.0f}% of the samples; {parts}')

    line('whole kernel', total)
    if loop:
        executed = number(code[loop[0]]['Instructions Executed'])
        print(f'  pass 1 step: instructions {code[loop[0]]["offset"]:#x}-{code[loop[1]]["offset"]:#x} '
              f'({loop[1] - loop[0] + 1}), head executed {int(executed)} times')
        line('pass 1 step', inside)
        line('the rest', total - inside)
    ranked = sorted(range(len(code)), key=lambda i: -number(code[i]['Warp Stall Sampling (All Samples)']))
    print(f'  top {top} instructions by samples:')
    for i in ranked[:top]:
        d = code[i]
        s = number(d['Warp Stall Sampling (All Samples)'])
        why = Counter({n[6:]: number(d[n]) for n in names}).most_common(2)
        where = 'step' if loop and loop[0] <= i <= loop[1] else 'rest'
        print(f'    {d["offset"]:#7x} {where} {100 * s / all_samples:5.1f}%  {d["Source"].strip()[:60]:60s} '
              + ', '.join(f'{n} {int(v)}' for n, v in why if v))


def main(argv):
    top = 15
    paths = []
    args = iter(argv)
    for a in args:
        if a == '--top':
            top = int(next(args))
        else:
            paths.append(a)
    for p in paths:
        summary(p, top)


if __name__ == '__main__':
    main(sys.argv[1:])
