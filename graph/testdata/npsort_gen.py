#!/usr/bin/python3
"""Writes npsort.json: keys with many ties and numpy's argsort(kind="quicksort") permutation of each, the
golden output of TestArgsortQuickMatchesNumpy. Made with Debian 12's numpy 1.24.2, the numpy of the
workplace's HTA reference: python3 npsort_gen.py > npsort.json"""
import json
import random

import numpy as np

random.seed(20261123)
cases = []
for n in (16, 17, 18, 33, 100, 1000):
    for k in (2, 5, 50, 1000):
        keys = [random.randint(0, k) for _ in range(n)]
        for shape in ("random", "sorted", "reversed", "runs"):
            v = list(keys)
            if shape == "sorted":
                v.sort()
            elif shape == "reversed":
                v.sort(reverse=True)
            elif shape == "runs":
                v = sorted(v)
                for i in range(0, n, 37):
                    v[i : i + 9] = reversed(v[i : i + 9])
            perm = np.argsort(np.array(v, dtype=np.int64), kind="quicksort").tolist()
            cases.append(dict(keys=v, perm=perm))
print(json.dumps(dict(numpy=np.__version__, cases=cases), separators=(",", ":")))
