#!/usr/bin/python3
"""Writes pysort.json: lists sorted by CPython's own list.sort with a comparator that is consistent across keys but
not among equal keys (as HTA's call-stack comparator is not where zero-length and nonzero events meet), and the
order sorted() returned, the golden output of TestPySortMatchesCPython. Made with Debian 12's Python 3.11.2, the
Python of the workplace's HTA reference: python3 pysort_gen.py > pysort.json"""
import json
import random
import sys
from functools import cmp_to_key

random.seed(20261124)


def wild(x, y):
    return ((x * 2654435761 + y * 40503) >> 7) % 3 == 0


cases = []
for n in (2, 3, 10, 63, 64, 65, 100, 257, 1000, 3000):
    for k in (1, 3, 40, 100000):
        keys = [random.randint(0, k) for _ in range(n)]
        for shape in ("random", "sorted", "runs"):
            v = list(keys)
            if shape == "sorted":
                v.sort()
            elif shape == "runs":
                v = sorted(v)
                for i in range(0, n, 97):
                    v[i : i + 40] = reversed(v[i : i + 40])
            for mode in ("stable", "wild"):

                def lt(x, y):
                    if v[x] != v[y]:
                        return v[x] < v[y]
                    return mode == "wild" and wild(x, y)

                order = sorted(range(n), key=cmp_to_key(lambda x, y: -1 if lt(x, y) else 1))
                cases.append(dict(keys=v, wild=mode == "wild", order=order))
print(json.dumps(dict(python=sys.version.split()[0], cases=cases), separators=(",", ":")))
