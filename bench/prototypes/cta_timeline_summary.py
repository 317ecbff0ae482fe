#!/usr/bin/env python3
"""Summary of CTA timelines written by bench/prototypes/cta_timeline.cu: CTAs, the launch's end, CTA lives (median,
10th and 90th percentiles), the first wave's ends, the last CTA's start, the mean CTAs running in each twentieth of
the launch, and CTA lives by start time.   usage: python3 bench/prototypes/cta_timeline_summary.py FILE.csv ..."""
import csv
import sys

for path in sys.argv[1:]:
    ctas = [(int(r['start_ns']), int(r['end_ns'])) for r in csv.DictReader(open(path))]
    n, end = len(ctas), max(e for _, e in ctas)
    lives = sorted(e - s for s, e in ctas)
    first_wave = sorted(e for s, e in ctas if s < 2000)
    last_start = max(s for s, _ in ctas)
    print(f"{path}: {n} CTAs, end {end / 1e3:.1f} us; lives median {lives[n // 2] / 1e3:.1f} us, "
          f"10 % {lives[n // 10] / 1e3:.1f}, 90 % {lives[9 * n // 10] / 1e3:.1f}")
    print(f"  first wave (started in 2 us): {len(first_wave)} CTAs, ended {first_wave[0] / 1e3:.1f} .. "
          f"{first_wave[-1] / 1e3:.1f} us; last start {last_start / 1e3:.1f} us, {(end - last_start) / 1e3:.1f} us "
          f"before the end")
    width = end / 20
    running = [sum(max(0, min(e, (i + 1) * width) - max(s, i * width)) for s, e in ctas) / width for i in range(20)]
    print("  CTAs running, mean over each twentieth:", " ".join(f"{x:.0f}" for x in running))
    step = end / 14
    for i in range(14):
        started = sorted(e - s for s, e in ctas if i * step <= s < (i + 1) * step)
        if started:
            print(f"  started {i * step / 1e3:6.1f} us: {len(started):5d} CTAs, lives median "
                  f"{started[len(started) // 2] / 1e3:5.1f} us, {started[0] / 1e3:5.1f} .. {started[-1] / 1e3:5.1f}")
