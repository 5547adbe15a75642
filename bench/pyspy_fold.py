"""Inclusive and own sample counts per function from a py-spy raw (collapsed-stack) profile.

    py-spy record -r 200 -f raw -o prof.raw -- python bench/cost11_cpu.py <task> <version> <dtype> --repeats 5
    python bench/pyspy_fold.py prof.raw [--under evaluate] [--top 40] [--lines]

Only stacks that pass through a frame whose function name is ``--under`` (default ``evaluate``, the
harness's job entry, kernelsynth.jobs.evaluate) are counted; each function (``--lines``: each line) is counted once
per stack for the inclusive column. Used for references/VERIFICATION.md ("Cost per candidate"): unlike
cProfile it sees the census's windows (the census sets its own ``sys.setprofile`` hook there).
"""

import collections
import sys


def _function(frame):
    """``name (file:line)`` -> ``name (file)``."""
    head, _, rest = frame.partition(" (")
    return f"{head} ({rest.rsplit(':', 1)[0]})" if rest else head


def fold(path, under="evaluate", lines=False):
    incl, own, total = collections.Counter(), collections.Counter(), 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        names = [f.split(" (")[0] for f in frames]
        if under not in names:
            continue
        n = int(n)
        total += n
        frames = frames[names.index(under):]
        if not lines:
            frames = [_function(f) for f in frames]
        for f in dict.fromkeys(frames):
            incl[f] += n
        own[frames[-1]] += n
    return incl, own, total


def main(argv):
    path = argv[0]
    under = argv[argv.index("--under") + 1] if "--under" in argv else "evaluate"
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 40
    incl, own, total = fold(path, under, lines="--lines" in argv)
    print(f"{total} samples under {under}")
    for title, c in (("inclusive", incl), ("own", own)):
        print(f"== {title}")
        for f, n in c.most_common(top):
            print(f"{n:7d} {100.0 * n / max(total, 1):5.1f}%  {f[:150]}")


if __name__ == "__main__":
    main(sys.argv[1:])
